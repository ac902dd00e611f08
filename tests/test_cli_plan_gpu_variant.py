"""A bare `--gpu A100` planned the 80 GB card without a word: where a card comes in memory sizes, the plan says which
it took and how to name the other, in its text and its JSON. The sizes are the table's nvidia-smi totals
(kvtop/domain/gpus.py GPU_TOTAL_MIB: 'A100' and 'A100-80GB' 81,920 MiB, 'A100-40GB' 40,960; 'V100' 16,384 MiB,
'V100-32GB' 32,768)."""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from kvtop.domain.gpu_total_origin import GpuTotalOrigin, memory_variant_note
from tests.conftest import CONFIGS

LLAMA_8B = str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")
A100_SAID = "--gpu A100 is taken as the A100-80GB (81,920 MiB, nvidia-smi's total); for the other size give --gpu A100-40GB"


def test_a_bare_a100_says_it_took_the_80_gb_card(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--model", LLAMA_8B, "--gpu", "A100"]) == 0
    assert f"note: {A100_SAID}" in capsys.readouterr().out.splitlines()
    assert main(["plan", "--model", LLAMA_8B, "--gpu", "A100", "--json"]) == 0
    gpu = json.loads(capsys.readouterr().out)["gpu"]
    assert (gpu["total_bytes"], gpu["memory_variant"]) == (81_920 << 20, A100_SAID)


@pytest.mark.parametrize("args", [["--gpu", "A100-40GB"], ["--gpu", "A100-80GB"], ["--gpu", "H100"],
                                  ["--gpu", "A100", "--gpu-memory", "40GiB"]])  # fmt: skip
def test_a_named_size_or_a_given_total_says_nothing(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--model", LLAMA_8B, *args, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["gpu"]["memory_variant"] is None


def test_a_bare_name_without_a_sized_twin_names_its_size() -> None:
    assert memory_variant_note("V100", GpuTotalOrigin.TABLE) == (
        "--gpu V100 is taken as the 16 GB card (16,384 MiB, nvidia-smi's total); for the other size give --gpu V100-32GB"
    )
