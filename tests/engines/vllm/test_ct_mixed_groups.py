"""A compressed-tensors checkpoint whose config groups hold different weight formats by target (RedHatAI's
DeepSeek-V4-Flash-NVFP4-FP8: FP8 block for the attention projections, NVFP4 for `(gate|up|down)_proj`) is refused by
name (kvtop.domain.quant `QuantSpec.unread`), never planned with the first group's format.

The engine's answer is vLLM 0.33.0's meta build (tests/data/engine_diff/registry/vllm-0.33.0.json, registry_sweep.py
on the meta device; `registry_sweep.py --engine vllm --params RedHatAI--DeepSeek-V4-Flash-NVFP4-FP8 --tps 1` lists
`ffn.experts.routed_experts.w13_weight` [256, 4096, 4096] and `w2_weight` [256, 4096, 2048] torch.bfloat16 on each of
the 43 layers: DeepSeek-V4's RoutedExperts looks its targets up as `w1/w2/w3` (nvidia/model.py ckpt_names), which
no group names, so CompressedTensorsMoEMethod.get_moe_method gives UnquantizedFusedMoEMethod), while the shared
experts' gate_up_proj/down_proj are NVFP4 (weight_packed uint8) and the attention FP8 with fp32 block scales."""

from __future__ import annotations

import json

import pytest

from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS
from tests.data_paths import DATA

NAME = "RedHatAI--DeepSeek-V4-Flash-NVFP4-FP8"
PATH = CONFIGS / "heldout" / "wave2" / f"{NAME}.json"
H200 = 143771 << 20


def _engine_bytes(tp: int) -> int:
    rows = json.loads((DATA / "engine_diff" / "registry" / "vllm-0.33.0.json").read_text())["rows"]
    (row,) = [r for r in rows if r["config"] == NAME and r["tp"] == tp]
    assert row["status"] == "ok"
    return sum(sum(stage["param_bytes"].values()) for stage in row["stages"])


@pytest.mark.parametrize("tp", [1, 2])
def test_the_engine_holds_the_routed_experts_in_the_model_dtype(tp: int) -> None:
    """The engine's rank holds more than the routed experts in bf16 alone (43 layers × 256 experts × (2 × 2048 +
    2048) × 4096 × 2 B, split over TP): no per-target reading of the groups' formats gives that."""
    config = json.loads(PATH.read_text())
    experts = config["num_hidden_layers"] * config["n_routed_experts"] * 3 * config["moe_intermediate_size"]
    bf16_experts = experts * config["hidden_size"] * 2 // tp
    assert bf16_experts == 554_050_781_184 // tp  # the --params listing's w13_weight + w2_weight at TP 1
    assert bf16_experts < _engine_bytes(tp) < bf16_experts * 1.02


@pytest.mark.parametrize("tp", [1, 2])
def test_kvtop_refuses_the_mixed_groups_by_name(tp: int) -> None:
    model = load_model(str(PATH))
    settings = parse_flags("vllm", ["--engine-version", "0.33.0", "--tensor-parallel-size", str(tp)])
    with pytest.raises(UnsupportedModelError) as refused:
        predict(model, settings, gpu_total_bytes=H200, gpu_name="H200")
    assert refused.value.field == "quantization_config.config_groups"
    assert "re:.*ffn.*(gate|up|down)_proj$" in str(refused.value) and "8-bit float block" in str(
        refused.value
    )


def test_a_single_format_compressed_tensors_checkpoint_is_still_read() -> None:
    """poolside's Laguna-XS.2-FP8: one config group, read as before (no refusal)."""
    model = load_model(str(CONFIGS / "heldout" / "wave2" / "poolside--Laguna-XS.2-FP8.json"))
    assert (
        model.quant.scheme == "compressed-tensors" and model.quant.method == "fp8" and not model.quant.unread
    )


def test_compressed_tensors_fp8_keeps_fp32_block_scales_on_deepseek_v4() -> None:
    """DeepseekV4FP8Config (e8m0 block scales where expert_dtype is fp4) takes `quant_method: fp8` only: the engine's
    --params of the compressed-tensors checkpoint list `attn.fused_wqa_wkv.weight_scale` [12, 32] torch.float32
    (66,048 B over 43 layers = 43 × 384 × 4), the published FP8 Flash's e8m0 (1 B, test_dsv4_meta_build.py)."""
    from kvtop.domain.engines.versions import from_flag
    from kvtop.domain.engines.vllm.eras import CALENDAR
    from kvtop.domain.engines.vllm.layer_build import dsv4_parts

    version = from_flag("0.33.0", CALENDAR)
    assert 43 * 12 * 32 * 4 == 66_048
    assert dsv4_parts(load_model(str(PATH)), version)["block_scale_bytes"] is None
    published = load_model(str(CONFIGS / "heldout" / "deepseek-ai--DeepSeek-V4-Flash.json"))
    assert dsv4_parts(published, version)["block_scale_bytes"] == 1
