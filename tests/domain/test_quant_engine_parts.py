"""Quantized formats: the small tensors the engines build beside the checkpoint's matrices (issue #26, the recon
Llama-3.1-8B-Instruct configs of tests/data/configs/quant/): the WNA16 linear modules' `weight_shape` (both engines)
and vLLM 0.33.0's Attention q/k/v scales and zero points; a GPTQ MoE's experts' zero points (vLLM 0.33.0); SGLang
0.5.23's bitsandbytes checkpoints (its loader's quant states, its TP refusal).

Expected totals are each engine's meta build of the config, its `named_parameters()` bytes per rank
(`benchmarks/engine_diff/registry_sweep.py --params CONFIG`, the rows in tests/data/engine_diff/registry/):
vLLM 0.33.0 lists `self_attn.attn.{q,k,v}_scale` float32 [1] and `self_attn.attn.{q,k,v}_zero_point` bfloat16 [1]
on each of the 32 layers, and on the W4A16 builds `{qkv,o,gate_up,down}_proj.weight_shape` int64 [2]; SGLang 0.5.23
the same `weight_shape`s and no attention scalars.
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.launch import parse_flags
from kvtop.domain.launch_check import launch_refusals
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.ledger import predict
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.conftest import CONFIGS

QUANT = CONFIGS / "quant"
LAYERS = 32
WEIGHT_SHAPE = 2 * 8  # int64 [2]
MODULES = 4  # qkv_proj, o_proj, gate_up_proj, down_proj
VLLM_ATTENTION = 3 * 4 + 3 * 2  # q/k/v_scale float32 [1], q/k/v_zero_point bfloat16 [1]


def model(name: str) -> ModelSpec:
    return model_from_config(
        json.loads((QUANT / f"recon--Llama-3.1-8B-Instruct-CT-{name}.json").read_text()), source=name
    )


def built(m: ModelSpec, engine: str, version: str, tp: int) -> int:
    """One rank's weights with the engine's stage parts (what its classes add to each layer)."""
    resolved = ResolvedVersion(text=version, source=VersionSource.FLAG)
    parts = engine_rules(engine).stage_parts(m, 0, 1, resolved)
    layout, layers = ParallelLayout(tp=tp), range(m.num_layers)
    return weights_book(m, layout, layers, first_stage=True, last_stage=True, parts=parts).total_bytes


# (config, engine, TP, the engine's meta-built bytes per rank): the registry rows' stage 0 parameter bytes
@pytest.mark.parametrize(("name", "engine", "tp", "engine_bytes"), [
    ("w4a16", "sglang", 1, 5_700_593_664), ("w4a16", "sglang", 2, 2_850_564_096),
    ("w4a16-asym", "sglang", 1, 5_727_856_640), ("w4a16-asym", "sglang", 2, 2_864_195_584),
    ("w4a16", "vllm", 1, 5_700_594_240), ("w4a16-asym", "vllm", 1, 5_727_857_216),
    ("FP8-dynamic", "vllm", 1, 9_086_706_240), ("FP8-dynamic", "vllm", 2, 4_544_143_936),
    ("w8a8", "vllm", 1, 9_086_706_240), ("w8a8", "sglang", 1, 9_086_705_664),
])  # fmt: skip
def test_engine_builds_equal_kvtop(name: str, engine: str, tp: int, engine_bytes: int) -> None:
    """kvtop's rank with the engine's parts equals the engine's meta build (the book alone is the checkpoint's)."""
    version = "0.33.0" if engine == "vllm" else "0.5.23"
    assert built(model(name), engine, version, tp) == engine_bytes


@pytest.mark.parametrize(("name", "engine", "version", "extra"), [
    ("w4a16", "sglang", "0.5.23", LAYERS * MODULES * WEIGHT_SHAPE),  # 2,048 B
    ("w4a16", "vllm", "0.33.0", LAYERS * (MODULES * WEIGHT_SHAPE + VLLM_ATTENTION)),  # 2,624 B
    ("FP8-dynamic", "vllm", "0.33.0", LAYERS * VLLM_ATTENTION),  # 576 B: no weight_shape on FP8 modules
    ("w8a8", "sglang", "0.5.23", 0),  # int8 W8A8 (input activations quantized): no weight_shape
])  # fmt: skip
def test_what_the_engine_adds_over_the_checkpoint(name: str, engine: str, version: str, extra: int) -> None:
    """The parts' share alone: the engine's listing less the checkpoint's tensors (the book without parts)."""
    m = model(name)
    stored = weights_book(m, ParallelLayout(tp=2), range(m.num_layers), first_stage=True, last_stage=True)
    assert built(m, engine, version, 2) - stored.total_bytes == extra


def test_earlier_releases_keep_the_books_count() -> None:
    """SGLang 0.5.6.post2 is not checked against a build: no weight_shape booked. vLLM 0.13.0's code read: the same
    weight_shape (compressed_tensors_wNa16.py) and, CompressedTensorsKVCacheMethod having no create_weights of its
    own, the base method's four bf16 scalars a layer (quantization/kv_cache.py)."""
    m = model("w4a16")
    stored = weights_book(m, ParallelLayout(tp=1), range(m.num_layers), first_stage=True, last_stage=True)
    assert built(m, "sglang", "0.5.6.post2", 1) == stored.total_bytes
    assert built(m, "vllm", "0.13.0", 1) - stored.total_bytes == LAYERS * (MODULES * WEIGHT_SHAPE + 4 * 2)


def test_vllm_gptq_experts_keep_their_zero_points() -> None:
    """Qwen3-30B-A3B-GPTQ-Int4 (sym, group 128) in vLLM 0.33.0's meta build at TP 1, per layer:
    `experts.w13_qzeros` int32 [128, 16, 192] and `w2_qzeros` int32 [128, 6, 256] (AutoGPTQMoEMethod creates them
    for a symmetric checkpoint too, and process_weights_after_loading keeps them), 113,246,208 B over 48 layers.
    The engine's total 16,828,084,224 B less the bytes its build counts that serving does not hold off sm90 (reading
    A18: linear qzeros 3,538,944 B, which sm90's Machete keeps, a weights_built row these stage parts leave out:
    tests/engines/vllm/test_gptq_machete_zeros.py; unloaded expert biases 44,040,192 B, the gate quantized for want
    of the checkpoint's header −18,628,608 B) is 16,799,133,696 B; at TP 2 8,430,104,576 − 17,743,872 B."""
    m = model_from_config(
        json.loads((QUANT / "Qwen--Qwen3-30B-A3B-GPTQ-Int4.json").read_text()), source="gptq"
    )
    stored = weights_book(m, ParallelLayout(tp=1), range(m.num_layers), first_stage=True, last_stage=True)
    zeros = 48 * (128 * 16 * 192 + 128 * 6 * 256) * 4
    assert zeros == 113_246_208
    assert built(m, "vllm", "0.33.0", 1) - stored.total_bytes == zeros
    assert built(m, "vllm", "0.33.0", 1) == 16_828_084_224 - 3_538_944 - 44_040_192 + 18_628_608
    assert built(m, "vllm", "0.33.0", 2) == 8_430_104_576 - 17_743_872
    # v0.13.0 GPTQMarlinMoEMethod.create_weights: the same qzeros shapes in params_dtype (float16 here), kept
    assert built(m, "vllm", "0.13.0", 1) - stored.total_bytes == zeros // 2


def bnb(bits: int) -> ModelSpec:
    name = f"recon--Llama-3.1-8B-Instruct-bnb-{bits}bit"
    return model_from_config(json.loads((QUANT / f"{name}.json").read_text()), source=name)


def test_sglang_bnb_8bit_holds_int8_weights_when_the_pools_are_sized() -> None:
    """SGLang 0.5.23's meta build of the recon bnb-8bit config at TP 1 (the registry row, bitsandbytes 0.49.2 in the
    venv): qkv_proj [6144, 4096], o_proj [4096, 4096], gate_up_proj [28672, 4096], down_proj [4096, 14336] int8, the
    rest bf16: 9,081,200,640 B. The loader keeps the checkpoint's SCB on the CPU until the first forward, so the
    book's fp32 scale per row (43,008 rows × 4 B × 32 layers) is not on the GPU at sizing."""
    m = bnb(8)
    stored = weights_book(m, ParallelLayout(tp=1), range(m.num_layers), first_stage=True, last_stage=True)
    assert stored.total_bytes - built(m, "sglang", "0.5.23", 1) == 32 * 43_008 * 4
    assert built(m, "sglang", "0.5.23", 1) == 9_081_200_640


def test_sglang_bnb_4bit_adds_the_loaders_quant_states_to_the_packed_weights() -> None:
    """SGLang 0.5.23's meta build of the recon bnb-4bit config (nf4, double quant) at TP 1: the packed weights uint8
    [params ÷ 2, 1] (qkv_proj [12582912, 1], o_proj [8388608, 1], gate_up_proj [58720256, 1], down_proj
    [29360128, 1]), 5,591,539,712 B. Beside each of the 7 checkpoint matrices a layer the loader puts its QuantState
    on the GPU (QuantState.from_dict(device="cuda")): a uint8 absmax per 64 weights, an fp32 nested absmax per 256 of
    those, quant_map fp32 [16], nested_quant_map fp32 [256] and nested_offset fp32 (the harness reading A19)."""
    sizes = (4096 * 4096, 1024 * 4096, 1024 * 4096, 4096 * 4096, 14336 * 4096, 14336 * 4096, 4096 * 14336)
    states = sum(n // 64 + n // 64 // 256 * 4 + (16 + 256 + 1) * 4 for n in sizes)
    assert built(bnb(4), "sglang", "0.5.23", 1) == 5_591_539_712 + 32 * states == 5_702_540_160


@pytest.mark.parametrize("bits", [4, 8])
def test_sglang_refuses_a_prequantized_bnb_checkpoint_over_tp(bits: int) -> None:
    """The registry rows at TP 2: "Prequant BitsAndBytes models with TP is not supported." (the runner calls
    BitsAndBytesModelLoader._load_weights); TP 1 builds."""
    m = bnb(bits)
    refusals = {tp: launch_refusals(predict(m, parse_flags("sglang", ["--tp", str(tp), "--engine-version", "0.5.23"]),
                                            gpu_total_bytes=80 << 30, gpu_name="H100")) for tp in (1, 2)}  # fmt: skip
    (refusal,) = refusals[2]
    assert refusal.field == "--tp-size" and "Prequant BitsAndBytes" in refusal.message
    assert not refusals[1]
