"""The memory a MoE launch of TensorRT-LLM's PyTorch backend holds outside torch that kvtop does not model (§24, §25).

The plan's profiled non-torch term is read off one dense start (faradawn/bench3: Llama-3-8B, H200, TP 1, §20) with the
TP group's NCCL per doubling (§19). zufayu/ClaudeSkillsE2EPerf's Blackwell starts print 'Memory used after loading
model weights (outside torch)' after the profiling executor is built, so the figure holds the temporary KV pool
(`[MemUsageChange] Allocated … for max tokens in paged KV cache`, C++-allocated, added back by `_cal_max_memory`; §20);
less that pool, against the plan's context and non-torch (GiB): gpt-oss-120b at TP 1 (B200, B300; 2.25 pool) −0.56
and −0.72, DeepSeek-R1 at TP 2 (B300; 2.14) +1.30, TP 8 / EP 1 (FP8; 0.27) +2.37, TP 4 / EP 4 (2.14) +3.51, TP 8 /
EP 8 (0.27, with piecewise CUDA graphs and user buffers the plan does not model) +7.40. Session 53 read the same lines
without the pool, so it sized 1.5–1.7 GiB at TP 1 that is the pool itself.

What grows with TP is not read per release: the all-reduce fusion workspace (`allocate_allreduce_fusion_workspace`:
IPC buffers of `max_workspace_size_auto(tp)` × TP and Lamport buffers 3 × that, each rank's own allocation; 8 MB or
16 MB in a 2025 copy, id 196834873, 0.12–0.24 GiB a rank at TP 2–8; a flat 64 MiB in a 2026
copy, id 56991117771, 0.5 / 1.0 / 2.0 GiB at TP 2 / 4 / 8, the release that took it not pinned), NCCL's buffers for
the EP group, the MoE backend's kernels and workspaces.

The rule: a named assumption, never a shift of the figure: the non-torch term's error widens by
`MOE_PER_DOUBLING_GIB` per doubling of TP and of EP (root of squares with its own error; nothing at TP 1), so the
interval says what the plan cannot know; the central figure stays the read log's. The size is read off that one
harness (its records are in-sample for it) and stands until a release's code says what grows.
"""

from __future__ import annotations

import math

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.terms import TermEstimate
from kvtop.domain.wording import GIB

MOE_PER_DOUBLING_GIB = 1.0  # per doubling of TP and of EP (less the temporary pool: 1.30 at 1, 2.37 at 3, 3.51 at 4)


def moe_unmodelled_bytes(inputs: CalibrationInputs) -> int:
    """The half-width kvtop adds for a MoE model's memory outside torch (0 for a dense model)."""
    if inputs.model is None or inputs.model.moe is None:
        return 0
    doublings = math.log2(max(inputs.layout.tp, 1)) + math.log2(max(inputs.layout.ep, 1))
    return round(MOE_PER_DOUBLING_GIB * doublings * GIB)


def with_moe_unmodelled(estimate: TermEstimate, inputs: CalibrationInputs) -> TermEstimate:
    """The profiled non-torch term with the MoE launch's unmodelled memory outside torch in its error (unchanged for a
    dense model)."""
    extra = moe_unmodelled_bytes(inputs)
    if not extra:
        return estimate
    return estimate.model_copy(update={
        "error_bytes": round(math.hypot(estimate.error_bytes, extra)),
        "basis": f"{estimate.basis}; ± {extra / GIB:.2f} GiB more: a MoE launch's memory outside torch (MoE backend "
                 "workspaces and kernels, all-reduce and communication buffers) is not modelled, 1.3–3.5 GiB above this "
                 "figure at TP 2–8 on four Blackwell starts less their temporary pool (§24)",
    })  # fmt: skip
