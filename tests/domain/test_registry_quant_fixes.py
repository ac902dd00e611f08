"""Checkpoint formats fixed by the registry sweep (docs/fidelity_registry.md): real configs' quantization
sections against the modules vLLM 0.33.0 and SGLang 0.5.23 build on the meta device (the sweep's rows in
tests/data/engine_diff/registry/, `python benchmarks/engine_diff/registry_sweep.py --params <config>`).
"""

from __future__ import annotations

import json
from pathlib import Path

from kvtop.domain.engines.sglang.kv_scales import with_input_scale_width, with_kv_scales
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.engines.vllm.layer_build import with_layer_build
from kvtop.domain.layout import ParallelLayout, StageParts
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import WeightsBook, weights_book

HELDOUT = Path(__file__).resolve().parents[1] / "data" / "configs" / "heldout"
BF16, FP32 = 2, 4


def book(name: str, tp: int = 1) -> WeightsBook:
    m = model_from_config(json.loads((HELDOUT / f"{name}.json").read_text()), source=name)
    return weights_book(m, ParallelLayout(tp=tp), range(m.num_layers), first_stage=True, last_stage=True)


def row(b: WeightsBook, component: str) -> int:
    return next(r.bytes for r in b.rows if r.component == component)


def test_an_ignore_list_under_the_language_towers_prefix_spares_those_modules() -> None:
    """Kimi-K2.6-NVFP4 ignores `language_model.model.layers.N.self_attn*` for all 61 layers and
    `language_model.model.layers.0*` (compressed-tensors names under KimiK25's tower prefix, which vLLM 0.33.0's
    should_ignore_layer matches against its own `language_model.model.layers...` modules). vLLM builds every
    layer's MLA in bfloat16 at TP 1: fused_qkv_a_proj [1536 + 576, 7168], q_b_proj [64 × 192, 1536], kv_b_proj
    [64 × 256, 512], o_proj [7168, 64 × 128]; layer 0's dense MLP gate_up_proj [2 × 18432, 7168] and down_proj
    [7168, 18432]. With these spared, the sweep's language_model is 594,205,905,384 B on vLLM (TP 1), equal to
    kvtop's plan; read as NVFP4 kvtop held 13,235,372,224 B less."""
    b = book("nvidia--Kimi-K2.6-NVFP4")
    mla = (1536 + 576) * 7168 + 64 * 192 * 1536 + 64 * 256 * 512 + 7168 * 64 * 128
    assert row(b, "attention") == 61 * mla * BF16
    assert row(b, "mlp") == 3 * 18432 * 7168 * BF16


def test_a_model_language_model_prefix_spares_those_modules() -> None:
    """Qwen3.5-122B-A10B-NVFP4 (modelopt) ignores `model.language_model.layers.N.self_attn*` and
    `...linear_attn*` (transformers' Qwen3_5Moe names, mapped by vLLM 0.33.0's hf_to_vllm_mapper onto its
    `language_model.model.layers...`): vLLM builds the 12 full-attention layers' qkv_proj [2 × 32 × 256 + 2 × 2
    × 256, 3072] and o_proj [3072, 32 × 256] in bfloat16 at TP 1 (q_proj twice as wide: the output gate)."""
    b = book("nvidia--Qwen3.5-122B-A10B-NVFP4")
    full_layers = 12
    qkv = (2 * 32 * 256 + 2 * 2 * 256) * 3072
    o = 3072 * 32 * 256
    assert row(b, "attention") == full_layers * (qkv + o) * BF16
    # mlp.shared_expert* spared too: gate_up_proj [2 × 1024, 3072], down_proj [3072, 1024], shared_expert_gate
    # [1, 3072] on each of the 48 layers, bfloat16
    assert row(b, "shared_experts") == 48 * (3 * 1024 * 3072 + 3072) * BF16


def sglang_book(name: str, tp: int = 1) -> WeightsBook:
    """The book with SGLang 0.5.23's attention parts (its RadixAttention k/v scales, its fp32 W4A16 input scales)
    on every stage part."""
    m = model_from_config(json.loads((HELDOUT / f"{name}.json").read_text()), source=name)
    parts = StageParts(embedding=True, final_norm=True, lm_head=True, tower=True, tower_positions=True)
    version = ResolvedVersion(text="0.5.23", source=VersionSource.FLAG)
    parts = with_input_scale_width(with_kv_scales(parts, m, version), m, version)
    return weights_book(m, ParallelLayout(tp=tp), range(m.num_layers), first_stage=True, last_stage=True, parts=parts)


def test_sglang_radix_attention_kv_scales_on_kimi_k25_qwen3_5_and_gemma4() -> None:
    """SGLang 0.5.23 builds k_scale and v_scale (fp32 [1] each, BaseKVCacheMethod) on every RadixAttention built
    with the quant config: KimiK25 (DeepseekV3's attn_mqa and attn_mha: 4 a layer), Qwen3.5's full-attention
    layers and Gemma-4's layers (one RadixAttention: 2 a layer). Without them kvtop was short by the sweep's
    976 B (Kimi-K2.6-NVFP4: 61 × 16), 96 B (Qwen3.5-122B-A10B-NVFP4: 12 × 8) and 480 B (Gemma-4-31B-IT-NVFP4:
    60 × 8) at TP 1 and 2 against the engine's language_model bytes."""
    mla = (1536 + 576) * 7168 + 64 * 192 * 1536 + 64 * 256 * 512 + 7168 * 64 * 128
    assert row(sglang_book("nvidia--Kimi-K2.6-NVFP4"), "attention") == 61 * (mla * BF16 + 4 * FP32)
    qkv, o = (2 * 32 * 256 + 2 * 2 * 256) * 3072, 3072 * 32 * 256
    assert row(sglang_book("nvidia--Qwen3.5-122B-A10B-NVFP4"), "attention") == 12 * ((qkv + o) * BF16 + 2 * FP32)
    gemma = sglang_book("nvidia--Gemma-4-31B-IT-NVFP4")
    assert row(gemma, "attention") - row(book("nvidia--Gemma-4-31B-IT-NVFP4"), "attention") == 60 * 2 * FP32


def test_compressed_tensors_re_patterns_are_regular_expressions() -> None:
    """Kimi-K2.5 (compressed-tensors pack-quantized int4, group 32) ignores `re:.*self_attn.*`,
    `re:.*shared_experts.*` and `re:.*mlp\\.(gate|up|gate_up|down)_proj.*` (vLLM 0.33.0
    compressed_tensors/utils.py `_is_equal_or_regex_match`: a `re:` target is re.match'ed against the module's
    name). vLLM builds every layer's MLA, layer 0's dense MLP and the 60 shared experts [2 × 2048, 7168] +
    [7168, 2048] in bfloat16 (the sweep's language_model 594,205,536,256 B at TP 1; kvtop read the patterns as
    globs matching nothing, 13,235,560,448 B short)."""
    b = book("moonshotai--Kimi-K2.5")
    mla = (1536 + 576) * 7168 + 64 * 192 * 1536 + 64 * 256 * 512 + 7168 * 64 * 128
    assert row(b, "attention") == 61 * mla * BF16
    assert row(b, "mlp") == 3 * 18432 * 7168 * BF16
    assert row(b, "shared_experts") == 60 * 3 * 2048 * 7168 * BF16


def test_gemma4_experts_are_not_inside_the_mlp_an_exclusion_names() -> None:
    """Gemma-4-26B-A4B-NVFP4 (modelopt) ignores `model.language_model.layers.N.mlp*`: the dense MLP, which vLLM
    0.33.0's gemma4.py builds as `layers.N.mlp` beside `layers.N.experts` (the FusedMoE), so the experts stay
    NVFP4: per layer w13_weight [128, 1408, 1408] uint8 + w13_weight_scale [128, 1408, 176] fp8 +
    w13_weight_scale_2 and w13_input_scale [128, 2] fp32, w2_weight [128, 2816, 352] + w2_weight_scale [128, 2816,
    44] + w2_weight_scale_2 and w2_input_scale [128] fp32, on 30 layers (the sweep's language_model 17,665,607,920 B
    at TP 1, now equal; kvtop had spared the experts too, +32,829,511,680 B)."""
    per_layer = 128 * 1408 * 1408 + 128 * 1408 * 176 + 2 * 128 * 2 * FP32 + 128 * 2816 * 352 + 128 * 2816 * 44
    per_layer += 2 * 128 * FP32
    assert row(book("nvidia--Gemma-4-26B-A4B-NVFP4"), "routed_experts") == 30 * per_layer


def test_gated_delta_net_projections_each_take_their_own_format() -> None:
    """Qwen3.6-27B-NVFP4 (modelopt MIXED_PRECISION) lists in_proj_qkv, in_proj_z and out_proj FP8 and leaves
    in_proj_ba out. vLLM 0.33.0 (`registry_sweep.py --engine vllm --params nvidia--Qwen3.6-27B-NVFP4`, TP 1) builds
    on each of the 48 linear-attention layers: in_proj_qkvz.weight [16384, 5120] float8 with weight_scale and
    input_scale [4] fp32 (q, k, v, z), in_proj_ba.weight [96, 5120] bfloat16, out_proj.weight [5120, 6144] float8
    with weight_scale and input_scale [1] fp32, conv1d.weight [10240, 1, 4] bf16, A_log [48] fp32, dt_bias [48]
    bf16. kvtop read in_proj_ba as FP8 and qkvz with one scale pair: 23,594,112 B short at TP 1."""
    qkvz = 16384 * 5120 + 2 * 4 * FP32
    per_layer = qkvz + 96 * 5120 * BF16 + 5120 * 6144 + 2 * FP32 + 10240 * 4 * BF16 + 48 * FP32 + 48 * BF16
    assert row(book("nvidia--Qwen3.6-27B-NVFP4"), "linear_attention") == 48 * per_layer


def test_mixed_precision_lists_name_mixtral_style_experts() -> None:
    """MiniMax-M3-NVFP4 (modelopt MIXED_PRECISION) lists `language_model.model.layers.N.block_sparse_moe.experts.E.w1`
    (w2, w3) NVFP4 group 16 on its 57 MoE layers; vLLM 0.33.0 builds them as one FusedMoE per layer: w13_weight
    [128, 6144, 3072] uint8 + w13_weight_scale [128, 6144, 384] fp8 + w13_weight_scale_2 and w13_input_scale [128,
    2] fp32, w2_weight [128, 6144, 1536] + w2_weight_scale [128, 6144, 192] + w2_weight_scale_2 and w2_input_scale
    [128] fp32 (the sweep's language_model then equal at TP 1 and 2; kvtop had read the experts as bf16, +596.99
    GB at TP 1)."""
    per_layer = 128 * (6144 * 3072 + 6144 * 384 + 6144 * 1536 + 6144 * 192) + 128 * (2 + 2 + 1 + 1) * FP32
    assert row(book("nvidia--MiniMax-M3-NVFP4"), "routed_experts") == 57 * per_layer


def test_w4a16_nvfp4_matrices_keep_an_input_scale_in_the_engines_width() -> None:
    """Qwen3.6-27B-NVFP4's W4A16_NVFP4 modules (64 dense MLPs and the LM head) hold an input_scale though their
    activations stay bf16: vLLM 0.33.0's meta build (`--params`, TP 1) mlp.gate_up_proj.input_scale [2] and
    down_proj.input_scale [1] bfloat16 on each layer, lm_head.input_scale [1] bfloat16 (386 B, kvtop's whole gap
    on vLLM); SGLang 0.5.23's the same in fp32 (the sweep's 772 B gap)."""
    m = model_from_config(json.loads((HELDOUT / "nvidia--Qwen3.6-27B-NVFP4.json").read_text()), source="q")
    layout, layers = ParallelLayout(tp=1), range(m.num_layers)
    base = StageParts(embedding=True, final_norm=True, lm_head=True, tower=True, tower_positions=True)
    vllm = weights_book(m, layout, layers, first_stage=True, last_stage=True, parts=base)
    sglang = weights_book(m, layout, layers, first_stage=True, last_stage=True,
                          parts=base.model_copy(update={"unused_input_scale_bytes": FP32}))  # fmt: skip
    # the 64 layers' gate_up_proj weight, weight_scale_2, weight_scale, input_scale and down_proj's, as listed
    assert row(vllm, "mlp") == 5_704_253_440 + 512 + 713_031_680 + 256 + 2_852_126_720 + 256 + 356_515_840 + 128
    assert row(vllm, "mlp") - row(sglang, "mlp") == 64 * 3 * (BF16 - FP32)
    assert row(vllm, "lm_head") - row(sglang, "lm_head") == BF16 - FP32
    sglang_parts = with_input_scale_width(base, m, ResolvedVersion(text="0.5.23", source=VersionSource.FLAG))
    assert sglang_parts.unused_input_scale_bytes == FP32


def test_nemotron_h_mixed_precision_lists_name_experts_under_the_mixer() -> None:
    """Nemotron-3.5-Lightning-30B-A3B-NVFP4 (hf_quant_config.json, MIXED_PRECISION) lists
    `backbone.layers.N.mixer.experts.E.up_proj` / `down_proj` W4A16_NVFP4 group 16 on its 23 MoE layers: vLLM 0.33.0
    builds them FP4 (the sweep's language_model 18,873,137,818 B at TP 1, now equal), 128 experts of up [1856, 2688] and down [2688, 1856] packed two to a byte
    with an fp8 scale per 16; kvtop had read them bf16 (+42,886,024,938 B)."""
    name = "nvidia--NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4"
    quant = json.loads((HELDOUT / f"{name}.hf_quant_config.json").read_text())
    m = model_from_config(json.loads((HELDOUT / f"{name}.json").read_text()), source=name, hf_quant_config=quant)
    b = weights_book(m, ParallelLayout(tp=1), range(m.num_layers), first_stage=True, last_stage=True)
    packed = 23 * 128 * 2 * (1856 * 2688 // 2 + 1856 * 2688 // 16)
    assert row(b, "routed_experts") == packed + 23 * 128 * 2 * (FP32 + FP32)  # weight_scale_2, input_scale: fp32


def test_w4a16_experts_input_scale_is_fp32() -> None:
    """vLLM 0.33.0's meta build of Qwen3.6-35B-A3B-NVFP4 (`--params`, TP 1), 40 MoE layers of 256 W4A16 experts:
    w13_weight [256, 1024, 1024] and w2_weight [256, 2048, 256] uint8, w13_weight_scale [256, 1024, 128] and
    w2_weight_scale [256, 2048, 32] fp8, w13_weight_scale_2 and w13_input_scale [256, 2] float32, w2_weight_scale_2
    and w2_input_scale [256] float32 (the linear layers' input_scale is bfloat16): 18,119,639,040 B."""
    b = book("nvidia--Qwen3.6-35B-A3B-NVFP4")
    expected = 10_737_418_240 + 5_368_709_120 + 1_342_177_280 + 671_088_640 + 81_920 + 40_960 + 81_920 + 40_960
    assert row(b, "routed_experts") == expected == 18_119_639_040


def test_vllm_wna16_experts_hold_their_shape_tensors() -> None:
    """vLLM 0.33.0 builds a compressed-tensors weight-only int MoE with CompressedTensorsWNA16MoEMethod, whose
    create_weights registers w13_weight_shape and w2_weight_shape, [E, 2] each in the default dtype: on Kimi-K2.5
    (int4 group 32) 60 MoE layers × 384 experts × 4 × 2 B = 184,320 B, the whole of kvtop's gap to the sweep's
    language_model (594,205,536,256 B at TP 1)."""
    m = model_from_config(json.loads((HELDOUT / "moonshotai--Kimi-K2.5.json").read_text()), source="kimi")
    base = StageParts(embedding=True, final_norm=True, lm_head=True, tower=True, tower_positions=True)
    parts = with_layer_build(base, m, ResolvedVersion(text="0.33.0", source=VersionSource.FLAG))
    assert parts.wna16_expert_scalars == 4
    layout, layers = ParallelLayout(tp=1), range(m.num_layers)
    built = weights_book(m, layout, layers, first_stage=True, last_stage=True, parts=parts)
    plain = weights_book(m, layout, layers, first_stage=True, last_stage=True, parts=base)
    assert row(built, "routed_experts") - row(plain, "routed_experts") == 60 * 384 * 4 * BF16


def test_nemotron_h_exclusions_under_backbone_mixer_spare_attention_and_mamba_projections() -> None:
    """Nemotron-3-Nano-30B-A3B-NVFP4's hf_quant_config.json excludes `backbone.layers.N.mixer.q_proj` (k, v, o) on
    its 6 attention layers and `backbone.layers.N.mixer.in_proj` / `out_proj` on 6 of its 23 Mamba2 layers: vLLM
    0.33.0 builds those bf16 (the sweep's language model 19,323,958,224 B at TP 1, now equal; kvtop read them NVFP4,
    535,642,656 B short). Attention per layer: q_proj [32 × 128, 2688], k_proj and v_proj [2 × 128, 2688], o_proj
    [2688, 32 × 128], bfloat16."""
    name = "nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-NVFP4"
    quant = json.loads((HELDOUT / f"{name}.hf_quant_config.json").read_text())
    m = model_from_config(json.loads((HELDOUT / f"{name}.json").read_text()), source=name, hf_quant_config=quant)
    b = weights_book(m, ParallelLayout(tp=1), range(m.num_layers), first_stage=True, last_stage=True)
    assert row(b, "attention") == 6 * (2 * 4096 * 2688 + 2 * 256 * 2688) * BF16
    assert b.total_bytes == 19_323_958_224 - 48  # the sweep's vLLM language_model less its 6 × 4 × 2 B KV scalars
