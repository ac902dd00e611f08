"""SGLang's CUTLASS NVFP4 MoE padding each expert's w13 rows to the swizzled scales' 128 (engines/sglang/nvfp4_pad.py).

Expected figures from the engine's code: `swizzle_blockscale` pads the scales' rows to a multiple of 128
(layers/quantization/utils.py:585-587 at 0.5.23), `intermediate_size_pad` = those rows − w13_weight's (gemm1 × the
expert's shard), and a gated expert with a pad fails `assert not layer.moe_runner_config.is_gated`
(modelopt_quant.py:1706 at 0.5.6, :1632 at 0.5.9 … :3018 at 0.5.23); 0.5.3 – 0.5.5 swizzle without padding
(:1547-1560 at 0.5.5). Shapes from the checkpoints' configs.
"""

from __future__ import annotations

import pytest

from kvtop.cli import main
from tests.data_paths import DATA

QWEN3_235B = str(DATA / "configs" / "nvidia--Qwen3-235B-A22B-NVFP4.json")  # silu (gated), moe_intermediate 1,536
NANO = str(DATA / "configs" / "heldout" / "nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-NVFP4.json")  # relu2, 1,856
RELEASES = ("0.5.6", "0.5.7", "0.5.8", "0.5.9", "0.5.10rc0", "0.5.10", "0.5.11", "0.5.12", "0.5.13", "0.5.14", "0.5.15",
            "0.5.16", "0.5.17", "0.5.18", "0.5.19", "0.5.20", "0.5.21", "0.5.22", "0.5.23")  # the wheels read


@pytest.fixture(autouse=True)
def _notes_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "10000")  # each note read whole: its wrapping is tests/commands/test_prose_wrap.py's


def _plan(capsys: pytest.CaptureFixture[str], config: str, gpu: str, release: str, *flags: str) -> tuple[int, str]:
    code = main(["plan", "--model", config, "--engine", "sglang", "--engine-version", release, "--gpu", gpu, *flags])
    out = capsys.readouterr()
    return code, out.out + out.err


@pytest.mark.parametrize("release", RELEASES)
def test_gated_experts_whose_w13_needs_padding_are_refused(capsys: pytest.CaptureFixture[str], release: str) -> None:
    """Qwen3-235B-A22B-NVFP4 at TP 16 on an RTX PRO 6000 (SM 12.0: CUTLASS MoE at `auto`): each expert's shard is
    1,536 ÷ 16 = 96, w13 2 × 96 = 192 rows, swizzled to 256: a pad of 64 on a gated (SiLU) expert, which SGLang
    asserts against while loading the weights."""
    code, text = _plan(capsys, QWEN3_235B, "RTXPRO6000", release, "--tp", "16")
    assert code == 2
    assert "64 short of a multiple of 128" in text
    assert "padding is also implemented for gated activations" in text


def test_an_aligned_shard_or_another_runner_plans(capsys: pytest.CaptureFixture[str]) -> None:
    """At TP 8 the shard is 192, w13 384 rows = 3 × 128: no pad, it plans. At TP 16 on a B200 (SM 10.0) 0.5.9's
    server_args.py picks flashinfer_trtllm for Qwen3-MoE with modelopt_fp4 (:1558-1578), and on an H100 0.5.13 runs
    Marlin (returns before the padding): neither reaches the assert, so kvtop does not refuse there."""
    assert _plan(capsys, QWEN3_235B, "RTXPRO6000", "0.5.23", "--tp", "8")[0] == 0
    for gpu, release in (("B200", "0.5.9"), ("H100", "0.5.13")):
        code, text = _plan(capsys, QWEN3_235B, gpu, release, "--tp", "16")
        assert "gated activations" not in text, (gpu, release)
        assert code == 0, (gpu, release, text[-400:])


def test_non_gated_padding_is_named_not_modelled(capsys: pytest.CaptureFixture[str]) -> None:
    """Nemotron-3-Nano-30B-A3B-NVFP4 (relu2: one w13 row block) on an RTX PRO 6000: at TP 1 w13 holds 1,856 rows,
    swizzled to 1,920 (a pad of 64); at TP 2 928, to 1,024 (96). SGLang pads the weights there instead of asserting;
    kvtop names it not modelled. On a B200 its override picks flashinfer_trtllm: no such note."""
    for tp, pad in (("1", 64), ("2", 96)):
        code, text = _plan(capsys, NANO, "RTXPRO6000", "0.5.23", "--tp", tp)
        assert code == 0
        assert f"not modelled: SGLang's CUTLASS NVFP4 MoE pads each non-gated expert's w13 by {pad} rows" in text, tp
    code, text = _plan(capsys, NANO, "B200", "0.5.23")
    assert code == 0
    assert "non-gated expert" not in text


MINIMAX = str(DATA / "configs" / "heldout" / "nvidia--MiniMax-M2.5-NVFP4.json")  # silu (gated), intermediate 1,536


@pytest.mark.parametrize("release", ["0.5.9", "0.5.11", "0.5.13"])
def test_a_class_without_a_runner_block_is_refused_on_sm100_too(capsys: pytest.CaptureFixture[str], release: str) -> None:
    """MiniMax-M2.5-NVFP4 (MiniMaxM2ForCausalLM) on a B200: no block of `_handle_model_specific_adjustments` sets its
    runner at 0.5.3 – 0.5.13 (server_args.py read at each wheel; nvfp4_runner.SM10_DEFAULT_ERAS), so `auto` takes the
    CUTLASS branch there as on SM 12.x. At TP 16 each expert's shard is 1,536 ÷ 16 = 96, w13 192 rows, swizzled to
    256: 64 short, and the gated expert fails SGLang's assert. At 0.5.23 MiniMax-M2 runs flashinfer_trtllm_routed
    on SM 10.x (model_overrides/minimax_m2.py:23-28; from 0.5.18: test_nvfp4_runner_late.py), which pads nothing."""
    code, text = _plan(capsys, MINIMAX, "B200", release, "--tp", "16")
    assert code == 2
    assert "64 short of a multiple of 128" in text
    assert "padding is also implemented for gated activations" in text
    code, text = _plan(capsys, MINIMAX, "B200", "0.5.23", "--tp", "16")
    assert code == 0, text[-400:]
    assert "gated activations" not in text


def test_nemotron_h_runs_flashinfer_cutlass_on_sm100_at_0_5_9(capsys: pytest.CaptureFixture[str]) -> None:
    """0.5.6 – 0.5.10 set flashinfer_cutlass for a ModelOpt Nemotron-H on every GPU (server_args.py:1529-1546 at 0.5.9:
    ModelConfig's quantization, hf_quant_config.json read), which takes the CUTLASS branch: Nemotron-3-Nano's relu²
    w13 at TP 1 holds 1,856 rows, padded by 64 to 1,920. From 0.5.11 sm100 picks flashinfer_trtllm (:2143-2172)."""
    code, text = _plan(capsys, NANO, "B200", "0.5.9", "--tp", "1")
    assert code == 0
    assert "pads each non-gated expert's w13 by 64 rows" in " ".join(text.split())
    code, text = _plan(capsys, NANO, "B200", "0.5.11", "--tp", "1")
    assert code == 0
    assert "non-gated expert" not in text


def test_before_the_padding_nothing_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """0.5.5's CUTLASS branch swizzles the scales and keeps w13 as loaded (modelopt_quant.py:1547-1560): no pad, no
    assert, so the TP 16 launch refused from 0.5.6 plans there."""
    code, text = _plan(capsys, QWEN3_235B, "RTXPRO6000", "0.5.5", "--tp", "16")
    assert "gated activations" not in text
    assert code == 0, text[-400:]
