"""vLLM's MXFP4 rounding on the largest rank counts the MoE layers of the stage that holds the most, each stage's
layers as vLLM's get_pp_indices splits them (distributed/utils.py, v0.11.2 wheel: the remainder on the stages before
the last; its tests/distributed/test_pipeline_partition.py). Expected values: gpt-oss-120b's checkpoint shapes
(its safetensors header, as in tests/test_calibration_vllm_graphs.py) times the layers of get_pp_indices' stages."""

from __future__ import annotations

from benchmarks.calibration.corpus import load
from kvtop.domain.engines.vllm import weights_held as held
from tests.test_calibration_vllm_graphs import triton_start

RECORDS = {record.id: record for record in load("vllm")}
MIB = 1 << 20
# per MoE layer: the scales [128, 5760, 90] and [128, 2880, 90] hold 64 and 32 MiB, the swizzled w2 copy 34 MiB
PER_LAYER = (64 * MIB - 128 * 5760 * 90) + (32 * MIB - 128 * 2880 * 90) + (34 * MIB - 128 * 3072 * 90)


def _at_pp(pp: int) -> int:
    inputs = triton_start(RECORDS["llmd-v011-gpt-oss-120b"].inputs())
    inputs = inputs.model_copy(update={"layout": inputs.layout.model_copy(update={"pp": pp})})
    rounding = held.allocator_rounding(inputs)
    assert rounding is not None
    return rounding[0]


def test_an_uneven_split_counts_the_largest_stage() -> None:
    """36 layers at PP 5: get_pp_indices gives [7, 7, 7, 8, 7] (partitions[-2] += 1), so the largest rank holds 8
    MoE layers (36 // 5 = 7 undercounted it by one layer's rounding)."""
    assert _at_pp(5) == 8 * PER_LAYER


def test_an_even_split_counts_its_stage() -> None:
    """36 layers at PP 4: 9 a stage."""
    assert _at_pp(4) == 9 * PER_LAYER
