"""The memory a MoE launch of TensorRT-LLM's PyTorch backend holds outside torch that kvtop does not model (§24, §25).

The plan's profiled non-torch term is read off one dense start (faradawn/bench3: Llama-3-8B, H200, TP 1, §20) with the
TP group's NCCL per doubling (§19). zufayu/ClaudeSkillsE2EPerf's Blackwell starts print 'Memory used after loading
model weights (outside torch)' after the profiling executor is built, so the figure holds the temporary KV pool
(`[MemUsageChange] Allocated … for max tokens in paged KV cache`, C++-allocated, added back by `_cal_max_memory`; §20).
Less that pool, the plan's context and non-torch and the all-reduce fusion workspace (`allreduce_workspace.py`, in the
figure since session 54: 0.50 / 1.00 / 2.00 GiB at TP 2 / 4 / 8), what is left unmodelled (GiB): gpt-oss-120b at TP 1
(B200, B300; 2.25 pool) −0.56 and −0.72 (nothing), DeepSeek-R1 at TP 2 (B300; 2.14 pool) 0.80, TP 8 / EP 1 (FP8; 0.27)
0.37, TP 4 / EP 4 (2.14) 2.51, TP 8 / EP 8 (0.27, with piecewise CUDA graphs and user buffers the plan does not model)
5.40. Session 53 read the same lines without the pool, so it sized 1.5–1.7 GiB at TP 1 that is the pool itself.
Session 63 (§31): at EP > 1 a rank holds a second fusion workspace, now charged, so TP 4 / EP 4 leaves 1.51 and
TP 8 / EP 8 3.40 (0.38 and 0.57 per doubling, under the 0.80 of TP 2 that sizes the rule).

What is left is not read per release: NCCL's buffers for the EP group, the MoE backend's kernels and workspaces
outside torch (the MoE GEMM profiler's `cudaMalloc`'d workspace, §26), the TP 8 / EP 8 start's graph pool and user
buffers.

The rule: a named assumption, never a shift of the figure: the non-torch term's error widens by
`MOE_PER_DOUBLING_GIB` per doubling of TP and of EP (root of squares with its own error; nothing at TP 1), so the
interval says what the plan cannot know; the central figure stays the read log's. Its size: the largest unmodelled
part per doubling among the four starts (0.80 at TP 2, 0.12 at TP 8 / EP 1, 0.63 at TP 4 / EP 4, 0.90 at TP 8 /
EP 8), rounded up to a whole GiB: a loose upper bound (TP 8 / EP 1 needs an eighth of it). It is read off that one
harness (its records are in-sample for it) and stands until a release's code says what grows.
"""

from __future__ import annotations

import math

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.terms import TermEstimate
from kvtop.domain.wording import GIB, gib

MOE_PER_DOUBLING_GIB = 1.0  # per doubling of TP and of EP: ≥ 0.90, the largest unmodelled part a doubling needs


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
    return estimate.plus(error_bytes=extra, why=(
        f"± {gib(extra)} more: a MoE launch's memory outside torch (MoE backend workspaces and kernels, the "
        "EP group's communication buffers) is not modelled, 0.4–5.4 GiB above this figure at TP 2–8 on four Blackwell "
        "starts less their temporary pool (this widening: a loose upper bound, §24)"))  # fmt: skip
