"""Where vLLM's worker takes the snapshot its non-torch growth is measured from, by release (docs/engines/vllm.md §2).

`non_torch_increase` is the non-torch memory after the profile less that of `Worker.init_snapshot` (`memory_profiling`,
vllm/utils/__init__.py at v0.10.2, utils/mem_utils.py later). Before v0.11.0 `init_device` takes that snapshot *before*
`init_worker_distributed_environment` (gpu_worker.py, read in the v0.10.2 sdist): the TP group's NCCL communicators,
pynccl's warm-up all-reduce and the custom all-reduce's IPC buffers are made after it, so the non-torch figure counts
them, and the 'Free memory on device … on startup' line is the free memory before them, not before the weights.
v0.11.0 (PR #25359, "ensuring consistent NCCL memory accounting"; read in the v0.11.0 sdist) initialises the
distributed environment first: from then the startup line holds NCCL's memory and the non-torch figure does not.

The corpus bears it out at TP 2: Qwen3-Next-80B-A3B on two H200s at v0.10.2 printed 0.60 GiB used on startup (TP 1
starts print 0.51-0.53) and 1.38 GiB of non-torch memory; llm-d's v0.19.0 H100 starts print 1.53 GiB used on startup
at TP 2 (2.01 for an MoE model) and their growth beside FlashInfer's workspace is 0.3-0.6 GiB, v0.11.0's at TP 2
0.54-0.55: the same memory, on the other side of the snapshot.
"""

from __future__ import annotations

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.linear import LinearTerm
from kvtop.domain.calibration.support import widened
from kvtop.domain.calibration.terms import TermEstimate
from kvtop.domain.engines.versions import Era, Eras, era_for
from kvtop.domain.wording import GIB, gib

# whether the TP group's distributed init falls inside the non-torch growth (True) or before the startup snapshot;
# V0's worker (worker/worker.py init_device, read at v0.10.2) takes its baseline_snapshot before it too
SNAPSHOT_BEFORE_NCCL: Eras[bool] = Eras((
    Era("", True, "gpu_worker.py init_device (read at v0.10.2): MemorySnapshot() before "
                  "init_worker_distributed_environment"),
    Era("0.11.0", False, "PR #25359: init_worker_distributed_environment before the snapshot (read at v0.11.0)"),
))


def nccl_inside_non_torch(inputs: CalibrationInputs) -> bool:
    """Whether this launch's non-torch growth holds its TP group's NCCL and custom all-reduce init: several ranks at
    a release whose worker snapshots before initialising them."""
    return inputs.layout.tp * inputs.layout.pp > 1 and era_for(SNAPSHOT_BEFORE_NCCL, inputs.version).value


def startup_free_is_context(inputs: CalibrationInputs) -> bool:
    """Whether the log's free memory on startup is the free memory before the weights (the context term's): not where
    NCCL and the custom all-reduce are made after the snapshot it prints."""
    return not nccl_inside_non_torch(inputs)


def init_inside(estimate: TermEstimate, context: TermEstimate, fits: dict[str, LinearTerm],
                inputs: CalibrationInputs, *, charged: bool = True) -> TermEstimate:  # fmt: skip
    """A stand-in's non-torch growth (measured after NCCL's init, `NON_TORCH_STAND_IN`) with the TP group's init added
    where this release counts it (`nccl_inside_non_torch`): the context fit's part beyond one rank (its coefficients
    past the constant × the plan's features: NCCL's communicators, the custom all-reduce, measured before the weights
    at v0.11+), its error the context's as a plan takes it (`support.widened`), added as independent errors add.
    Charged on GPUs the custom all-reduce runs on (the caller's test): the context's multi-rank part is measured on
    NVLink H100s, and PCIe starts whose snapshot precedes NCCL's init print little (8 x L40S at v0.10.2: 0.21 GiB).
    Not `charged` (a GPU name that covers PCIe boards too, whose P2P report decides): the part is kept in the interval
    only, as the custom all-reduce's is (calibration_non_torch.py `_board_error`)."""
    fit = fits.get(context.fit_key or "")
    if fit is None or context.values is None or not nccl_inside_non_torch(inputs):
        return estimate
    part = round(max(sum(c * v for c, v in zip(fit.coefficients[1:], context.values[1:], strict=True)), 0.0) * GIB)
    if not part:
        return estimate
    if not charged:
        return estimate.plus(error_bytes=part, why=f"± {gib(part)} of the TP group's NCCL init, which this "
                                                   "release's snapshot precedes, where NVLink joins the GPUs")  # fmt: skip
    return estimate.plus(part, widened(context, fits, inputs).error_bytes,
                         why=f"+ {gib(part)} of the TP group's NCCL and custom all-reduce init, which this "
                             f"release's snapshot precedes ({fit.key}'s part beyond one rank)")  # fmt: skip
