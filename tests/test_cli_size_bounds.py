"""One bound rule for kvtop's size flags: every GPU-memory size is at most 1 TiB, said in the unit typed (as the
launch's own `--kv-cache-memory-bytes` bound says it), and --weights-memory must be more than 0. Before, `--gpu-memory
5PiB` planned a 5,242,880.00 GiB GPU and `--weights-memory 0` planned 0.00 GiB of weights, while `--gpu-memory 0` was
refused. 1 TiB = 2^40 bytes = 1,024 GiB = 1,099.51 GB (1,099,511,627,776 / 10^9)."""

from __future__ import annotations

import pytest

from kvtop.cli import main
from tests.conftest import CONFIGS

LLAMA = str(CONFIGS / "meta-llama--Meta-Llama-3-70B.json")


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--gpu-memory", "5PiB"], "--gpu-memory: must be at most 1 TiB (got 5,120 TiB)"),
        (["--free-memory", "1025GiB"], "--free-memory: must be at most 1,024 GiB (got 1,025 GiB)"),
        (["--non-kv-memory", "1200GB"], "--non-kv-memory: must be at most 1,099.51 GB (got 1,200 GB)"),
        (["--weights-memory", "2TiB"], "--weights-memory: must be at most 1 TiB (got 2 TiB)"),
        (["--free-after-load", "2TiB"], "--free-after-load: must be at most 1 TiB (got 2 TiB)"),
        (["--weights-memory", "0"], "--weights-memory: must be more than 0 (got 0)"),
        (["--weights-memory", "0GiB"], "--weights-memory: must be more than 0 (got 0GiB)"),
    ],
)
def test_a_size_outside_the_bounds_is_refused(capsys: pytest.CaptureFixture[str], flags: list[str], message: str) -> None:
    assert main(["plan", "--model", LLAMA, "--tp", "8", *flags]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(f"kvtop: error: {message}") and err.count("\n") == 1


def test_the_bound_itself_and_a_measured_zero_are_planned(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--model", LLAMA, "--tp", "8", "--gpu-memory", "1TiB"]) == 0
    assert "TP8 on 8× GPU (1,024.00 GiB, --gpu-memory)" in capsys.readouterr().out.splitlines()[0]
    assert main(["plan", "--model", LLAMA, "--tp", "8", "--non-kv-memory", "0"]) == 0  # nothing besides the weights
    capsys.readouterr()
