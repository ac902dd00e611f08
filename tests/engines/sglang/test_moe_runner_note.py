"""The NVFP4 MoE runner kvtop assumes on SM 10.x for a class whose SGLang runner default it does not read, named.

SGLang's `auto` runner is `flashinfer_trtllm` per class on SM 10.x (server_args.py:1302-1310 for DeepSeek-V3 at
0.5.9, :1558-1578 for Qwen3-MoE; arg_groups/overrides.py `_DEEPSEEK_FAMILY_ARCHS` at 0.5.23). kvtop reads it for the
DeepSeek classes only, so Qwen3-235B-A22B-NVFP4 (Qwen3MoeForCausalLM, ModelOpt NVFP4 experts: its
hf_quant_config.json) on a B200 is planned on CUTLASS, and the plan says so; not on an H200 (Marlin from 0.5.13, read),
and not for DeepSeek-V3 (its default read)."""

from __future__ import annotations

import pytest

from kvtop.cli import main
from tests.data_paths import DATA

QWEN3_235B = str(DATA / "configs" / "nvidia--Qwen3-235B-A22B-NVFP4.json")
DEEPSEEK_V3 = str(DATA / "configs" / "nvidia--DeepSeek-V3-0324-NVFP4.json")
NOTE = "kvtop assumes CUTLASS and counts the swizzled block-scale copies"


def _text(capsys: pytest.CaptureFixture[str], config: str, gpu: str, release: str) -> str:
    code = main(["plan", "--model", config, "--engine", "sglang", "--engine-version", release, "--gpu", gpu, "--tp", "8"])
    out = capsys.readouterr()
    assert code == 0, out.err[-400:]
    return out.out + out.err


@pytest.mark.parametrize("release", ["0.5.9", "0.5.23"])
def test_a_class_without_a_runner_default_on_sm100_is_named(capsys: pytest.CaptureFixture[str], release: str) -> None:
    text = _text(capsys, QWEN3_235B, "B200", release)
    assert f"not modelled: SGLang {release}'s `auto` MoE runner for Qwen3MoeForCausalLM" in text
    assert f"on B200 (SM 10.0): {NOTE}" in text


@pytest.mark.parametrize(("config", "gpu", "release"), [(QWEN3_235B, "H200", "0.5.13"), (DEEPSEEK_V3, "B200", "0.5.9")])
def test_a_read_runner_draws_no_note(capsys: pytest.CaptureFixture[str], config: str, gpu: str, release: str) -> None:
    """Marlin on an H200 from 0.5.13 (nvfp4_runner.MARLIN_MOE_ERAS); DeepSeek-V3's flashinfer_trtllm on a B200."""
    assert NOTE not in _text(capsys, config, gpu, release)
