"""SGLang's own builds of GLM-5 and MiniMax-M3 fixed by the registry sweep (docs/fidelity_registry.md): each expected
figure is SGLang 0.5.23's model class built on the meta device at TP 1 (`python benchmarks/engine_diff/registry_sweep.py
--engine sglang --params <config> --tps 1`: its named_parameters' shapes and dtypes), summed by hand here.
"""

from __future__ import annotations

import json
from pathlib import Path

from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.sglang.layer_build import fuses_indexer_wk
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import WeightsBook, weights_book

HELDOUT = Path(__file__).resolve().parents[1] / "data" / "configs" / "heldout"
CONFIGS = HELDOUT.parent
FP8, BF16, FP32 = 1, 2, 4
SGLANG = ResolvedVersion(text="0.5.23", source=VersionSource.FLAG)
# a release before the rules were read: the book's own count
OLDER = ResolvedVersion(text="0.5.6.post2", source=VersionSource.FLAG)


def model(path: Path) -> ModelSpec:
    beside = path.with_name(path.stem + ".hf_quant_config.json")
    quant = json.loads(beside.read_text()) if beside.exists() else None
    return model_from_config(json.loads(path.read_text()), source=path.stem, hf_quant_config=quant)


def sglang_book(m: ModelSpec, version: ResolvedVersion = SGLANG, gpu: str = "H100") -> WeightsBook:
    """One TP-1 rank's book as kvtop's SGLang plan builds it: the stage parts, the tower split and the engine rows."""
    rules = engine_rules("sglang")
    layout, layers = ParallelLayout(tp=1), range(m.num_layers)
    book = weights_book(m, layout, layers, first_stage=True, last_stage=True,
                        tower_split=rules.architectures.TOWER_SPLIT, parts=rules.stage_parts(m, 0, 1, version))  # fmt: skip
    built = rules.weights_built(m, layout, layers, gpu, version)
    return WeightsBook(rows=(*book.rows, *built))


def row(b: WeightsBook, component: str) -> int:
    return sum(r.bytes for r in b.rows if r.component == component)


def test_sglang_fuses_glm5s_indexer_wk_into_a_bf16_projection() -> None:
    """GLM-5-FP8 (indexer_rope_interleave true): SGLang 0.5.23 builds each of the 78 layers' indexer
    `wk_weights_proj.weight` [128 + 32, 6144] bfloat16, no scale, where the checkpoint's wk is FP8 in 128 × 128
    blocks. The layer's attention as meta-built: fused_qkv_a_proj_with_mqa [2624, 6144] fp8 + scale_inv [21, 48]
    fp32, q_b_proj [16384, 2048] + [128, 16], indexer.wq_b [4096, 2048] + [32, 16], kv_b_proj [28672, 512] + [224,
    4], o_proj [6144, 16384] + [48, 128], the four fp32 k/v scales of attn_mqa and attn_mha (the sweep's
    746,191,422,816 B at TP 1; kvtop had wk in FP8 blocks, 61,326,720 B short)."""
    m = model(HELDOUT / "zai-org--GLM-5-FP8.json")
    assert m.dsa_index_rope_interleaved and fuses_indexer_wk(m, SGLANG)
    blocks = 2624 * 6144 + 21 * 48 * FP32 + 16384 * 2048 + 128 * 16 * FP32 + 4096 * 2048 + 32 * 16 * FP32
    blocks += 28672 * 512 + 224 * 4 * FP32 + 6144 * 16384 + 48 * 128 * FP32
    per_layer = blocks * FP8 + 160 * 6144 * BF16 + 4 * FP32
    assert row(sglang_book(m), "attention") == 78 * per_layer
    # kvtop's gap at 0.5.23 before this rule: wk in FP8 blocks (128 × 6144 B + 1 × 48 fp32 scales) beside a bf16
    # weights_proj [32, 6144], 786,240 B a layer less than the fused projection
    wk_fp8 = 128 * 6144 * FP8 + 1 * 48 * FP32
    assert 160 * 6144 * BF16 - (wk_fp8 + 32 * 6144 * BF16) == 786_240 == 61_326_720 // 78
    # 0.5.6.post2's Indexer (nsa_indexer.py): wk with the quant config, weights_proj fp32, no k/v scales counted
    assert row(sglang_book(m, OLDER), "attention") == 78 * (blocks * FP8 + wk_fp8 + 32 * 6144 * FP32)


def test_deepseek_v32s_neox_indexer_keeps_wk_in_the_checkpoints_format() -> None:
    """DeepSeek-V3.2 states no indexer_rope_interleave: `is_neox_style` true, no fusion; the sweep's SGLang rows
    of it read equal with wk in FP8 blocks (its `indexer.wk.weight` [128, 7168] float8 meta-built)."""
    m = model(CONFIGS / "deepseek-ai--DeepSeek-V3.2.json")
    assert not m.dsa_index_rope_interleaved and not fuses_indexer_wk(m, SGLANG)
    assert engine_rules("sglang").stage_parts(m, 0, 1, SGLANG).unquantized == ()


def test_sglang_fuses_glm5s_shared_expert_with_its_nvfp4_scales_swizzled() -> None:
    """GLM-5-NVFP4 on SGLang 0.5.23: GlmMoeDsaForCausalLM's `fused_shared_experts_architecture` is its own name, so
    the shared expert joins the 256 routed ones: w13_blockscale_swizzled [257, 4096, 384] and w2_blockscale_swizzled
    [257, 6144, 128] float8 on each of the 75 MoE layers (45,475,430,400 B; kvtop had swizzled 256 experts'
    scales, 176,947,200 B short)."""
    m = model(HELDOUT / "nvidia--GLM-5-NVFP4.json")
    assert row(sglang_book(m), "expert_scales") == 75 * 257 * (4096 * 384 + 6144 * 128) == 45_475_430_400


def test_sglang_builds_minimax_m3s_router_in_bf16_and_its_towers_post_norm() -> None:
    """MiniMax-M3-NVFP4 on SGLang 0.5.23: each of the 57 MoE layers' `mlp.gate.weight` [128, 6144] bfloat16
    (SGLANG_OPT_USE_BF16_ROUTER_GEMM on by default) and `mlp.e_score_correction_bias` [128] float32, 89,682,432 B
    (kvtop had vLLM's fp32 gate, 89,653,248 B more); its vision tower's `post_layernorm` weight and bias [1280]
    bfloat16, which vLLM does not build: the tower 1,731,139,584 B meta-built, vLLM's 1,731,134,464 B."""
    m = model(HELDOUT / "nvidia--MiniMax-M3-NVFP4.json")
    book = sglang_book(m)
    assert row(book, "router") == 57 * (128 * 6144 * BF16 + 128 * FP32) == 89_682_432
    assert row(book, "vision") == 1_731_139_584 == 1_731_134_464 + 2 * 1280 * BF16
    assert row(sglang_book(m, OLDER), "router") == 57 * (128 * 6144 * FP32 + 128 * FP32)


def test_sglang_wna16_experts_hold_their_shape_tensors() -> None:
    """Kimi-K2.5 (compressed-tensors int4 group 32, no act-order) on SGLang 0.5.23 on Hopper: CompressedTensorsWNA16MoE
    meta-builds `experts.w13_weight_shape` and `w2_weight_shape` [384, 2] bfloat16 on each of the 60 MoE layers,
    kept after loading: 184,320 B. (Its w13/w2 g_idx and sort indices, [384, 7168] and [384, 2048] int32, are
    emptied by the Marlin method's process_weights_after_loading: the sweep's row reads the loaded model, 594,205,536,256 B
    at TP 1.)"""
    m = model(HELDOUT / "moonshotai--Kimi-K2.5.json")
    assert (
        row(sglang_book(m), "routed_experts") - row(sglang_book(m, OLDER), "routed_experts")
        == 60 * 384 * 2 * 2 * BF16
    )
    assert engine_rules("sglang").stage_parts(m, 0, 1, SGLANG).wna16_expert_scalars == 4


def test_sglangs_triton_wna16_moe_keeps_its_act_order_indices_on_sm100() -> None:
    """On SM100 SGLang 0.5.23 serves Kimi-K2.5's int4 group-32 symmetric experts with CompressedTensorsWNA16TritonMoE,
    whose process_weights_after_loading keeps the indices create_weights registered: meta-built (the sweep's TP-1
    build, `--params`) `experts.w13_weight_g_idx` and `w13_g_idx_sort_indices` [384, 7168] int32, `w2_weight_g_idx`
    and `w2_g_idx_sort_indices` [384, 2048] int32 on each of the 60 MoE layers: 1,698,693,120 B. On Hopper the
    Marlin method empties them: no row."""
    m = model(HELDOUT / "moonshotai--Kimi-K2.5.json")
    # the four tensors' bytes over 60 layers
    meta_built = 660_602_880 + 188_743_680 + 660_602_880 + 188_743_680
    assert row(sglang_book(m, gpu="B200"), "wna16_act_order") == meta_built == 1_698_693_120
    assert row(sglang_book(m), "wna16_act_order") == 0
    assert row(sglang_book(m, OLDER, gpu="B200"), "wna16_act_order") == 0


def test_sglang_0_5_6_builds_the_dsa_indexers_weights_proj_in_fp32() -> None:
    """SGLang 0.5.6.post2's nsa_indexer.py Indexer builds `weights_proj` [index_n_heads, hidden] with
    params_dtype=torch.float32. Its meta build of DeepSeek-V3.2 at TP 2 (`python benchmarks/engine_diff/param_shapes.py
    --engine sglang --version 0.5.6.post2 --tp 2 --configs deepseek-ai--DeepSeek-V3.2`, the answer's stage
    param_bytes): model 337,153,669,008 B + lm_head 926,679,040 B, of which 61 × 4 × 4 B are the attn_mqa/attn_mha
    k/v scales kvtop counts from 0.5.23 only (kv_scales.py); the rest is kvtop's book, 61 × 64 × 7,168 × 2 B more
    than with a bf16 weights_proj."""
    m = model(CONFIGS / "deepseek-ai--DeepSeek-V3.2.json")
    rules = engine_rules("sglang")
    layout, layers = ParallelLayout(tp=2), range(m.num_layers)

    def total(version: ResolvedVersion) -> int:
        parts = rules.stage_parts(m, 0, 1, version)
        book = weights_book(m, layout, layers, first_stage=True, last_stage=True,
                            tower_split=rules.architectures.TOWER_SPLIT, parts=parts)  # fmt: skip
        return book.total_bytes + sum(
            r.bytes for r in rules.weights_built(m, layout, layers, "H100", version)
        )

    engine = 337_153_669_008 + 926_679_040
    assert total(OLDER) == engine - 61 * 4 * FP32
    assert total(OLDER) - (total(SGLANG) - 61 * 4 * FP32) == 61 * 64 * 7168 * (FP32 - BF16)
