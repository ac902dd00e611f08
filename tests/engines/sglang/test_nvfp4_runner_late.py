"""SGLang's `auto` NVFP4 MoE runner on SM 10.x at 0.5.14 – 0.5.23 (engines/sglang/nvfp4_runner.py), from the wheels'
code (PyPI, read): server_args.py `_handle_model_specific_adjustments` at 0.5.14, arg_groups/overrides.py from 0.5.15,
arg_groups/model_overrides/*.py from 0.5.19.

- MiniMax-M2 (MiniMaxM2ForCausalLM) has no block to 0.5.17: `auto` takes the CUTLASS branch, which pads w13 to the
  swizzled scales' 128 rows and asserts against a gated expert (modelopt_quant.py:2203 at 0.5.14, :2435 at 0.5.17).
  From 0.5.18 `_minimax_m2_overrides` sets flashinfer_trtllm_routed where ModelConfig's quantization is modelopt_fp4
  (overrides.py:743-756 at 0.5.18, model_overrides/minimax_m2.py:23-28 at 0.5.23), and `enable_flashinfer_trtllm_moe`
  takes the routed runner too (modelopt_quant.py:2156-2159 at 0.5.18): no padding, no assert.
- Nemotron-H: flashinfer_trtllm on sm100 for any ModelOpt or no quantization (nemotron_h_hook.py:14-58 at 0.5.14).
  From 0.5.18 `_nemotron_h_overrides` looks for W4A16_NVFP4 experts (Marlin) in config.json's
  `quantization_config['quantized_layers']` where ModelConfig reads modelopt_mixed (overrides.py:1262-1267 at 0.5.18,
  model_overrides/nemotron_h.py:51-57 at 0.5.19): Nemotron-3.5-Lightning-NVFP4 states its MIXED_PRECISION layers in
  hf_quant_config.json only, so config.json has no quantization_config and the start fails there (an AttributeError).
- The DeepSeek family at 0.5.23 (overrides.py:745-818): flashinfer_trtllm for fp8 / modelopt_fp8 / modelopt_fp4 /
  modelopt_mixed or none; without `--quantization` the string is config.json's quant_method as written, and
  Kimi-K2.5-NVFP4's `modelopt` is none of them: CUTLASS, read. DeepSeek-V3-0324-NVFP4 (no quant_method in
  config.json) reads flashinfer_trtllm; at 0.5.11 – 0.5.12 its none asks has_fp8_weights_in_checkpoint (the shards'
  headers, utils/common.py:2734-2797 at 0.5.11): named.
- Gemma-4: flashinfer_trtllm where ModelConfig's quantization is modelopt_fp4 (server_args.py:2370 at 0.5.13,
  :4087-4090 at 0.5.14;
  model_overrides/gemma4.py:45-46 at 0.5.23): Gemma-4-26B-A4B-NVFP4's config.json block has quant_algo NVFP4,
  which ModelConfig reads as modelopt_fp4 (configs/model_config.py:1152 at 0.5.14).
- Llama4: `flashinfer_trtllm` for `self.quantization in {"fp8", "modelopt_fp8"}` only, at every release read
  (server_args.py:1012 at 0.5.5, :2206 at 0.5.12; model_overrides/llama4.py:39 at 0.5.23): CUTLASS for NVFP4.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kvtop.cli import main
from kvtop.domain.engines.sglang.nvfp4_runner import NvFp4MoeRunner, runner_pick
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.sources.hub import load_config_file
from tests.data_paths import DATA

HELDOUT = DATA / "configs" / "heldout"
MINIMAX = str(HELDOUT / "nvidia--MiniMax-M2.5-NVFP4.json")  # SiLU (gated) experts, moe_intermediate 1,536
LIGHTNING = str(HELDOUT / "nvidia--NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4.json")  # MIXED_PRECISION
NANO = str(HELDOUT / "nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-NVFP4.json")  # NVFP4, relu² experts
KIMI = str(HELDOUT / "nvidia--Kimi-K2.5-NVFP4.json")  # config.json quant_method "modelopt"
GEMMA4 = str(HELDOUT / "nvidia--Gemma-4-26B-A4B-NVFP4.json")
QWEN3_235B = str(DATA / "configs" / "nvidia--Qwen3-235B-A22B-NVFP4.json")
DEEPSEEK_V3 = str(DATA / "configs" / "nvidia--DeepSeek-V3-0324-NVFP4.json")
NOTE = "kvtop assumes CUTLASS and counts the swizzled block-scale copies"


def _plan(capsys: pytest.CaptureFixture[str], config: str, release: str, *flags: str) -> tuple[int, str]:
    code = main(["plan", "--model", config, "--engine", "sglang", "--engine-version", release, "--gpu", "B200",
                 "--no-calibration-store", *flags])  # fmt: skip
    out = capsys.readouterr()
    return code, " ".join((out.out + out.err).split())


@pytest.mark.parametrize("release", ["0.5.14", "0.5.15", "0.5.16", "0.5.17"])
def test_minimax_m2_runs_cutlass_and_is_refused_at_tp16_to_0_5_17(
    capsys: pytest.CaptureFixture[str], release: str
) -> None:
    """TP 16 on a B200: each expert's shard is 1,536 ÷ 16 = 96, w13 2 × 96 = 192 rows, swizzled to 256: 64 short, and
    the gated expert fails the CUTLASS branch's assert."""
    code, text = _plan(capsys, MINIMAX, release, "--tp", "16")
    assert code == 2
    assert "64 short of a multiple of 128" in text
    assert "padding is also implemented for gated activations" in text


@pytest.mark.parametrize("release", ["0.5.18", "0.5.19", "0.5.22", "0.5.23"])
def test_minimax_m2_runs_the_routed_trtllm_moe_from_0_5_18(capsys: pytest.CaptureFixture[str], release: str) -> None:
    """The same launch from 0.5.18: flashinfer_trtllm_routed (TRT-LLM weight layout) pads nothing: it plans, read."""
    code, text = _plan(capsys, MINIMAX, release, "--tp", "16")
    assert code == 0, text[-400:]
    assert "gated activations" not in text
    assert NOTE not in text


@pytest.mark.parametrize("release", ["0.5.18", "0.5.19", "0.5.20", "0.5.22", "0.5.23"])
def test_a_mixed_nemotron_h_without_its_layers_in_config_json_is_refused_from_0_5_18(
    capsys: pytest.CaptureFixture[str], release: str
) -> None:
    code, text = _plan(capsys, LIGHTNING, release, "--tp", "1")
    assert code == 2
    assert "overrides read config.json's quantization_config['quantized_layers']" in text


@pytest.mark.parametrize("release", ["0.5.14", "0.5.17"])
def test_before_0_5_18_a_mixed_nemotron_h_plans_on_flashinfer_trtllm(
    capsys: pytest.CaptureFixture[str], release: str
) -> None:
    """To 0.5.17 the block reads no layer list: flashinfer_trtllm on sm100 for any ModelOpt quantization, read."""
    code, text = _plan(capsys, LIGHTNING, release, "--tp", "1")
    assert code == 0, text[-400:]
    assert "quantized_layers" not in text
    assert NOTE not in text


@pytest.mark.parametrize(("config", "release", "why"), [
    # 0.5.11's case: test_moe_runner_note.py asserts the same plan's note, with the GPU's words
    (DEEPSEEK_V3, "0.5.12", "no quant_method in config.json, or --quantization: none"),
])  # fmt: skip
def test_a_pick_that_turns_on_what_kvtop_does_not_read_is_named(
    capsys: pytest.CaptureFixture[str], config: str, release: str, why: str
) -> None:
    code, text = _plan(capsys, config, release, "--tp", "8")
    assert code == 0, text[-400:]
    assert f"not modelled: SGLang {release}'s `auto` MoE runner for" in text
    assert why in text


@pytest.mark.parametrize(("config", "release"), [
    (NANO, "0.5.19"), (NANO, "0.5.23"), (GEMMA4, "0.5.14"), (GEMMA4, "0.5.23"),
    (QWEN3_235B, "0.5.15"), (QWEN3_235B, "0.5.23"), (DEEPSEEK_V3, "0.5.20"), (DEEPSEEK_V3, "0.5.23"),
    (KIMI, "0.5.16"), (KIMI, "0.5.23"),  # config.json's literal `modelopt`: not in the DeepSeek family's list, CUTLASS
])  # fmt: skip
def test_a_read_pick_draws_no_note(capsys: pytest.CaptureFixture[str], config: str, release: str) -> None:
    """Nemotron-H's flashinfer_trtllm (a checkpoint that is not MIXED_PRECISION from 0.5.18), Gemma-4's from
    ModelConfig's modelopt_fp4, Qwen3-MoE's and DeepSeek-V3's for no quant_method in config.json (none:
    flashinfer_trtllm), Kimi-K2.5's CUTLASS for config.json's literal `modelopt`."""
    code, text = _plan(capsys, config, release, "--tp", "8")
    assert code == 0, text[-400:]
    assert NOTE not in text


SCOUT = DATA / "configs" / "meta-llama--Llama-4-Scout-17B-16E-Instruct.json"


@pytest.mark.parametrize(("config", "release", "runner", "read"), [
    (SCOUT, "0.5.5", NvFp4MoeRunner.CUTLASS, True),  # Llama4: flashinfer_trtllm for fp8 / modelopt_fp8 only
    (SCOUT, "0.5.12", NvFp4MoeRunner.CUTLASS, True),
    (SCOUT, "0.5.23", NvFp4MoeRunner.CUTLASS, True),
    (Path(MINIMAX), "0.5.17", NvFp4MoeRunner.CUTLASS, True),  # no block
    (Path(MINIMAX), "0.5.18", NvFp4MoeRunner.TRTLLM, True),  # flashinfer_trtllm_routed
    (Path(GEMMA4), "0.5.12", NvFp4MoeRunner.CUTLASS, True),  # its block sets no runner (server_args.py:2224-2227)
    (Path(GEMMA4), "0.5.13", NvFp4MoeRunner.TRTLLM, True),  # is_gemma4_modelopt_fp4: ModelConfig's modelopt_fp4
    (Path(GEMMA4), "0.5.14", NvFp4MoeRunner.TRTLLM, True),  # ModelConfig's modelopt_fp4
    (Path(KIMI), "0.5.23", NvFp4MoeRunner.CUTLASS, True),  # config.json's literal `modelopt`: not in the list
    (Path(DEEPSEEK_V3), "0.5.23", NvFp4MoeRunner.TRTLLM, True),
])  # fmt: skip
def test_runner_pick_by_class_and_release(config: Path, release: str, runner: NvFp4MoeRunner, read: bool) -> None:
    pick = runner_pick(load_config_file(config), "B200", ResolvedVersion(text=release))
    assert (pick.runner, pick.read) == (runner, read)
