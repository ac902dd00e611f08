"""A compressed-tensors checkpoint whose config groups hold different weight formats by target (RedHatAI's
DeepSeek-V4-Flash-NVFP4-FP8: FP8 block for `re:.*attn.*(fused_wqa_wkv|wq_b|wo_a|wo_b)$`, NVFP4 for
`re:.*ffn.*(gate|up|down)_proj$`) is read per target (kvtop.domain.quant `QuantSpec.targeted`), matched against the
names vLLM 0.33.0 gives the modules (`StageParts.target_names`).

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


def _weights(tp: int):  # noqa: ANN202
    settings = parse_flags("vllm", ["--engine-version", "0.33.0", "--tensor-parallel-size", str(tp)])
    return predict(load_model(str(PATH)), settings, gpu_total_bytes=H200, gpu_name="H200").ranks[0].weights


@pytest.mark.parametrize(("tp", "engine"), [(1, 562_414_809_700), (2, 281_861_218_916)])
def test_the_weights_book_equals_the_engine_meta_build(tp: int, engine: int) -> None:
    assert _engine_bytes(tp) == engine
    assert _weights(tp).total_bytes == engine


@pytest.mark.parametrize("tp", [1, 2])
def test_each_group_gives_its_own_matrices(tp: int) -> None:
    """The routed experts in bf16 (no target names `w1/w2/w3`): 43 layers × 256 experts × 3 × 2048 × 4096 × 2 B
    ÷ TP = 554,050,781,184 ÷ TP (the --params listing's w13_weight + w2_weight at TP 1). The shared experts NVFP4
    (CompressedTensorsW4A4Fp4.create_weights): each of gate, up, down 4096 × 2048 holds 4,194,304 B of packed pairs
    and 524,288 fp8 scales (one per 16), split over TP, and an fp32 weight_global_scale and input_global_scale whole:
    43 × 3 × (4,718,592 ÷ TP + 8) = 608,699,400 at TP 1, 304,350,216 at TP 2."""
    config = json.loads(PATH.read_text())
    assert config["quantization_config"]["config_groups"]["group_1"]["format"] == "nvfp4-pack-quantized"
    rows = {row.component: row.bytes for row in _weights(tp).rows}
    assert rows["routed_experts"] == 554_050_781_184 // tp
    assert rows["shared_experts"] == 43 * 3 * ((4096 * 2048 // 2 + 4096 * 2048 // 16) // tp + 8)
    assert rows["shared_experts"] == {1: 608_699_400, 2: 304_350_216}[tp]


def test_the_targets_are_read_in_the_config_order() -> None:
    quant = load_model(str(PATH)).quant
    assert [targets for targets, _ in quant.targeted] == [
        ("re:.*attn.*(fused_wqa_wkv|wq_b|wo_a|wo_b)$",), ("re:.*ffn.*(gate|up|down)_proj$",)
    ]
    attention, experts = (fmt for _, fmt in quant.targeted)
    assert (attention.method, attention.block) == ("fp8", (128, 128))
    assert (experts.method, experts.group_size) == ("nvfp4", 16)
    assert quant.format_of(("model.layers.0.attn.fused_wqa_wkv",)) == attention
    assert quant.format_of(("model.layers.0.ffn.shared_experts.down_proj",)) == experts
    assert quant.format_of(("model.layers.0.ffn.experts.0.w2",)) is None  # vLLM's name for a routed expert


@pytest.mark.parametrize("engine", ["trtllm", "lmdeploy"])
def test_engines_whose_module_names_kvtop_does_not_hold_refuse_it_by_name(engine: str) -> None:
    """Only vLLM 0.33.0's DeepSeek-V4 states its module names (layer_build.DSV4_TARGET_NAMES); another engine's plan
    names the groups, never a number from kvtop's own names (SGLang 0.5.23 refuses the config before them: its
    kv_lora_rank, tests/engines/sglang/test_config_refusals.py)."""
    with pytest.raises(UnsupportedModelError) as refused:
        predict(load_model(str(PATH)), parse_flags(engine, []), gpu_total_bytes=H200, gpu_name="H200")
    assert refused.value.field == "quantization_config.config_groups"
    assert "re:.*ffn.*(gate|up|down)_proj$" in str(refused.value) and "8-bit float block" in str(refused.value)


def test_a_single_format_compressed_tensors_checkpoint_is_still_read() -> None:
    """poolside's Laguna-XS.2-FP8: one config group, read as before (no targets)."""
    model = load_model(str(CONFIGS / "heldout" / "wave2" / "poolside--Laguna-XS.2-FP8.json"))
    assert model.quant.scheme == "compressed-tensors" and model.quant.method == "fp8" and not model.quant.targeted


def test_compressed_tensors_fp8_keeps_fp32_block_scales_on_deepseek_v4() -> None:
    """DeepseekV4FP8Config (e8m0 block scales where expert_dtype is fp4) takes `quant_method: fp8` only: the engine's
    --params of the compressed-tensors checkpoint list `attn.fused_wqa_wkv.weight_scale` [12, 32] torch.float32
    (66,048 B over 43 layers = 43 × 384 × 4), the published FP8 Flash's e8m0 (1 B, test_dsv4_meta_build.py)."""
    from kvtop.domain.engines.versions import from_flag
    from kvtop.domain.engines.vllm.layer_build import dsv4_parts
    from kvtop.domain.engines.vllm.release_calendar import CALENDAR

    version = from_flag("0.33.0", CALENDAR)
    assert 43 * 12 * 32 * 4 == 66_048
    assert dsv4_parts(load_model(str(PATH)), version)["block_scale_bytes"] is None
    published = load_model(str(CONFIGS / "heldout" / "deepseek-ai--DeepSeek-V4-Flash.json"))
    assert dsv4_parts(published, version)["block_scale_bytes"] == 1
