"""Block-FP8 weights on SM 8.0-8.8: SGLang's weight-only FP8 Marlin holds the scales as group scales in the model's
dtype (engines/sglang/weights_fp8_marlin.py; quantization/marlin_utils_fp8.py `prepare_fp8_layer_for_marlin`, read at
0.5.1, 0.5.20, 0.5.23).

Expected figures: Qwen/Qwen3-32B-FP8's shapes (hidden 5,120, 64 heads and 8 KV heads of 128, intermediate 25,600,
64 layers, block 128 x 128, `lm_head` and embeddings in bf16) counted by hand from the code's reshapes, and what its
SGLang 0.5.20 start on an A100 printed (tests/data/calibration/sglang.jsonl, wanhr-hicache-qwen3-32b-fp8-a100-fp8e5m2
-v0520: 'Load weight end. … mem usage=32.59 GB', '#tokens: 281216'). Never kvtop's own figures.
"""

from __future__ import annotations

from benchmarks.calibration.corpus import Record, load
from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.sglang.weights_fp8_marlin import marlin_block_scales, marlin_scale_tensors
from kvtop.domain.engines.sglang.weights_held import held_beside
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.gpus import gpu_key
from tests.corpus_records import logged_bytes

QWEN3_A100 = "wanhr-hicache-qwen3-32b-fp8-a100-fp8e5m2-v0520"


def _record() -> Record:
    return next(record for record in load("sglang") if record.id == QWEN3_A100)


def _scales_per_layer() -> tuple[list[int], int]:
    """One layer's Marlin scales [K ÷ 128, N] bf16 (qkv N = 8,192 + 2 x 1,024, K = 5,120; o_proj N = 5,120,
    K = 8,192; gate_up N = 2 x 25,600, K = 5,120; down N = 5,120, K = 25,600), and what they hold beyond the
    checkpoint's [N ÷ 128, K ÷ 128] float32 block scales, which `prepare_fp8_layer_for_marlin` deletes."""
    grouped = [40 * 10_240 * 2, 64 * 5_120 * 2, 40 * 51_200 * 2, 200 * 5_120 * 2]
    blocks = [80 * 40 * 4, 40 * 64 * 4, 400 * 40 * 4, 40 * 200 * 4]
    return grouped, sum(grouped) - sum(blocks)


def test_marlin_holds_qwen3_scales_as_group_scales() -> None:
    grouped, extra = _scales_per_layer()
    assert extra == 7_499_520
    inputs = _record().inputs()
    found = marlin_block_scales(inputs)
    assert found is not None and found[0] == 64 * extra  # 479,969,280 B: 0.45 GiB
    assert marlin_scale_tensors(inputs) == grouped * 64


def test_the_weights_land_on_the_logged_load() -> None:
    """Book + rope cache + Marlin's scales + the allocator's rounding (the scales made after the load) against
    'mem usage=32.59 GB' (GiB): 32.56 GiB, −0.09 % (32.05, −1.65 %, without the Marlin scales)."""
    inputs = _record().inputs()
    held = held_beside(inputs)
    assert held is not None
    logged = logged_bytes(f"{QWEN3_A100}:weights")
    assert abs((inputs.weights_bytes + held[0]) / logged - 1) < 0.003


def test_not_on_fp8_gpus_below_sm80_nor_before_051() -> None:
    inputs = _record().inputs()
    assert marlin_block_scales(inputs.model_copy(update={"gpu_name": "H200"})) is None  # SM 9.0: FP8 compute
    assert marlin_block_scales(inputs.model_copy(update={"gpu_name": "L40S"})) is None  # SM 8.9: FP8 compute
    assert marlin_block_scales(inputs.model_copy(update={"gpu_name": "T4"})) is None  # SM 7.5: no auto Marlin
    assert marlin_block_scales(inputs.model_copy(update={"gpu_name": "A10"})) is not None  # SM 8.6
    older = inputs.model_copy(update={"version": ResolvedVersion(text="0.5.0rc2")})
    assert marlin_block_scales(older) is None  # fp8.py:218-221: Marlin off for block FP8
    assert marlin_scale_tensors(older) == []


def test_the_start_lands_on_its_printed_tokens() -> None:
    """Planned blind: within 1 % of the 281,216 tokens printed (+1.16 % before the rule) and inside the interval."""
    record = _record()
    assert record.model is not None and record.gpu_total_bytes is not None and record.tokens == 281_216
    plan = planned_capacity(record.model, record.settings, gpu_total_bytes=record.gpu_total_bytes,
                            gpu_name=gpu_key(record.gpu), measured=MeasuredInputs())  # fmt: skip
    assert abs(plan.ledger.token_capacity / 281_216 - 1) < 0.01
    assert plan.token_capacity_min is not None and plan.token_capacity_max is not None
    assert plan.token_capacity_min <= 281_216 <= plan.token_capacity_max
