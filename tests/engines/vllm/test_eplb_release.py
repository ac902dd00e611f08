"""`--enable-eplb` is refused at a release that lacks it, as vLLM's argparse would ('unrecognized arguments').

vLLM's wheels: engine/arg_utils.py at v0.9.2 adds `--enable-eplb` (:687-688, ParallelConfig.enable_eplb, a bool field
given BooleanOptionalAction by get_kwargs: `--no-enable-eplb` too); v0.9.0's and v0.9.1's hold no `eplb` at all.
R8 (session 71): plans at 0.6.4 / 0.8.4 / 0.8.5 exited 0, and `--enable-eplb False` at 0.8.5 wrote back
`--no-enable-eplb`, which 0.8.5 refuses.
"""

from __future__ import annotations

import pytest

from kvtop.cli import main


@pytest.mark.parametrize("release", ["0.6.4", "0.8.4", "0.8.5", "0.9.1"])
@pytest.mark.parametrize("typed", ["--enable-eplb", "--enable-eplb False", "--no-enable-eplb"])
def test_a_release_before_v0_9_2_refuses_the_switch(capsys: pytest.CaptureFixture[str], release: str, typed: str) -> None:
    command = f"vllm serve m {typed}"
    assert main(["plan", "--model", "llama-3.1-8b", "--engine-version", release, "--cmd", command]) == 2
    err = capsys.readouterr().err
    assert f"vLLM {release} has no --enable-eplb (first in v0.9.2" in err


@pytest.mark.parametrize(("typed", "written"), [("--enable-eplb", "--enable-eplb"), ("--no-enable-eplb", "--no-enable-eplb")])
def test_v0_9_2_takes_it_and_writes_it_back(capsys: pytest.CaptureFixture[str], typed: str, written: str) -> None:
    command = f"vllm serve m {typed}"
    assert main(["plan", "--model", "llama-3.1-8b", "--engine-version", "0.9.2", "--cmd", command]) == 0
    assert f"engine flags: {written}" in capsys.readouterr().out
