"""The weights book's small tensors against the engines' own model classes, built on the meta device.

Each expected figure is the arithmetic of the parameter shapes and dtypes that SGLang 0.5.23 (and, where the
differential fixture's figure is the same, vLLM 0.33.0) builds for the config at TP 2 with expert parallel
(`named_parameters()` of the model benchmarks/engine_diff builds, docs/fidelity.md's architecture table);
the shapes are quoted in each test, per rank.
"""

from __future__ import annotations

import json
from pathlib import Path

from kvtop.domain.engines.sglang.architectures import TOWER_SPLIT as SGLANG_BUILD
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import WeightsBook, weights_book
from tests.conftest import CONFIGS

HARNESS = Path(__file__).resolve().parents[1] / "data" / "engine_diff" / "configs"
BF16, FP32 = 2, 4


def model(name: str) -> ModelSpec:
    """A config the differential harness ran (tests/data/configs first, as benchmarks/engine_diff/cases.py)."""
    path = next(p for p in (CONFIGS / f"{name}.json", HARNESS / f"{name}.json") if p.exists())
    return model_from_config(json.loads(path.read_text()), source=name)


def book(m: ModelSpec, tp: int = 2, ep: int = 2) -> WeightsBook:
    layout = ParallelLayout(tp=tp, ep=ep)
    return weights_book(m, layout, range(m.num_layers), first_stage=True, last_stage=True)


def row(b: WeightsBook, component: str) -> int:
    return next(r.bytes for r in b.rows if r.component == component)


def test_gpt_oss_router_bias_is_the_linear_bias_in_bf16() -> None:
    """gpt-oss-20b, 24 layers: mlp.router.weight [32, 2880] and mlp.router.bias [32], both bfloat16 (an nn
    Linear with a bias); DeepSeek's score correction is the fp32 one. The engines' language model is
    6,883,055,232 B a rank (TP2+EP; kvtop had +1,536: the bias read as fp32)."""
    b = book(model("openai--gpt-oss-20b"))
    assert row(b, "router") == 24 * (32 * 2_880 + 32) * BF16 == 4_425_216
    assert b.total_bytes == 6_883_055_232


def test_llama4_scout_qk_norm_has_no_weight() -> None:
    """Llama-4-Scout (use_qk_norm true): the engines' q/k norm is a weightless L2 norm (vLLM Llama4Attention
    RMSNorm(has_weight=False)); the norms are input_layernorm and post_attention_layernorm [5120] × 48 and the
    final norm [5120], bf16. Language model 107,774,289,920 B a rank (kvtop had +24,576: 48 × 2 × 128 × 2 B)."""
    b = book(model("meta-llama--Llama-4-Scout-17B-16E-Instruct"))
    assert row(b, "norms") == (48 * 2 + 1) * 5_120 * BF16 == 993_280
    assert b.total_bytes - row(b, "vision") == 107_774_289_920


def test_qwen3_next_full_attention_has_its_output_gate() -> None:
    """Qwen3-Next-80B-A3B: q_proj emits the output gate too (Qwen3NextAttention: 2 × heads × head_dim);
    qkv_proj [4608, 2048] = 2 × 8 × 256 + 2 × 1 × 256 and o_proj [2048, 2048] on each of 12 full layers."""
    b = book(model("Qwen--Qwen3-Next-80B-A3B-Thinking"))
    assert row(b, "attention") == 12 * (4_608 * 2_048 + 2_048 * 2_048) * BF16 == 327_155_712


def test_gated_delta_net_keeps_a_log_in_fp32() -> None:
    """Qwen3-Next's 36 gated-delta-net layers: A_log [16] float32, dt_bias [16] bf16, conv1d [4096, 1, 4],
    in_proj_qkvz [6144, 2048], in_proj_ba [32, 2048], out_proj [2048, 2048], all bf16 but A_log (the same
    in vLLM: its Qwen3-Next and Qwen3.5 figures moved by the same 16 × 2 B a layer)."""
    b = book(model("Qwen--Qwen3-Next-80B-A3B-Thinking"))
    per_layer = 16 * FP32 + 16 * BF16 + (4_096 * 4 + 6_144 * 2_048 + 32 * 2_048 + 2_048 * 2_048) * BF16
    assert row(b, "linear_attention") == 36 * per_layer == 1_213_861_248


def test_mamba2_a_in_fp32_and_its_gated_norm_split_over_tp() -> None:
    """Nemotron-3-Nano's 23 Mamba2 mixers: A [32] float32, D and dt_bias [32] bf16, conv1d [3072, 1, 4] and its
    bias [3072], in_proj [5152, 2688], out_proj [2688, 2048]; the gated norm [2048] is the inner 4,096 split
    over TP (Mixer2RMSNormGated). Language model 31,586,006,528 B a rank in both engines."""
    b = book(model("nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16"))
    mixer = 32 * FP32 + 2 * 32 * BF16 + (3_072 * 4 + 3_072 + 5_152 * 2_688 + 2_688 * 2_048) * BF16
    assert row(b, "linear_attention") == 23 * mixer
    assert b.total_bytes == 31_586_006_528


def test_mamba2_groups_repeated_where_tp_does_not_divide_them() -> None:
    """Granite-4.0-H-Small (n_groups 1) at TP 2: the one B/C group is repeated on each rank
    (extra_groups_for_head_shards): in_proj [8512, 4096] = (2 × 8192 + 2 × 2 × 128 + 128) / 2 and
    conv1d [4352, 1, 4] = (8192 + 2 × 2 × 128) / 2, with A [64] fp32 — 3,719,835,648 B over 36 mixers."""
    b = book(model("ibm-granite--granite-4.0-h-small.RECONSTRUCTED"))
    mixer = 64 * FP32 + 2 * 64 * BF16 + (4_352 * 4 + 4_352 + 8_512 * 4_096 + 4_096 * 4_096) * BF16
    assert row(b, "linear_attention") == 36 * mixer == 3_719_835_648
    assert b.total_bytes == 32_257_265_664


def test_glm5_gate_in_bf16_and_the_indexer_k_norm_in_fp32() -> None:
    """GLM-5: gate.weight [256, 6144] bfloat16 and e_score_correction_bias [256] float32 on 75 MoE layers; the
    DSA indexer's k_norm is a LayerNorm whose weight and bias [128] are float32 on each of 78 layers. The
    language model is 746,018,958,336 B a rank in both engines (kvtop had +235,889,664)."""
    b = book(model("zai-org--GLM-5"))
    assert row(b, "router") == 75 * (256 * 6_144 * BF16 + 256 * FP32) == 236_006_400
    norms = 78 * ((2_048 + 512 + 2 * 6_144) * BF16 + 2 * 128 * FP32) + 6_144 * BF16
    assert row(b, "norms") == norms
    assert b.total_bytes == 746_018_958_336


def test_gpt_oss_down_bias_splits_only_over_expert_parallel() -> None:
    """gpt-oss-120b at TP 2 without EP, the second of two pipeline stages (layers 18–35): SGLang's experts hold
    w13_weight_bias [128, 2880] (2 × 2,880 ÷ 2) but w2_weight_bias [128, 2880] whole (the hidden width a
    RowParallel bias never splits): 2 × 128 × 2,880 × 2 B a layer. The stage's language model, its LM head
    and final norm with it, is 16,325,637,120 B a rank (kvtop had −6,635,520: the w2 bias halved)."""
    m = model("openai--gpt-oss-120b")
    one = weights_book(m, ParallelLayout(tp=2), range(18, 19), first_stage=False, last_stage=False)
    none = m.model_copy(update={"moe": m.moe.model_copy(update={"expert_bias": False})}) if m.moe else m
    bare = weights_book(none, ParallelLayout(tp=2), range(18, 19), first_stage=False, last_stage=False)
    assert row(one, "routed_experts") - row(bare, "routed_experts") == 2 * 128 * 2_880 * BF16 == 1_474_560
    stage = weights_book(m, ParallelLayout(tp=2), range(18, 36), first_stage=False, last_stage=True)
    assert stage.total_bytes == 16_325_637_120


def test_sglang_gemma3_embedding_is_whole_on_every_rank() -> None:
    """Gemma-3-27B on SGLang at TP 2: Gemma3TextScaledWordEmbedding is a plain nn.Embedding, embed_tokens
    [262208, 5376] bf16 whole on each rank (the tied LM head reads it); SGLang's meta-built language model is
    28,420,331,008 B a rank (the differential fixture's ctx4k row, `language_model`); kvtop split it over TP and
    was short by 262,208 × 5,376 × 2 ÷ 2 = 1,409,630,208 B."""
    m = model("google--gemma-3-27b-it")
    b = weights_book(m, ParallelLayout(tp=2), range(m.num_layers), first_stage=True, last_stage=True,
                     tower_split=SGLANG_BUILD)  # fmt: skip
    assert row(b, "embedding") == 262_208 * 5_376 * BF16
    assert b.total_bytes - row(b, "vision") == 28_420_331_008
    vllm = weights_book(m, ParallelLayout(tp=2), range(m.num_layers), first_stage=True, last_stage=True)
    assert row(vllm, "embedding") == 262_208 * 5_376 * BF16 // 2  # VocabParallelEmbedding (vLLM gemma3.py)


def test_sglang_gemma4_holds_v_on_k_eq_v_layers() -> None:
    """gemma-4-26B-A4B on SGLang, TP2+EP: its 5 full-attention layers build qkv_proj [5120, 2816] = 4,096 (q)
    + 512 (k) + 512 (v: attention_k_eq_v, K copied into it at load) and o_proj [2816, 4096]; the 25 sliding
    layers qkv_proj [4096, 2816], o_proj [2816, 2048]; embed_tokens [262144, 2816] whole. Language model
    26,597,913,184 B a rank less its vision tower and projector, 600,642,144 B."""
    m = model("google--gemma-4-26B-A4B")
    b = weights_book(m, ParallelLayout(tp=2, ep=2), range(m.num_layers), first_stage=True, last_stage=True,
                     tower_split=SGLANG_BUILD)  # fmt: skip
    full, sliding = 5 * (5_120 + 4_096) * 2_816, 25 * (4_096 + 2_048) * 2_816
    assert row(b, "attention") == (full + sliding) * BF16 == 1_124_597_760
    assert b.total_bytes - row(b, "vision") == 25_997_271_040


def test_modelopt_fp8_scales_are_per_tensor_and_whole_on_every_rank() -> None:
    """Llama-3.1-70B-Instruct-FP8 (ModelOpt FP8, hf_quant_config.json) at TP 2, the second stage of two (layers
    40–79): SGLang's ModelOptFp8LinearMethod holds per layer qkv_proj [5120, 8192] and o_proj [8192, 4096] in
    float8_e4m3fn with weight_scale and input_scale fp32 of one value per logical matrix, whole on each rank
    (qkv [3] + [3], o [1] + [1]); kvtop read a scale per output row (+8,353,280 B a stage). The stage is
    18,164,763,136 B a rank in SGLang, kvtop 320 B short: its RadixAttention's k_scale and v_scale (A9)."""
    name = "nvidia--Llama-3.1-70B-Instruct-FP8"
    quant = json.loads((CONFIGS / f"{name}.hf_quant_config.json").read_text())
    m = model_from_config(json.loads((CONFIGS / f"{name}.json").read_text()), source=name, hf_quant_config=quant)
    b = weights_book(m, ParallelLayout(tp=2), range(40, 80), first_stage=False, last_stage=True)
    assert row(b, "attention") == 40 * (5_120 * 8_192 + 8_192 * 4_096 + (3 + 3 + 1 + 1) * FP32) == 3_019_900_160
    assert b.total_bytes == 18_164_763_136 - 40 * 2 * FP32


def test_nvfp4_spares_the_latent_projections_and_keeps_per_tensor_scales() -> None:
    """DeepSeek-V3.2-NVFP4 (ModelOpt NVFP4 excluding self_attn.q_a_proj, q_b_proj, kv_a_proj_with_mqa, kv_b_proj and
    indexer*) at TP2+EP in vLLM 0.33: per layer bf16 fused_qkv_a_proj [2112, 7168], q_b_proj [12288, 1536],
    kv_b_proj [16384, 512], indexer.wq_b [8192, 1536] and wk_weights_proj [192, 7168]; o_proj NVFP4 [7168, 4096]
    uint8 with weight_scale [7168, 512] fp8 and weight_scale_2, input_scale [1] fp32. Each local expert's gate,
    up and down hold their own weight_scale_2 and input_scale (w13 [128, 2], w2 [128]). The language model is
    195,924,088,200 B a rank: kvtop 488 B short, the A2 scalars (61 × 4 × 2 B)."""
    name = "nvidia--DeepSeek-V3.2-NVFP4"
    quant = json.loads((HARNESS / f"{name}.hf_quant_config.json").read_text())
    m = model_from_config(json.loads((HARNESS / f"{name}.json").read_text()), source=name, hf_quant_config=quant)
    b = book(m)
    bf16 = 2_112 * 7_168 + 12_288 * 1_536 + 16_384 * 512 + 8_192 * 1_536 + 192 * 7_168
    o_proj = 7_168 * 4_096 + 7_168 * 512 + 2 * FP32
    assert row(b, "attention") == 61 * (bf16 * BF16 + o_proj) == 8_890_876_392
    assert b.total_bytes == 195_924_088_200 - 61 * 4 * BF16


def test_per_channel_scales_are_one_per_output_row_and_whole_on_row_parallel_matrices() -> None:
    """DeepSeek-V3.2-exp-ptpc (Quark per-channel FP8: an fp32 weight_scale per output row) at TP 2 with EP. Both
    engines' meta builds, per rank: o_proj.weight [7168, 8192] with weight_scale [7168] (row-parallel: its input
    split, every output row's scale on each rank); the dense layers' down_proj [7168, 9216] / weight_scale [7168]
    beside gate_up_proj [18432, 7168] / [18432]; shared_experts.down_proj [7168, 1024] / [7168] beside gate_up_proj
    [2048, 7168] / [2048]; experts.w2_weight [128, 7168, 2048] with w2_weight_scale [128, 7168] and w13_weight
    [128, 4096, 7168] with w13_weight_scale [128, 4096]. kvtop had one scale per intermediate row on every down
    projection and split o_proj's over TP: −154,319,824 B a rank."""
    b = book(model("haoyangli-amd--DeepSeek-V3.2-exp-ptpc"))
    assert row(b, "routed_experts") == 58 * (
        128 * 4_096 * 7_168 + 128 * 7_168 * 2_048 + (128 * 4_096 + 128 * 7_168) * FP32
    ) == 327_288_881_152
    assert row(b, "shared_experts") == 58 * (2_048 * 7_168 + 7_168 * 1_024 + (2_048 + 7_168) * FP32) == 1_279_303_680
    assert row(b, "mlp") == 3 * (18_432 * 7_168 + 7_168 * 9_216 + (18_432 + 7_168) * FP32) == 594_849_792
    # SGLang's language model is 338,290,618,064 B a rank: kvtop's book + the 61 layers' attn_mqa / attn_mha k and
    # v scales (4 fp32 scalars a layer, RadixAttention's BaseKVCacheMethod: A9 in docs/fidelity.md)
    assert b.total_bytes + 61 * 4 * FP32 == 338_290_618_064


def test_mamba2_in_proj_is_five_logical_matrices_each_with_its_per_tensor_scales() -> None:
    """Nemotron-3-Super-120B-A12B-FP8 (ModelOpt FP8 from its hf_quant_config.json) at TP 2 with EP: both engines
    build Mamba2's in_proj as a MergedColumnParallelLinear of z, x, B, C and dt (output_sizes; SGLang 0.5.23
    mamba.py, vLLM 0.33.0 mamba_mixer2.py, where the groups divide over TP), so SGLang's meta build holds
    in_proj.weight [9280, 4096] float8 with weight_scale [5] and input_scale [5] fp32; out_proj [4096, 4096] with
    [1] and [1]; conv1d [5120, 1, 4] + bias [5120], dt_bias and D [64] bf16, A [64] fp32: 2,193,594,240 B over the
    40 Mamba layers (kvtop had one scale pair for in_proj: −1,280 B). SGLang's language model is 60,898,377,160 B a
    rank: kvtop's book less its bf16 head (65,536 × 4,096 × 2 B), plus SGLang's FP8 head (65,536 × 4,096 B + 8 B of
    scales) and the 8 attention layers' k/v scales (A17 in docs/fidelity.md)."""
    name = "nvidia--NVIDIA-Nemotron-3-Super-120B-A12B-FP8"
    quant = json.loads((HARNESS / f"{name}.hf_quant_config.json").read_text())
    m = model_from_config(json.loads((HARNESS / f"{name}.json").read_text()), source=name, hf_quant_config=quant)
    b = book(m)
    mixer = 9_280 * 4_096 + (5 + 5) * FP32 + 4_096 * 4_096 + 2 * FP32 + 5_120 * 4 * BF16 + 5_120 * BF16
    assert row(b, "linear_attention") == 40 * (mixer + 64 * FP32 + 2 * 64 * BF16) == 2_193_594_240
    assert b.total_bytes - 65_536 * 4_096 * BF16 + 65_536 * 4_096 + 8 + 8 * 2 * FP32 == 60_898_377_160
