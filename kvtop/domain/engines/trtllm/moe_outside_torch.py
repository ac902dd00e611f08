"""The memory a MoE launch of TensorRT-LLM's PyTorch backend holds outside torch that kvtop does not model (§24).

The plan's profiled non-torch term is read off one dense start (faradawn/bench3: Llama-3-8B, H200, TP 1, §20) with the
TP group's NCCL per doubling (§19). MoE starts hold more outside torch once the weights are in, and what holds it is
not read per release: the MoE backend's workspaces and loaded kernels, the all-reduce and MoE communication buffers
(`get_allreduce_workspace` → `CustomAllReduceHelper.allocate_allreduce_fusion_workspace`, IPC buffers of
`max_workspace_size_auto(tp)` × TP × 4 outside torch, _torch/distributed/ops.py; stored copies ids 56991117771,
196834873: 0.1–0.3 GiB at TP 4–8, so the rest is elsewhere), NCCL's own buffers for the EP group. zufayu/
ClaudeSkillsE2EPerf's seven Blackwell starts (1.2.0rc6.post2/3, 1.3.0rc10) print 'Memory used after loading model
weights (outside torch)' 1.5–1.7 GiB above the plan's context and non-torch at TP 1 (gpt-oss-120b, B200 and B300), 3.4
at TP 2 (DeepSeek-R1, B300), 2.6–3.0 at TP 8 / EP 1, 5.7 at TP 4 / EP 4 and 7.8 at TP 8 / EP 8.

The rule: a named assumption, never a shift of the figure: the non-torch term's error widens by
`MOE_BASE_GIB` + `MOE_PER_DOUBLING_GIB` per doubling of TP and of EP (root of squares with its own error), so the
interval says what the plan cannot know; the central figure stays the read log's. The size is read off that one
harness (its records are in-sample for it) and stands until a release's code says what grows.
"""

from __future__ import annotations

import math

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.terms import TermEstimate
from kvtop.domain.wording import GIB

MOE_BASE_GIB = 1.75  # at TP 1 (gpt-oss-120b's two starts: 1.69 and 1.53 above the plan)
MOE_PER_DOUBLING_GIB = 1.0  # per doubling of TP and of EP (TP 8 / EP 8: 7.8 above the plan at 6 doublings)


def moe_unmodelled_bytes(inputs: CalibrationInputs) -> int:
    """The half-width kvtop adds for a MoE model's memory outside torch (0 for a dense model)."""
    if inputs.model is None or inputs.model.moe is None:
        return 0
    doublings = math.log2(max(inputs.layout.tp, 1)) + math.log2(max(inputs.layout.ep, 1))
    return round((MOE_BASE_GIB + MOE_PER_DOUBLING_GIB * doublings) * GIB)


def with_moe_unmodelled(estimate: TermEstimate, inputs: CalibrationInputs) -> TermEstimate:
    """The profiled non-torch term with the MoE launch's unmodelled memory outside torch in its error (unchanged for a
    dense model)."""
    extra = moe_unmodelled_bytes(inputs)
    if not extra:
        return estimate
    return estimate.model_copy(update={
        "error_bytes": round(math.hypot(estimate.error_bytes, extra)),
        "basis": f"{estimate.basis}; ± {extra / GIB:.2f} GiB more: a MoE launch's memory outside torch (MoE backend "
                 "workspaces and kernels, communication buffers) is not modelled, 1.5–7.8 GiB above this figure on "
                 "seven Blackwell starts (§24)",
    })  # fmt: skip
