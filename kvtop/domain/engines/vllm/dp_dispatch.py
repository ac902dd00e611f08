"""vLLM's data-parallel MoE dispatch in the profile run: what a plan of DP replicas of a MoE model leaves unpriced.

With `--data-parallel-size` > 1 every MoE layer runs on the tokens of all the DP ranks. The default all-to-all
gathers them onto each rank: at v0.10.1.1 `VLLM_ALL2ALL_BACKEND` is 'naive' (envs.py:1021-1022),
`FusedMoE.forward_impl` dispatches whenever dp_size > 1 and no DeepEP high-throughput or FlashInfer CUTLASS kernel
runs (fused_moe/layer.py:1639-1644), and `NaiveAll2AllManager.naive_multicast` allocates the gathered batch
(distributed/device_communicators/all2all.py:33-60); from v0.11.0 the default is 'allgather_reducescatter' (envs.py
at v0.11.0; config/parallel.py:152 at v0.14.0, :172 at v0.20.1), which gathers as well. The profile's dummy batch is
`max_num_batched_tokens` on every rank, so the fused experts' caches are sized for dp × that batch (in chunks of
`VLLM_FUSED_MOE_CHUNK_SIZE`, 32,768 at v0.10.1.1: fused_moe.py `fused_experts_impl`), where kvtop's activation peak
counts one rank's batch. Up to v0.10.x the worker's memory snapshot is taken before the distributed init
(v1/worker/gpu_worker.py:174-192 at v0.10.1.1; after it from v0.11.0, :169-182), so the DP group's NCCL
communicator (pynccl on every group but EP's, cuda_communicator.py:26-55 at v0.10.1.1) is charged as non-torch
memory there too; from v0.11.0 the DP padding's all-reduce makes torch's communicator on the DP device group in the
profile unless async scheduling or --disable-nccl-for-dp-synchronization puts it on Gloo (dp_gather.py
`communicators_made`: the one answer this line and the dense one word). `dp_gather.py` prices both where their code
was read (v0.10.1-0.10.2 with the naive all-to-all, v0.11.0-v0.34.x with 'allgather_reducescatter', Triton fused
experts, one node of NVLink GPUs; MXFP4 Marlin at v0.29.0-v0.34.x): there this line is not made. A dense model's DP
communicators are priced (v0.10.1-v0.13.0; none from v0.14.0, whose dense DP ranks are independent engines) on one
NVLink node, named elsewhere (`dp_communicators_not_modelled`). Elsewhere it says what is not priced and why: the
corpus's one data-parallel start (vllm-project/recipes PR 12, Qwen3-Coder-480B-A35B-FP8 on 8 × H20 141 GB at DP 8
with expert parallelism, a v0.10.1 dev build) was planned 3.8 GiB above the KV it printed at both utilisations
without them, 1.9 GiB above with them.
"""

from __future__ import annotations

from collections.abc import Sequence

from kvtop.domain.deployment import BudgetTerm, Charge, Feature, TermInputs, TermState
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.dp_gather import (
    COMMUNICATOR_ERAS,
    DISPATCH_ERAS,
    communicators_made,
    dp_communicators,
    dp_gather,
)  # fmt: skip
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec

SOURCE = "fused_moe/layer.py `FusedMoE.forward_impl`, distributed/device_communicators/all2all.py"
COMMUNICATOR_SOURCE = "v1/worker/gpu_worker.py `init_device`, forward_context.py `DPMetadata.num_tokens_across_dp`"


def gathered_batch_term(inputs: TermInputs) -> BudgetTerm | None:
    """The not-modelled line of a launch with DP replicas of a MoE model (module docstring); None for a dense model,
    one replica, a DeepEP backend (whose buffers have a line of their own, deployment.py), or where `dp_gather.py`
    prices the gathered batch and the DP group's communicators."""
    replicas = inputs.layout.replicas
    if replicas < 2 or inputs.model.moe is None or inputs.setup.a2a_backend:
        return None
    gather = dp_gather(inputs.model, inputs.layout, inputs.version, inputs.gpu_name, inputs.settings)
    if gather is not None and gather.priced:
        return None  # in the activation peak and the non-torch memory (dp_gather.py)
    era = DISPATCH_ERAS.era(inputs.version)
    dispatch = (f"the default all-to-all ('{era.value}', {era.source}) gathers every DP rank's batch into each MoE layer"
                if era.value else f"the dispatch of vLLM {inputs.version.label} is {era.source}")  # fmt: skip
    unpriced = f" ({gather.why})" if gather is not None else ""
    said = _communicators_said(inputs.model, inputs.version, inputs.settings) or (
        "no DP group's NCCL communicator is made in the non-torch growth (the DP padding on Gloo)")
    return BudgetTerm(
        feature=Feature.EXPERT_PARALLEL, charge=Charge.RESERVE, state=TermState.NOT_MODELLED,
        label=f"MoE batch gathered over {replicas} DP ranks in the profile run",
        setting=f"--data-parallel-size {replicas}", source=SOURCE,
        detail=f"{dispatch}: the fused experts' caches are sized for {replicas} × max_num_batched_tokens; "
               f"{said}; not priced{unpriced}",
    )  # fmt: skip


def _communicators_said(model: ModelSpec, version: ResolvedVersion, settings: LaunchSettings) -> str | None:
    """The DP group's NCCL communicators in the profile's non-torch growth, in words (`dp_gather.communicators_made`,
    the one answer the MoE and the dense line read); None where none is made there (the padding on Gloo)."""
    made = communicators_made(model, version, settings)
    if made is None:
        return f"the DP group's NCCL communicators in the non-torch growth: {COMMUNICATOR_ERAS.era(version).source}"
    if made.words is None:
        return None
    return f"in the DP group {made.words}, in the non-torch growth ({made.source})"


def dp_communicators_not_modelled(model: ModelSpec, layout: ParallelLayout, version: ResolvedVersion,
                                  gpu_name: str | None, settings: LaunchSettings) -> str | None:  # fmt: skip
    """The `EngineResult.not_modelled` line of DP replicas of a dense model whose DP group's NCCL communicators in
    the profile's non-torch growth are not priced (`dp_gather.dp_communicators`); None for one replica, a MoE model
    (its line is `gathered_batch_term`'s), where priced, or where none is made in it (the padding on Gloo:
    `dp_gather.communicators_made`). Nothing else of a dense model's profile changes with DP:
    each rank runs its own `max_num_batched_tokens` (padded to the largest, all equal in the profile)."""
    if model.moe is not None:
        return None
    found = dp_communicators(model, layout, version, gpu_name, settings)
    if found is None or found.priced:
        return None
    said = _communicators_said(model, version, settings)
    if said is None:
        return None  # the padding on the Gloo CPU group: no DP communicator in the growth, nothing unpriced
    return (f"the DP group's NCCL communicators (--data-parallel-size {layout.replicas}, {COMMUNICATOR_SOURCE}): "
            f"{said}: not priced ({found.why})")  # fmt: skip


def gathered_batch_not_modelled(terms: Sequence[BudgetTerm]) -> str | None:
    """The line `gathered_batch_term` made, for `EngineResult.not_modelled` (the one list plan, explain, the planner
    and the JSON read); None where the launch has none."""
    term = next((t for t in terms if t.source == SOURCE and t.state is TermState.NOT_MODELLED), None)
    return None if term is None else f"{term.label} ({term.setting}): {term.detail}"
