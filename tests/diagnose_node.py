"""The hand-built node diagnose()'s tests run on: real configs, real predict() (tests/domain/test_diagnose*.py).

The node is Meta-Llama-3-70B at TP8 on eight H100s (81,559 MiB each, 512 MiB driver-reserved),
its workers holding what the ledger predicts less 2 GiB of runtime reserve not yet claimed.
Variants add one cause each.
"""

from __future__ import annotations

import math

from kvtop.domain.diagnose import Finding, Severity
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.vllm.extensible_kv import extensible
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.node import NodeSnapshot, build_snapshot
from kvtop.domain.observe import (
    EndpointState,
    EngineInstance,
    EngineLive,
    EngineRank,
    GpuObservation,
    GpuProcess,
    GpuState,
    NodeObservation,
    ProcessRole,
)
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS

MIB, GIB = 1 << 20, 1 << 30
H100 = 81559 * MIB
H200 = 143771 * MIB
RESERVED = 512 * MIB
CONTEXT = GIB  # a fresh CUDA context at a restart (SGLang's own default estimate)
SERVER = 4242
LLAMA_70B = "meta-llama--Meta-Llama-3-70B.json"


#: The SGLang release the node runs, as the demo scenarios do (its automatic fraction has no piecewise
#: prefill-graph reserve, so Llama-3-70B at TP8 on H100 gets 0.818).
SGLANG_VERSION = "0.5.9"
#: The vLLM release: the last whose KV budget is the requested share of the total (0.92), which the diagnoses' start
#: check, restart and utilization advice reason on; v0.34.0's extensible KV cache sizes from the free memory after
#: warmup (engines/vllm/extensible_kv.py), diagnosed in tests/domain/test_vllm_extensible_diagnose.py.
VLLM_VERSION = "0.33.0"
PINNED = {"sglang": SGLANG_VERSION, "vllm": VLLM_VERSION}


def ledger(config: str, engine: str, *flags: str, gpu: int = H100) -> Ledger:
    pinned = engine in PINNED and "--engine-version" not in flags
    versioned = [*flags, "--engine-version", PINNED[engine]] if pinned else list(flags)
    return predict(load_model(str(CONFIGS / config)), parse_flags(engine, versioned), gpu_total_bytes=gpu)


def llama(engine: str = "sglang", *flags: str) -> Ledger:
    return ledger(LLAMA_70B, engine, "--tp", "8", *flags)


def node(
    plan: Ledger,
    *,
    others: dict[int, tuple[GpuProcess, ...]] | None = None,
    worker_extra: dict[int, int] | None = None,
    lost: int | None = None,
    gpus: int = 8,
    live: dict[str, object] | None = None,
) -> NodeSnapshot:
    """A node serving `plan` on GPUs 0..n-1, with extra processes and worker bytes per GPU."""
    kind = plan.settings.engine
    engine_id = f"{kind}:{SERVER}"
    others, worker_extra = others or {}, worker_extra or {}
    gpu_list = []
    for index in range(gpus):
        if index == lost:
            gpu_list.append(
                GpuObservation(index=index, state=GpuState.LOST, state_message="GPU has fallen off the bus")
            )
            continue
        processes = list(others.get(index, ()))
        if index < len(plan.ranks):
            row = plan.ranks[index]
            # SGLang and vLLM's extensible KV cache (v0.34.0) hold what they sized from the free memory
            if kind == "sglang" or extensible(plan.settings, plan.version):
                # the context less the driver's reserved bytes (NVML counts those apart from every process)
                held = (
                    row.weights_bytes + row.kv_pool_bytes + row.reserve_bytes + CONTEXT - RESERVED - 2 * GIB
                )
            else:  # vLLM up to v0.33.0 holds its requested share of total, less what it has not claimed, plus its context
                held = math.ceil(plan.gpu_total_bytes * plan.engine.memory_fraction) - GIB
            processes.insert(0, GpuProcess(
                pid=SERVER + 1 + index, used_bytes=held + worker_extra.get(index, 0), name="python3",
                role=ProcessRole.ENGINE_WORKER, engine_id=engine_id, engine_kind=kind, rank=EngineRank(tp=row.tp_rank),
            ))  # fmt: skip
        used = sum(p.used_bytes or 0 for p in processes)
        gpu_list.append(GpuObservation(
            index=index, total_bytes=plan.gpu_total_bytes, used_bytes=used, reserved_bytes=RESERVED,
            free_bytes=plan.gpu_total_bytes - used - RESERVED, processes=tuple(processes),
        ))  # fmt: skip
    engine_live = EngineLive(
        state=EndpointState.OK,
        token_capacity=plan.token_capacity,
        memory_fraction=plan.engine.memory_fraction,
    )
    engine = EngineInstance(
        engine_id=engine_id, kind=kind, server_pid=SERVER, settings=plan.settings, host="127.0.0.1", port=30000,
        live=engine_live.model_copy(update=live or {}),
    )  # fmt: skip
    observation = NodeObservation(taken_at=0.0, gpus=tuple(gpu_list), engines=(engine,))
    return build_snapshot(observation, {engine_id: plan}, source="test")


def co_tenant(
    pid: int, used: int, *, role: ProcessRole = ProcessRole.CO_TENANT, **fields: object
) -> GpuProcess:
    return GpuProcess.model_validate(
        {"pid": pid, "used_bytes": used, "name": "python", "user": "alice", "role": role, **fields}
    )


def only(findings: tuple[Finding, ...], rule: str) -> Finding:
    matching = [f for f in findings if f.rule == rule]
    assert len(matching) == 1, [f.rule for f in findings]
    return matching[0]


def problems(findings: tuple[Finding, ...]) -> set[str]:
    return {f.rule for f in findings if f.severity is not Severity.INFO}


def sglang_capacity(plan: Ledger, free_before_load: int, **settings: object) -> int:
    """SGLang's capacity for `plan` solved with a measured pre-load free memory (min over ranks)."""
    measured = MeasuredInputs(free_before_load_bytes=free_before_load)
    return predict(
        plan.model,
        plan.settings.model_copy(update=settings),
        gpu_total_bytes=plan.gpu_total_bytes,
        measured=measured,
    ).token_capacity


CLEAN = H100 - RESERVED - CONTEXT  # free before load at a restart, nothing else on the GPU
