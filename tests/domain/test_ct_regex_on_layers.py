"""compressed-tensors matches an `ignore` regex on a layer's own name (vLLM 0.33.0 / SGLang 0.5.23
compressed_tensors/utils.py should_ignore_layer, each shard's name of a fused layer), so the model card's recipe entry
`re:.*mlp\\.shared_expert$` (RedHatAI/Qwen3.5-122B-A10B-FP8-dynamic, llm-compressor's qwen3_5_moe example) names the
module holding the shared expert and spares none of its projections: they are FP8 like the rest. Expected values: the
engines' own meta builds of that config (tests/data/engine_diff/registry/sglang-0.5.23.json, vllm-0.33.0.json: the
param bytes of every module, summed). kvtop booked 452,001,792 B more (48 layers × the shared expert's 3 × 1,024 × 3,072
bytes less their per-channel fp32 scales) before session 65."""

from __future__ import annotations

import json

from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model_config import model_from_config
from tests.conftest import DATA

CONFIG = DATA / "calibration" / "configs" / "RedHatAI--Qwen3.5-122B-A10B-FP8-dynamic.RECONSTRUCTED.json"
H200 = 143771 << 20
# (engine, release, TP flag): {TP: every module's param bytes the engine built on rank 0}
ENGINE_BUILT = {
    ("sglang", "0.5.23", "--tp-size"): {1: 1_525_678_080 + 125_590_184_448 + 902_581_728,
                                        2: 762_839_040 + 62_909_163_264 + 453_253_488},
    ("vllm", "0.33.0", "--tensor-parallel-size"): {1: 127_115_862_744 + 902_581_728, 2: 63_672_002_520 + 455_907_696},
}  # fmt: skip


def test_the_book_holds_what_both_engines_build_with_the_shared_expert_in_fp8() -> None:
    model = model_from_config(json.loads(CONFIG.read_text()), source="rh")
    for (engine, version, flag), built in ENGINE_BUILT.items():
        for tp, expected in built.items():
            flags = parse_flags(engine, ["--engine-version", version, flag, str(tp)])
            ledger = predict(model, flags, gpu_total_bytes=H200, gpu_name="H200")
            assert ledger.ranks[0].weights.total_bytes == expected, (engine, tp)


def test_a_regex_naming_a_parent_spares_its_layers_only_where_it_matches_them() -> None:
    model = model_from_config(json.loads(CONFIG.read_text()), source="rh")
    shared = ("model.layers.0.mlp.shared_experts", "model.layers.0.mlp.shared_expert",
              "model.layers.0.mlp.shared_expert.down_proj")  # fmt: skip
    found = model.quant.format_of(shared)
    assert found is not None and found.quantized and found.weight_bits == 8
    assert model.quant.format_of(("model.layers.0.mlp.shared_expert_gate",)) is None  # `re:.*shared_expert_gate$`
    assert model.quant.format_of(("model.layers.0.linear_attn.in_proj_qkvz",)) is None  # `re:.*linear_attn.*`
