"""The EAGLE/MTP draft's own CUDA graphs: captured after the KV pool, out of what it leaves, and not priced by kvtop
(docs/engines/sglang.md §19.1).

With the decode graphs on, the draft worker captures a draft-decode graph (`--speculative-num-steps` > 1) and a
draft-extend graph at the target's batch sizes, after the pools (0.5.14 speculative/eagle_worker_v2.py:371-376;
0.5.23 :476-482, :510-537, :625-658, each logging "Capture draft … CUDA graph end. mem usage=… GB"). What they take
is the runner's static buffers, the graph pool's live outputs and the multi-step attention backend's graph state, which
is backend-specific: FlashInfer's alone keeps `steps × max_bs × topk × context` int32 KV indices (0.5.14
layers/attention/flashinfer_backend.py:1963-1968, 0.5.23 :2630-2645). kvtop prices none of it, so it is a named
after-pool need of the headroom, never 0 bytes. Up to v0.5.13 the automatic fraction's draft reserve
(`SPEC_RESERVE_ERAS`: 2, 4 or 6 GiB) is what SGLang keeps for these graphs, and the need counts against it; from
v0.5.14 no reserve is kept (arg_groups/memory_hook.py), so the graphs come out of the target's own graph reserve
(`max_bs × 2` MiB, 0.5.23 memory_hook.py:364-368), sized for the target's graphs alone.
"""

from __future__ import annotations

from kvtop.domain.deployment import BudgetTerm, Charge, SpecKind, TermInputs, TermState
from kvtop.domain.engines.sglang.decode_graphs_off import decode_graphs_off
from kvtop.domain.engines.sglang.deployment_eras import spec_reserve_mib
from kvtop.domain.engines.sglang.span import serving_role
from kvtop.domain.span import ServingRole

SOURCE = ("speculative/eagle_worker_v2.py _capture_cuda_graphs after the pools (0.5.14 :371-376; 0.5.23 :476-658); "
          "layers/attention/flashinfer_backend.py multi-step init_cuda_graph_state (0.5.14 :1963-1968, 0.5.23 "
          ":2630-2645)")  # fmt: skip
LABEL = "the draft's CUDA graphs (draft decode and draft extend)"


def draft_graphs_term(inputs: TermInputs, base: BudgetTerm) -> BudgetTerm | None:
    """The draft's CUDA graphs as a not-modelled after-pool need (None: no draft model, or no decode graphs to
    capture: `--disable-cuda-graph`, a disabled decode backend, a PD prefill node)."""
    if inputs.setup.spec_kind not in (SpecKind.MTP, SpecKind.DRAFT_MODEL) or not inputs.last_stage:
        return None
    if decode_graphs_off(inputs.settings) is not None or serving_role(inputs.settings) is ServingRole.PREFILL:
        return None
    mib, _ = spec_reserve_mib(inputs.setup.spec_method or "", inputs.version)
    where = (f"SGLang's automatic share keeps {mib} MiB for the draft at this release, against which they count"
             if mib else "this release keeps no reserve for them: they come out of the target's own graph reserve "
             "(max_bs × 2 MiB), sized for the target's graphs alone")  # fmt: skip
    return base.model_copy(update=dict(
        charge=Charge.AFTER_POOL, label=LABEL, state=TermState.NOT_MODELLED, source=SOURCE,
        detail="captured after the pool: the runner's buffers, the graph pool's outputs and the draft attention "
        f"backend's per-step graph state (FlashInfer: steps × max_bs × topk × context int32 indices); {where}",
    ))  # fmt: skip
