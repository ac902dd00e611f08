"""SGLang's `auto` NVFP4 MoE runner on SM 10.x by class and release (engines/sglang/nvfp4_runner.py), and the note
where kvtop does not read it (moe_runner_note.py).

Expected picks from SGLang's `ServerArgs._handle_model_specific_adjustments` (wheels from PyPI, read):
- Qwen3-235B-A22B-NVFP4 (Qwen3MoeForCausalLM; config.json states no quantization_config, hf_quant_config.json does):
  0.5.9 server_args.py:1558-1578 sets flashinfer_trtllm on sm100 where the quantization is fp8 / modelopt_fp4 or none,
  so with or without `--quantization modelopt_fp4` it runs TRT-LLM. At 0.5.6 (:1214-1232) only fp8 / modelopt_fp4
  (no `or None`), a None flag filled from config.json's quant_method (none here): without the flag CUTLASS, read.
- Qwen3.5-122B-A10B-NVFP4 (config.json quant_method "modelopt"): the block takes the literal string, and "modelopt"
  is not "modelopt_fp4": without the flag CUTLASS at 0.5.9, read.
- DeepSeek-V3-0324-NVFP4 at 0.5.11 (server_args.py:1805-1828): no quant_method, so `fp8` only where
  has_fp8_weights_in_checkpoint finds float8 expert weights in the shards (not read): named.
- MiniMax-M2.5-NVFP4 (MiniMaxM2ForCausalLM): no block sets its runner at 0.5.3 – 0.5.13: `auto`, CUTLASS, read.
- A release before 0.5.3 is not read: Qwen3-MoE there is named (0.5.14 – 0.5.23 are read: test_nvfp4_runner_late.py).
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from tests.data_paths import DATA

CONFIGS = DATA / "configs"
QWEN3_235B = str(CONFIGS / "nvidia--Qwen3-235B-A22B-NVFP4.json")
QWEN35_122B = str(CONFIGS / "heldout" / "nvidia--Qwen3.5-122B-A10B-NVFP4.json")
MINIMAX = str(CONFIGS / "heldout" / "nvidia--MiniMax-M2.5-NVFP4.json")
DEEPSEEK_V3 = str(CONFIGS / "nvidia--DeepSeek-V3-0324-NVFP4.json")
NOTE = "kvtop assumes CUTLASS and counts the swizzled block-scale copies"


def _text(capsys: pytest.CaptureFixture[str], config: str, gpu: str, release: str) -> str:
    code = main(["plan", "--model", config, "--engine", "sglang", "--engine-version", release, "--gpu", gpu, "--tp", "8"])
    out = capsys.readouterr()
    assert code == 0, out.err[-400:]
    return out.out + out.err


@pytest.mark.parametrize(("config", "release", "why"), [
    (QWEN3_235B, "0.5.2", "its per-class defaults at this release were not read"),
    (DEEPSEEK_V3, "0.5.11", "no quant_method in config.json, or --quantization: none"),
])  # fmt: skip
def test_a_pick_kvtop_does_not_read_is_named_with_why(
    capsys: pytest.CaptureFixture[str], config: str, release: str, why: str
) -> None:
    text = " ".join(_text(capsys, config, "B200", release).split())
    assert f"not modelled: SGLang {release}'s `auto` MoE runner for" in text
    assert f"on B200 (SM 10.0): {NOTE}" in text
    assert why in text


@pytest.mark.parametrize(("config", "gpu", "release"), [
    (QWEN3_235B, "H200", "0.5.13"), (DEEPSEEK_V3, "B200", "0.5.9"), (QWEN3_235B, "B200", "0.5.9"),
    (MINIMAX, "B200", "0.5.11"), (MINIMAX, "GB300", "0.5.13"),
    (QWEN3_235B, "B200", "0.5.6"), (QWEN35_122B, "B200", "0.5.9"),  # CUTLASS: none / config.json's `modelopt`
])  # fmt: skip
def test_a_read_runner_draws_no_note(capsys: pytest.CaptureFixture[str], config: str, gpu: str, release: str) -> None:
    """Marlin on an H200 from 0.5.13 (nvfp4_runner.MARLIN_MOE_ERAS); DeepSeek-V3's and Qwen3-MoE's flashinfer_trtllm
    on a B200 at 0.5.9; MiniMax-M2's CUTLASS (no block) on a B200 and a GB300 (SM 10.3); Qwen3-MoE's CUTLASS at 0.5.6
    and Qwen3.5's at 0.5.9 without the flag."""
    assert NOTE not in _text(capsys, config, gpu, release)


def test_qwen3_moe_at_0_5_9_on_b200_holds_the_trtllm_placeholders(capsys: pytest.CaptureFixture[str]) -> None:
    """flashinfer_trtllm at 0.5.9 leaves the swizzled placeholders allocated (blockscale_leak.py). Qwen3-235B (hidden
    4,096, moe_intermediate 1,536, 128 experts, 94 MoE layers, NVFP4 groups of 16, float8 scales) at TP 8: each
    expert's shard 192, w13's scales 384 × 256 and w2's 4,096 × 12 (already multiples of 128 and 4): 147,456 B an
    expert, × 128 experts × 94 layers = 1,774,190,592 B on each rank."""
    code = main(["plan", "--model", QWEN3_235B, "--engine", "sglang", "--engine-version", "0.5.9", "--gpu", "B200",
                 "--tp", "8", "--json", "--no-calibration-store"])  # fmt: skip
    out = capsys.readouterr()
    assert code == 0, out.err[-400:]
    rows = {row["component"]: row["bytes"] for row in json.loads(out.out)["ranks"][0]["weights"]}
    assert rows["leaked_blockscale_swizzled"] == 1_774_190_592
