"""The CUDA contexts TensorRT-LLM 1.3.0rc20 creates on the first GPU at `import tensorrt_llm` (§28).

What. Between 1.3.0rc19 and 1.3.0rc20, PR #15402 (commit 71613f9d8c, "DSv4 prep") added a module-level
`_init_deep_gemm_pdl()` to `tensorrt_llm/_torch/custom_ops/torch_custom_ops.py`; its `deep_gemm.set_pdl()` builds
DeepGEMM's `DeviceRuntime` (a cuBLASLt handle and a 32 MiB workspace) and so a CUDA context, in every process that
imports tensorrt_llm: the launching process (trtllm-serve, trtllm-bench, the LLM API's proxy, which spawns its MPI
workers even at TP 1) and every MPI worker on its default device, before `torch.cuda.set_device()` in
`base_worker.py`. Rank 0's worker is on that device anyway; each other rank leaves one context there. They are
resident when the PyTorch backend reads free memory, so the first GPU's pool, and through the MIN over ranks every
pool, is short of them (NVIDIA/TensorRT-LLM PR #15985, nvbugs 6419139/6418453/6419078/6390244: 550 MiB on H100, about
700 MB on GB200, "0.5–1.2 GiB with loaded modules"; RTX 6000D at TP 2 48.33 → 47.39 GiB of KV; PR #16195, nvbug
6402018: a 6–15 % `kv_cache_size` drop in 1.3.0rc20). PR #15632 (commit e8e1ade1c6e3, merged 2026-07-03) moved the
call into `PyTorchModelEngine.__init__`, after `set_device`; nvbug 6402018 was verified fixed at 1.3.0rc21. What
stays (DeepGEMM's 32 MiB workspace per rank, PR #16195, closed unmerged) is inside the weights term's error.

How much. kvtop charges the first GPU one process's CUDA context (`cuda_context.py`'s assumed context, 0.75 ± 0.75 GiB:
the same kind of context, with torch's modules loaded) for the launcher and for each other rank of its node,
min(TP × PP, the node's GPUs), in the profiled non-torch term. Its error: one context more, since a launch under
`mpirun … trtllm-llmapi-launch` has no separate launcher, and the contexts' own error for each. The figure is the
assumed context, not the SM-count fit, because `fit_offset` takes the same bytes off a logged figure before the
non-torch fit learns it and reads no fit (none behind a judgement's back): the plan adds back exactly what the fit
never saw. The TensorRT-engine backend of the same release is not modelled (its C++ runtime's free-memory read would
see the contexts too): its context term's error widens by what the PyTorch backend's term would add and its error.
"""

from __future__ import annotations

import math

from kvtop.domain.calibration.cuda_context import one_process_context
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.terms import TermEstimate
from kvtop.domain.engines.trtllm.allreduce_workspace import gpus_per_node
from kvtop.domain.engines.versions import Era, Eras
from kvtop.domain.wording import gib

IMPORT_CONTEXT_ERAS: Eras[bool] = Eras((
    Era("", False, "no CUDA call at import: torch_custom_ops.py before PR #15402"),
    Era("1.3.0rc20", True, "PR #15402 (commit 71613f9d8c): _init_deep_gemm_pdl() at module level in "
                           "torch_custom_ops.py, deep_gemm.set_pdl() at import (PR #15985, nvbug 6419139)"),
    Era("1.3.0rc21", False, "PR #15632 (commit e8e1ade1c6e3, 2026-07-03): _configure_deep_gemm_pdl() in "
                            "PyTorchModelEngine.__init__, after set_device; nvbug 6402018 verified at 1.3.0rc21"),
))  # fmt: skip


def stray_contexts(inputs: CalibrationInputs) -> int:
    """How many processes' import contexts sit on the first GPU besides its own rank's: the launcher and each other
    rank on its node (0 outside 1.3.0rc20)."""
    if not IMPORT_CONTEXT_ERAS.at(inputs.version):
        return 0
    node_gpus, _ = gpus_per_node(inputs)
    ranks = max(inputs.layout.tp, 1) * max(inputs.layout.pp, 1)
    return min(ranks, node_gpus)


def import_context(inputs: CalibrationInputs) -> TermEstimate:
    """One process's import context: the assumed one (`one_process_context` with no fit), the figure both the plan
    and `fit_offset` take."""
    return one_process_context(inputs, {}, "one process's import context")


def import_contexts_bytes(inputs: CalibrationInputs) -> int:
    """The bytes 1.3.0rc20's import contexts hold on the first GPU (0 outside it): what the profiled non-torch term
    adds (`with_import_contexts`) and `fit_offset` takes off a logged figure."""
    count = stray_contexts(inputs)
    return count * import_context(inputs).bytes if count else 0


def _reach(inputs: CalibrationInputs, count: int) -> int:
    """The error of `count` import contexts: one context more or less (no separate launcher under mpirun), in
    quadrature with `count` × one context's error: every context is the same assumed figure, so their errors add
    whole (correlated), not in quadrature."""
    one = import_context(inputs)
    return round(math.hypot(one.bytes, count * one.error_bytes))


def with_import_contexts(estimate: TermEstimate, inputs: CalibrationInputs) -> TermEstimate:
    """The profiled non-torch term with 1.3.0rc20's import contexts on the first GPU (unchanged in other releases)."""
    count = stray_contexts(inputs)
    if not count:
        return estimate
    added = import_contexts_bytes(inputs)
    return estimate.plus(added, _reach(inputs, count), why=(
        f"+ {gib(added)}: {count} CUDA contexts of {gib(added / count)} (assumed) on the first GPU, "
        "made at `import tensorrt_llm` by the launcher and the other ranks' workers before set_device (1.3.0rc20 "
        "only: deep_gemm.set_pdl() at import, PR #15402, fixed by PR #15632; ± one context: no separate launcher "
        "under mpirun; §28)"))  # fmt: skip


def with_import_contexts_unmodelled(estimate: TermEstimate, inputs: CalibrationInputs) -> TermEstimate:
    """The TensorRT-engine backend's context term at 1.3.0rc20 with the import contexts named not modelled, its error
    widened by what the PyTorch backend's term charges for them and that charge's error (unchanged elsewhere)."""
    count = stray_contexts(inputs)
    if not count:
        return estimate
    extra = import_contexts_bytes(inputs) + _reach(inputs, count)
    return estimate.plus(error_bytes=extra, why=(
        f"± {gib(extra)} more: not modelled for a TensorRT engine, 1.3.0rc20's {count} CUDA contexts made at "
        "`import tensorrt_llm` on the first GPU (PR #15402, fixed by PR #15632), which its C++ runtime's free-memory "
        "read would see too (§28)"))  # fmt: skip
