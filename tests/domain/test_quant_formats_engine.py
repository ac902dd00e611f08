"""Weight formats (AWQ, GPTQ, compressed-tensors, bitsandbytes) against the engines' own loaders, issue #26 item 4.

Each expected figure is the arithmetic of parameter shapes and dtypes read outside kvtop: a checkpoint's
safetensors header, or what vLLM 0.33.0 / SGLang 0.5.23 build on the meta device for the config
(benchmarks/engine_diff/param_shapes.py, `named_parameters()` per rank), quoted in each test. The configs are
tests/data/configs/quant/ (SOURCES.md there: the `recon--` ones carry a quantizer-serialised block).
"""

from __future__ import annotations

import json

from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import WeightsBook, weights_book
from tests.conftest import CONFIGS

QUANT = CONFIGS / "quant"
I32, F16, F32 = 4, 2, 4


def model(name: str) -> ModelSpec:
    return model_from_config(json.loads((QUANT / f"{name}.json").read_text()), source=name)


def book(m: ModelSpec, tp: int) -> WeightsBook:
    return weights_book(m, ParallelLayout(tp=tp), range(m.num_layers), first_stage=True, last_stage=True)


def row(b: WeightsBook, component: str) -> int:
    return next(r.bytes for r in b.rows if r.component == component)


def test_awq_matches_the_checkpoint_header_and_both_engines() -> None:
    """Qwen3-32B-AWQ (4 bit, group 128, zero points), its safetensors header per layer: q_proj qweight int32
    [5120, 1024], qzeros int32 [40, 1024], scales [40, 8192] 16-bit; k/v [5120, 128], [40, 128], [40, 1024];
    o_proj [8192, 640], [64, 640], [64, 5120]; gate/up [5120, 3200], [40, 3200], [40, 25600]; down [25600, 640],
    [200, 640], [200, 5120]; embed_tokens and lm_head [151936, 5120] 16-bit. vLLM 0.33.0 and SGLang 0.5.23
    build the same bytes fused (qkv_proj qweight [5120, 1280] …): 19,325,298,688 B at TP 1."""
    m = model("Qwen--Qwen3-32B-AWQ")

    def awq(k: int, n: int) -> int:  # qweight + qzeros (int32, 8 a word) + scales (16-bit), group 128
        return k * n // 8 * I32 + k // 128 * n // 8 * I32 + k // 128 * n * F16

    attention = awq(5_120, 8_192) + 2 * awq(5_120, 1_024) + awq(8_192, 5_120)
    mlp = 2 * awq(5_120, 25_600) + awq(25_600, 5_120)
    b = book(m, tp=1)
    assert row(b, "attention") == 64 * attention == 3_137_863_680
    assert row(b, "mlp") == 64 * mlp == 13_074_432_000
    assert b.total_bytes == 19_325_298_688


def test_awq_splits_over_tp_as_the_engines_build_it() -> None:
    """TP 2, per rank in both engines: qkv_proj qweight [5120, 640], qzeros [40, 640], scales [40, 5120];
    o_proj [4096, 640], [32, 640], [32, 5120]; gate_up [5120, 3200], [40, 3200], [40, 25600]; down [12800, 640],
    [100, 640], [100, 5120]; embed_tokens and lm_head [75968, 5120]: 9,663,326,208 B."""
    b = book(model("Qwen--Qwen3-32B-AWQ"), tp=2)
    qkv = 5_120 * 640 * I32 + 40 * 640 * I32 + 40 * 5_120 * F16
    o_proj = 4_096 * 640 * I32 + 32 * 640 * I32 + 32 * 5_120 * F16
    assert row(b, "attention") == 64 * (qkv + o_proj) == 1_568_931_840
    assert b.total_bytes == 9_663_326_208


def test_int8_per_channel_scales_follow_the_output_rows() -> None:
    """compressed-tensors W8A8 (int8 per channel) Llama-3.1-8B-Instruct at TP 1, per layer in vLLM 0.33.0 and
    SGLang 0.5.23: qkv_proj int8 [6144, 4096] + weight_scale fp32 [6144, 1]; o_proj [4096, 4096] + [4096, 1];
    gate_up_proj [28672, 4096] + [28672, 1]; down_proj [4096, 14336] + [4096, 1]: a scale per output row, 4,096
    for down_proj (kvtop counted its 14,336 input columns: +1,310,720 B). SGLang builds 9,086,705,664 B; vLLM
    576 B more, its Attention's q/k/v scales and zero points (32 × 18 B)."""
    m = model("recon--Llama-3.1-8B-Instruct-CT-w8a8")
    b = book(m, tp=1)
    mlp = 28_672 * 4_096 + 28_672 * F32 + 4_096 * 14_336 + 4_096 * F32
    assert row(b, "mlp") == 32 * mlp == 5_641_338_880
    assert b.total_bytes == 9_086_705_664 == 9_086_706_240 - 32 * (3 * F32 + 3 * 2)


def test_row_parallel_per_channel_scales_are_whole_on_every_rank() -> None:
    """The same checkpoint at TP 2, per rank in vLLM 0.33.0: qkv_proj [3072, 4096] + [3072, 1]; o_proj
    [4096, 2048] + weight_scale [4096, 1]; gate_up [14336, 4096] + [14336, 1]; down_proj [4096, 7168] +
    weight_scale [4096, 1]: the row-parallel matrices split their input, and each rank holds every output row's
    scale (kvtop halved them: −262,144 B on o_proj, and +393,216 B on down_proj's 14,336 read as rows).
    4,544,143,936 B with the 576 B of Attention scalars."""
    b = book(model("recon--Llama-3.1-8B-Instruct-CT-w8a8"), tp=2)
    attention = 3_072 * 4_096 + 3_072 * F32 + 4_096 * 2_048 + 4_096 * F32
    mlp = 14_336 * 4_096 + 14_336 * F32 + 4_096 * 7_168 + 4_096 * F32
    assert row(b, "attention") == 32 * attention == 672_006_144
    assert row(b, "mlp") == 32 * mlp == 2_820_931_584
    assert b.total_bytes == 4_544_143_936 - 576


def test_fp8_dynamic_per_channel_as_int8() -> None:
    """compressed-tensors FP8 dynamic (FP8 per channel, dynamic per-token activations) builds in vLLM 0.33.0 the
    W8A8 shapes in float8_e4m3fn: 9,086,706,240 B at TP 1 and 4,544,143,936 B a rank at TP 2, 576 B of
    Attention scalars (q/k/v scale fp32, zero point bf16 × 32 layers) over the book."""
    m = model("recon--Llama-3.1-8B-Instruct-CT-FP8-dynamic")
    assert book(m, tp=1).total_bytes == 9_086_706_240 - 576
    assert book(m, tp=2).total_bytes == 4_544_143_936 - 576


def test_w4a16_groups_of_128_with_model_dtype_scales() -> None:
    """compressed-tensors W4A16 (int4 symmetric, group 128) at TP 1 in SGLang 0.5.23 and vLLM 0.33.0, per layer:
    qkv_proj weight_packed int32 [6144, 512] + weight_scale bf16 [6144, 32]; o_proj [4096, 512] + [4096, 32];
    gate_up [28672, 512] + [28672, 32]; down [4096, 1792] + [4096, 112]; each fused module also a weight_shape
    int64 [2] (16 B, not booked: 4 a layer). SGLang 5,700,593,664 B; TP 2 2,850,564,096 B a rank."""
    m = model("recon--Llama-3.1-8B-Instruct-CT-w4a16")
    mlp = 28_672 * 512 * I32 + 28_672 * 32 * F16 + 4_096 * 1_792 * I32 + 4_096 * 112 * F16
    b = book(m, tp=1)
    assert row(b, "mlp") == 32 * mlp == 2_906_652_672
    assert b.total_bytes == 5_700_593_664 - 32 * 4 * 16
    assert book(m, tp=2).total_bytes == 2_850_564_096 - 32 * 4 * 16


def test_gptq_symmetric_holds_no_zeros_and_keeps_the_router_in_16_bit() -> None:
    """Qwen3-30B-A3B-GPTQ-Int4 (sym, desc_act false, group 128) at TP 1 in vLLM 0.33.0, per layer: qkv_proj
    qweight int32 [256, 5120] + scales fp16 [16, 5120]; o_proj [512, 2048] + [32, 2048]; experts w13_qweight
    [128, 256, 1536] + w13_scales [128, 16, 1536], w2_qweight [128, 96, 2048] + w2_scales [128, 6, 2048]; no
    g_idx. The linear layers' symmetric qzeros the meta build holds are replaced by an empty tensor on loading
    (MarlinLinearKernel.process_weights_after_loading); the checkpoint stores mlp.gate.weight unquantized
    (GPTQModel issue #1625: transformers reports it unused and gate.qweight missing), [128, 2048] fp16."""
    b = book(model("Qwen--Qwen3-30B-A3B-GPTQ-Int4"), tp=1)
    attention = 256 * 5_120 * I32 + 16 * 5_120 * F16 + 512 * 2_048 * I32 + 32 * 2_048 * F16
    experts = 128 * (256 * 1_536 * I32 + 16 * 1_536 * F16 + 96 * 2_048 * I32 + 6 * 2_048 * F16)
    assert row(b, "attention") == 48 * attention == 467_140_608
    assert row(b, "routed_experts") == 48 * experts == 14_948_499_456
    assert row(b, "router") == 48 * 128 * 2_048 * F16


def test_w4a16_asymmetric_adds_a_packed_zero_per_group() -> None:
    """compressed-tensors W4A16 asymmetric at TP 1 in vLLM 0.33.0, per layer, over the symmetric shapes:
    weight_zero_point int32 qkv [768, 32], o [512, 32], gate_up [3584, 32], down [512, 112] (8 zeros a word,
    one per group and output row). SGLang 0.5.23 5,727,856,640 B, TP 2 2,864,195,584 B a rank, with the 16 B
    weight_shape of each fused module."""
    m = model("recon--Llama-3.1-8B-Instruct-CT-w4a16-asym")
    zeros = (768 * 32 + 512 * 32 + 3_584 * 32 + 512 * 112) * I32
    symmetric = model("recon--Llama-3.1-8B-Instruct-CT-w4a16")
    assert book(m, tp=1).total_bytes - book(symmetric, tp=1).total_bytes == 32 * zeros == 27_262_976
    assert book(m, tp=1).total_bytes == 5_727_856_640 - 32 * 4 * 16
    assert book(m, tp=2).total_bytes == 2_864_195_584 - 32 * 4 * 16
