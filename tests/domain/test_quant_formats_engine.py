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
