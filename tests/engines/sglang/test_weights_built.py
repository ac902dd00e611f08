"""What SGLang 0.5.23's own model classes build beyond the checkpoint's tensors (engines/sglang/weights_built.py).

Expected figures: the engine's classes built on the meta device by benchmarks/engine_diff (each stage's
`named_parameters()` bytes, tests/data/engine_diff/sglang-0.5.23.flags.json, sm90), and the shapes those runs
listed (benchmarks/engine_diff/param_shapes.py), quoted in each test. Never kvtop's own figures.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.engine_diff.kvtop_side import kvtop_plan
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.sglang.nvfp4_experts import swizzled_scales, unaligned_scales
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.data_paths import DATA

FP8, FP32 = 1, 4
AT_0_5_23 = ResolvedVersion(text="0.5.23", source=VersionSource.FLAG)


def _row(config: str, variant: str, kv: str = "auto") -> dict[str, Any]:
    rows = json.loads((DATA / "engine_diff" / "sglang-0.5.23.flags.json").read_text())["results"]
    return next(r for r in rows if r["config"] == config and r.get("variant") == variant and r["kv_dtype"] == kv)


def _model(config: str) -> ModelSpec:
    folder = next(f for f in (DATA / "configs", DATA / "engine_diff" / "configs") if (f / f"{config}.json").exists())
    beside = folder / f"{config}.hf_quant_config.json"
    return model_from_config(json.loads((folder / f"{config}.json").read_text()), source=config,
                             hf_quant_config=json.loads(beside.read_text()) if beside.exists() else None)  # fmt: skip


def _built(config: str, layout: ParallelLayout, gpu: str = "H100") -> dict[str, int]:
    """The rows a rank holds after the load beyond the book (what the plan sizes with)."""
    model = _model(config)
    rows = engine_rules("sglang").weights_built(model, layout, range(model.num_layers), gpu, AT_0_5_23)
    return {row.component: row.bytes for row in rows}


def _released(config: str, layout: ParallelLayout, gpu: str = "H100") -> dict[str, int]:
    """The rows the classes build and the load frees (in the meta-built count only)."""
    model = _model(config)
    rows = engine_rules("sglang").weights_released(model, layout, range(model.num_layers), gpu, AT_0_5_23)
    return {row.component: row.bytes for row in rows}


@pytest.mark.parametrize(
    ("config", "variant"),
    [
        ("nvidia--Qwen3-235B-A22B-NVFP4", "ep"),  # A14: swizzled scales, every expert's input scales
        ("nvidia--Qwen3-235B-A22B-NVFP4", "pp2"),
        ("nvidia--Qwen3-235B-A22B-NVFP4", "pp4"),
        ("nvidia--DeepSeek-V3-0324-NVFP4", "ep"),  # A14 and A9's k/v scales
        ("nvidia--DeepSeek-V3-0324-NVFP4", "pp2"),  # without EP the shared expert fused and swizzled too
        ("nvidia--DeepSeek-V3-0324-NVFP4", "pp4"),
        ("nvidia--DeepSeek-V3.2-NVFP4", "ep"),  # DeepseekV32: no fusion
        ("nvidia--DeepSeek-V3.2-NVFP4", "pp2"),
        ("deepseek-ai--DeepSeek-V3", "pp2"),  # A9: an fp8 checkpoint's attn_mqa / attn_mha k/v scales
        ("moonshotai--Kimi-K2-Instruct", "ep"),
        ("MiniMaxAI--MiniMax-M2.5", "ep"),
        ("nvidia--Llama-3.1-70B-Instruct-FP8", "pp2"),  # A9: ModelOpt FP8 with kv_cache_quant_algo FP8
        ("Qwen--Qwen3-Next-80B-A3B-Thinking", "ep"),  # A12: the fused shared expert whole under EP
    ],
)
def test_each_stage_weighs_what_sglang_builds(config: str, variant: str) -> None:
    row = _row(config, variant)
    plan = kvtop_plan("sglang", "0.5.23", row)
    assert plan["status"] == "ok"
    engine = [sum(stage["param_bytes"].values()) for stage in row["stages"]]
    assert [stage["weights_bytes"] for stage in plan["stages"]] == engine


def test_nvfp4_experts_hold_their_block_scales_twice_on_marlin() -> None:
    """Qwen3-235B-A22B-NVFP4, TP 2 + EP 2, 94 MoE layers of 64 local experts (of 128): w13_blockscale_swizzled
    [64, 3072, 256] and w2_blockscale_swizzled [64, 4096, 96] float8, and w13_input_scale [128, 2] with
    w2_input_scale [128] fp32 where the checkpoint's rank holds 64 experts' (docs/fidelity.md: 7,096,834,560 B).
    On an H100 (SM 9.0) `create_moe_runner` picks Marlin at `auto` and process_weights_after_loading returns after
    repacking for it (modelopt_quant.py:3117-3120, :2738-2764), before the alias: all held after the load too."""
    built = _built("nvidia--Qwen3-235B-A22B-NVFP4", ParallelLayout(tp=2, ep=2))
    swizzled = 94 * 64 * (3_072 * 256 + 4_096 * 96) * FP8
    inputs = 94 * (128 - 64) * (2 + 1) * FP32
    assert built == {"expert_scales": swizzled + inputs} and swizzled + inputs == 7_096_834_560
    assert _released("nvidia--Qwen3-235B-A22B-NVFP4", ParallelLayout(tp=2, ep=2)) == {}


def test_on_blackwell_the_load_aliases_the_copy() -> None:
    """The same launch on an RTX PRO 6000 (SM 12.0: `flashinfer_cutlass` at `auto`, arg_groups/overrides.py
    `_moe_runner_backend_quant_constraints`): the classes build the same placeholders, and the CUTLASS branch
    writes the swizzled scales into w13/w2_weight_scale and re-registers each placeholder as them
    (`alias_or_bind_derived_param`, layers/utils/common.py:74-106) since [64, 3072, 256] and [64, 4096, 96] are
    already multiples of 128 rows and 4 columns: only the input scales stay resident; the copies are released."""
    swizzled = 94 * 64 * (3_072 * 256 + 4_096 * 96) * FP8
    inputs = 94 * (128 - 64) * (2 + 1) * FP32
    layout = ParallelLayout(tp=2, ep=2)
    assert _built("nvidia--Qwen3-235B-A22B-NVFP4", layout, gpu="RTXPRO6000") == {"expert_scales": inputs}
    assert _released("nvidia--Qwen3-235B-A22B-NVFP4", layout, gpu="RTXPRO6000") == {
        "aliased_blockscale_swizzled": swizzled}


def test_a_padded_scale_keeps_its_placeholder() -> None:
    """Qwen3-235B-A22B-NVFP4 at TP 8 (no EP) on an RTX PRO 6000: each expert's shard is 1,536 ÷ 8 = 192 wide, so
    w13's scales are [128, 384, 256] and w2's [128, 4096, 12]: multiples of 128 rows and 4 columns, aliased. Where a
    padded shape is not the scales' own `torch.broadcast_to` fails and `copy_or_rebind_param` fills the placeholder,
    kept beside the scales: a hidden size of 2,880 (not a multiple of 128) with 512-wide gated experts and groups of
    16 has w13 [1,024, 180] (aligned) and w2 [2,880, 32], padded to 2,944 rows: 2,944 × 32 entries kept an expert.
    (A gated expert whose w13 rows need padding fails SGLang's own assert, modelopt_quant.py:3014-3021.)"""
    assert _built("nvidia--Qwen3-235B-A22B-NVFP4", ParallelLayout(tp=8), gpu="RTXPRO6000") == {}
    assert _released("nvidia--Qwen3-235B-A22B-NVFP4", ParallelLayout(tp=8), gpu="RTXPRO6000") == {
        "aliased_blockscale_swizzled": 94 * 128 * (384 * 256 + 4_096 * 12) * FP8}
    assert unaligned_scales(2, 512, 2_880, 16) == 2_944 * 32
    assert swizzled_scales(2, 512, 2_880, 16) == 1_024 * 180 + 2_944 * 32
    assert unaligned_scales(2, 192, 4_096, 16) == 0


def test_deepseek_v3_fuses_its_shared_expert_without_ep() -> None:
    """DeepSeek-V3-0324-NVFP4 at TP 2 (no EP): 58 MoE layers, w13_blockscale_swizzled [257, 2048, 448] and
    w2 [257, 7168, 64] (256 routed + the fused shared expert, each 1,024 wide a rank); the input scales are the
    rank.s (every expert). Held on Marlin (H100); on an RTX PRO 6000 aliased after the load."""
    copies = 58 * 257 * (2_048 * 448 + 7_168 * 64) * FP8
    assert _built("nvidia--DeepSeek-V3-0324-NVFP4", ParallelLayout(tp=2)) == {"expert_scales": copies}  # k/v: the book's
    assert _built("nvidia--DeepSeek-V3-0324-NVFP4", ParallelLayout(tp=2), gpu="RTXPRO6000") == {}
    assert _released("nvidia--DeepSeek-V3-0324-NVFP4", ParallelLayout(tp=2), gpu="RTXPRO6000") == {
        "aliased_blockscale_swizzled": copies}


def test_no_swizzled_copies_on_flashinfer_trtllm_moe() -> None:
    """On SM100 SGLang runs the DeepSeek family's MoE on FlashInfer TRT-LLM (overrides.py
    _deepseek_moe_quant_resolution), whose create_weights sets the swizzled copies to None; the input scales
    of all 256 experts stay (EP 2: 128 others × 12 B × 58 layers)."""
    built = _built("nvidia--DeepSeek-V3-0324-NVFP4", ParallelLayout(tp=2, ep=2), gpu="B200")
    assert built["expert_scales"] == 58 * 128 * 3 * FP32
    assert _released("nvidia--DeepSeek-V3-0324-NVFP4", ParallelLayout(tp=2, ep=2), gpu="B200") == {}


def test_qwen3_next_shared_expert_whole_on_each_ep_rank() -> None:
    """Qwen3-Next-80B-A3B at TP 2 + EP 2: experts.w13_weight [257, 1024, 2048] (256 local + the shared expert,
    512 wide like the routed ones), so each rank holds the shared expert's other half too: 48 layers ×
    3 × 512 × 2,048 × 2 B ÷ 2. Without EP the fused expert splits over TP as the book's shared expert does."""
    assert _built("Qwen--Qwen3-Next-80B-A3B-Thinking", ParallelLayout(tp=2, ep=2)) == {
        "fused_shared_expert": 48 * 3 * 512 * 2_048 * 2 // 2
    }
    assert _built("Qwen--Qwen3-Next-80B-A3B-Thinking", ParallelLayout(tp=2)) == {}


def test_qwen3_next_fused_expert_splits_over_the_moe_tp_under_ep() -> None:
    """TP 4 + EP 2: FusedMoE splits each expert, the fused one too, over TP ÷ EP = 2 (intermediate_size_per_partition,
    layers/moe/fused_moe_triton/layer.py); the book's shared expert is over TP 4: 48 × 3 × 512 × 2,048 × 2 B × (½ − ¼)."""
    assert _built("Qwen--Qwen3-Next-80B-A3B-Thinking", ParallelLayout(tp=4, ep=2)) == {
        "fused_shared_expert": 48 * 3 * 512 * 2_048 * 2 // 4
    }


def test_qwen3_passes_no_quant_config_to_its_attention() -> None:
    """qwen3.py builds RadixAttention without the quant config: an FP8 Qwen3 has no k/v scales (its stages equal)."""
    assert _built("Qwen--Qwen3-32B-FP8", ParallelLayout(tp=2)) == {}


def test_releases_before_0_5_23_keep_the_book() -> None:
    model = _model("nvidia--Qwen3-235B-A22B-NVFP4")
    rules = engine_rules("sglang")
    before = ResolvedVersion(text="0.5.6.post2", source=VersionSource.FLAG)
    assert rules.weights_built(model, ParallelLayout(tp=2, ep=2), range(94), "H100", before) == ()


@pytest.mark.parametrize("config", ["deepseek-ai--DeepSeek-V3.2", "zai-org--GLM-5"])
def test_dsa_refuses_fp8_e5m2_kv(config: str) -> None:
    """S19: the engine's fp8_e5m2 run refused ('DeepSeek DSA only supports bf16/bfloat16 or fp8_e4m3
    kv_cache_dtype', srt/arg_groups/overrides.py); kvtop's plan refuses it naming the flag."""
    row = _row(config, "fp8_e5m2", kv="fp8_e5m2")
    assert row["status"] == "refused" and "DSA only supports" in json.dumps(row)
    plan = kvtop_plan("sglang", "0.5.23", row)
    assert plan["status"] == "refused" and plan["message"].startswith("--kv-cache-dtype:")
    assert "only supports bf16/bfloat16 or fp8_e4m3" in plan["message"]


def _calibration_inputs(config: str, tp: int) -> Any:
    from kvtop.domain.calibration.inputs import CalibrationInputs
    from kvtop.domain.launch import LaunchSettings

    model = model_from_config(json.loads((DATA / config).read_text()), source=config)
    layout = ParallelLayout(tp=tp)
    book = weights_book(model, layout, range(model.num_layers), first_stage=True, last_stage=True).total_bytes
    settings = LaunchSettings(engine="sglang", tp=tp)
    return CalibrationInputs(model=model, settings=settings, layout=layout, gpu_name="H100", gpu_total_bytes=80 << 30,
                             version=AT_0_5_23, weights_bytes=book, context_length=model.max_position_embeddings)  # fmt: skip


@pytest.mark.parametrize(
    ("record", "config", "tp", "logged_gib"),
    [
        ("sglang-pr4760-llama-3.1-8b-h100", "configs/meta-llama--Llama-3.1-8B-Instruct.json", 1, 15.11),
        ("case-sglang-C13-llama-3.1-8b-80gb", "configs/meta-llama--Llama-3.1-8B-Instruct.json", 1, 78.81 - 63.72),
        ("my-deepseek-r1-distill-qwen-7b-3090", "configs/Qwen--Qwen2.5-7B.json", 1, 22.76 - 8.37),
    ],
)
def test_rope_cache_brings_the_book_to_the_logged_weights(record: str, config: str, tp: int, logged_gib: float) -> None:
    """SGLang keeps the rope's cos/sin cache in float32 on CUDA (rotary_embedding/base.py): 131,072 positions ×
    128 × 4 B = 64 MiB for both models. The weights SGLang printed for each record
    (tests/data/calibration/sglang.jsonl: `mem usage`, or free memory before less after the load, in GiB) lie
    above the book; with the cache the book is nearer, and still below (the load holds more than kvtop models)."""
    from kvtop.domain.engines.sglang.weights_held import held_beside, rope_cache

    logged = next(json.loads(line) for line in (DATA / "calibration" / "sglang.jsonl").read_text().splitlines()
                  if json.loads(line)["id"] == record)  # fmt: skip
    assert logged["config"].endswith(config.rsplit("/", 1)[1])
    inputs = _calibration_inputs(config, tp)
    rope, held = rope_cache(inputs), held_beside(inputs)
    assert rope is not None and rope[0] == 131_072 * 128 * 4 == 67_108_864
    assert held is not None and held[0] >= rope[0]  # and the allocator's rounding (test_allocator_rounding.py)
    book, target = inputs.weights_bytes, logged_gib * (1 << 30)
    assert book < book + held[0] < target


def test_rope_cache_keeps_the_configs_positions_under_a_shorter_context_length() -> None:
    """SGLang builds each rope's cache from the config's `max_position_embeddings` (models/llama.py passes it
    to `get_rope`; `RotaryEmbedding._compute_cos_sin_cache` makes that many rows of rotary_dim float32 values),
    and `--context-length` does not reach it: `ModelConfig._derive_context_length` (srt/configs/model_config.py)
    sets `context_len` and overrides `max_position_embeddings` for a draft model only. The one change after the
    build, `reserve_rope_cache_for_long_sequences` (srt/utils/common.py, called after `Load weight end` is
    measured), only grows a cache shorter than the context + 256 rows. So an 8,192-token launch of
    Llama-3.1-8B holds the full 131,072 × 128 × 4 B = 64 MiB at the load's measure, as the default launch does."""
    from kvtop.domain.calibration.inputs import CalibrationInputs
    from kvtop.domain.engines.sglang.weights_held import rope_cache
    from kvtop.domain.launch import LaunchSettings

    default = _calibration_inputs("configs/meta-llama--Llama-3.1-8B-Instruct.json", 1)
    short = CalibrationInputs(**{**dict(default), "settings": LaunchSettings(engine="sglang", context_length=8192),
                                 "context_length": 8192})  # fmt: skip
    held_default, held_short = rope_cache(default), rope_cache(short)
    assert held_default is not None and held_short is not None
    assert held_short[0] == held_default[0] == 131_072 * 128 * 4


def test_grok2_builds_a_scaled_rope_on_each_layer() -> None:
    """xAI's Grok-2 config.json (tests/data/configs/heldout/xai-org--grok-2.json) states `rope_type` "original",
    `original_max_position_embeddings` 8,192 and `scaling_factor` 16.0 at its top level, so SGLang's grok.py
    (read in 0.5.2rc2: `get_rope_scaling`, then `ScalingRotaryEmbedding(...)` built in each `Grok1Attention`,
    not through `get_rope`) holds one cache per layer: `torch.arange(8192 * 16.0)` = 131,072 positions ×
    rotary_dim 128 × 4 B (float32 on CUDA) = 67,108,864 B, × 64 layers = 4,294,967,296 B on every rank, beside
    the shared `get_rope` module over max_position_embeddings 131,072 × 128 × 4 B = 67,108,864 B. 0.5.0rc2's
    grok.py has no `get_rope_scaling`: the shared cache only. The start logged at 0.5.2rc2 with
    `--quantization fp8` at TP 8 (tests/data/calibration/sglang.jsonl, `mem usage=36.73 GB`) holds more than
    that rank's FP8 book (33,441,185,792 B of layers + 2 × 131,072 ÷ 8 × 8,192 × 2 B of embedding and head, by
    the shapes in grok.py) with both caches: 1.02 GiB stay unmodelled (docs/engines/sglang.md §20.1)."""
    from kvtop.domain.engines.sglang.weights_held import layer_ropes, rope_cache

    def held_beside(at: CalibrationInputs) -> tuple[int, str]:  # the two ropes (the allocator's rounding apart)
        parts = [part for part in (rope_cache(at), layer_ropes(at)) if part is not None]
        return sum(size for size, _ in parts), ""

    inputs = _calibration_inputs("configs/heldout/xai-org--grok-2.json", 8)
    at_0_5_2rc2 = inputs.model_copy(update={"version": ResolvedVersion(text="0.5.2rc2", source=VersionSource.FLAG)})
    at_0_5_0rc2 = inputs.model_copy(update={"version": ResolvedVersion(text="0.5.0rc2", source=VersionSource.FLAG)})
    shared, per_layer = 131_072 * 128 * 4, 64 * 131_072 * 128 * 4
    held, before = held_beside(at_0_5_2rc2), held_beside(at_0_5_0rc2)
    assert held is not None and before is not None
    assert (shared, per_layer) == (67_108_864, 4_294_967_296)
    assert held[0] == shared + per_layer and before[0] == shared
    fp8_book = 33_441_185_792 + 2 * (131_072 // 8) * 8_192 * 2
    assert fp8_book + held[0] < 36.73 * (1 << 30) < fp8_book + held[0] + (1 << 30) * 1.03
