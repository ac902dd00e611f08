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

How much. kvtop charges the first GPU one process's CUDA context (`cuda_context.py`, the fit by SM count: the same
kind of context, with torch's modules loaded) for the launcher and for each other rank of its node,
min(TP × PP, the node's GPUs), in the profiled non-torch term. Its error: one context more, since a launch under
`mpirun … trtllm-llmapi-launch` has no separate launcher, and the contexts' own error for each.
"""

from __future__ import annotations

import math

from kvtop.domain.calibration.cuda_context import one_process_context
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.linear import LinearTerm
from kvtop.domain.calibration.terms import TermEstimate
from kvtop.domain.engines.trtllm.allreduce_workspace import gpus_per_node
from kvtop.domain.engines.versions import Era, Eras
from kvtop.domain.wording import GIB

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


def with_import_contexts(estimate: TermEstimate, inputs: CalibrationInputs,
                         fits: dict[str, LinearTerm]) -> TermEstimate:  # fmt: skip
    """The profiled non-torch term with 1.3.0rc20's import contexts on the first GPU (unchanged in other releases)."""
    count = stray_contexts(inputs)
    if not count:
        return estimate
    one = one_process_context(inputs, fits, "one process's import context")
    added = count * one.bytes
    # the contexts' fitted error and one context more or less (no separate launcher under mpirun), independent
    return estimate.plus(added, round(math.hypot(one.bytes, count * one.error_bytes)), why=(
        f"+ {added / GIB:.2f} GiB: {count} CUDA contexts of {one.bytes / GIB:.2f} GiB on the first GPU, made at "
        "`import tensorrt_llm` by the launcher and the other ranks' workers before set_device (1.3.0rc20 only: "
        "deep_gemm.set_pdl() at import, PR #15402, fixed by PR #15632; ± one context: no separate launcher under "
        "mpirun; §28)"))  # fmt: skip


def import_contexts_bytes(inputs: CalibrationInputs, fits: dict[str, LinearTerm]) -> int:
    """The bytes `with_import_contexts` adds with `fits` (0 outside 1.3.0rc20); `fit_offset` passes none, so a
    judgement's rows take the assumed context (0.75 GiB) and read no committed fit."""
    count = stray_contexts(inputs)
    return count * one_process_context(inputs, fits, "one process's import context").bytes if count else 0
