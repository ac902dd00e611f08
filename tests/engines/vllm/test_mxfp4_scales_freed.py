"""From vLLM 0.25.0 Hopper's Triton MXFP4 backend deletes the checkpoint's block scales once they are swizzled
(fused_moe/oracle/mxfp4.py:1153-1156 at 0.25.0; v0.24.0 :1147-1148 deletes the weights only): the weights term holds
the swizzled copy's padding, not a second copy of the scales.

Expected values from the code's arithmetic on the real configs (tests/data/configs/openai--gpt-oss-{120b,20b}.json):
the checkpoint's scales are uint8 [experts, 2 × 2,880, 2,880 ÷ 32] and [experts, 2,880, 2,880 ÷ 32] a MoE layer
(`create_weights`), held in torch's caching allocator's blocks (a tensor of 10 MiB or more on a 2 MiB segment, whole
where at most 1 MiB would remain; c10/cuda/CUDACachingAllocator.cpp). And a log: the v0.25.1 H100 start printed
'Model loading took 61.29 GiB' under "Using 'TRITON' Mxfp4 MoE backend" (vllm.jsonl)."""

from __future__ import annotations

from benchmarks.calibration.corpus import load
from benchmarks.calibration.evaluate import weights_term
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm import weights_held as held
from kvtop.domain.engines.vllm.weights_held import triton_held
from kvtop.domain.wording import GIB
from tests.test_calibration_vllm_graphs import triton_start

RECORDS = {record.id: record for record in load("vllm")}
V0251 = "file68713151700-gpt-oss-120b-h100-v0251-u095"
MIB = 1 << 20


def _at(record_id: str, version: str) -> CalibrationInputs:
    inputs = triton_start(RECORDS[record_id].inputs())
    return inputs.model_copy(update={"version": ResolvedVersion(text=version)})


def test_gpt_oss_120b_frees_its_checkpoint_scales_from_0_25_0() -> None:
    """128 experts, 36 MoE layers: 128 × (5,760 + 2,880) × 90 B a layer, in blocks of 64 and 32 MiB."""
    scales = 36 * 128 * (5760 + 2880) * 90
    rounding = 36 * ((64 * MIB - 128 * 5760 * 90) + (32 * MIB - 128 * 2880 * 90))
    assert scales + rounding == 3_623_878_656
    assert triton_held(_at(V0251, "0.24.0")) - triton_held(_at(V0251, "0.25.0")) == scales + rounding
    assert len({triton_held(_at(V0251, release)) for release in ("0.25.0", "0.25.1", "0.34.0")}) == 1


def test_gpt_oss_20b_frees_its_checkpoint_scales_from_0_25_0() -> None:
    """32 experts, 24 MoE layers: w13's scales (16,588,800 B) hold a 16 MiB segment, w2's (8,294,400 B, under
    10 MiB) are carved to the byte."""
    scales = 24 * 32 * (5760 + 2880) * 90
    rounding = 24 * (16 * MIB - 32 * 5760 * 90)
    record_id = "llmd-v011-gpt-oss-20b"
    assert triton_held(_at(record_id, "0.24.0")) - triton_held(_at(record_id, "0.25.0")) == scales + rounding


def test_only_the_swizzled_padding_is_held_at_0_25_1() -> None:
    """What stays beside the book's scales: HopperMXScaleLayout's rows padded to 256 (5,760 → 5,888; 2,880 → 3,072),
    128 × (128 + 192) × 90 B a layer over 36 layers."""
    inputs = _at(V0251, "0.25.1")
    mxfp4 = held._mxfp4(inputs)
    assert mxfp4 is not None
    biases = 36 * 128 * ((2 * 2880 + 2880) * 4 - (2 * 2880 + 2880) * 2)  # float32 in place of the built bf16
    assert mxfp4[0] == 36 * 128 * (128 + 192) * 90 + biases
    assert "freed from 0.25.0" in mxfp4[1]


def test_the_v0251_log_weights_within_half_a_percent() -> None:
    """The corpus's v0.25.1 H100 start printed 61.29 GiB; the term was 64.38 GiB (+5.0 %) with the scales twice."""
    record = RECORDS[V0251]
    estimate = weights_term(record)
    assert estimate is not None
    assert abs(estimate.bytes / (61.29 * GIB) - 1) < 0.005
