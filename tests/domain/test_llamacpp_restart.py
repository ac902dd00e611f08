"""diagnose() on a llama.cpp node: a restart that cannot allocate the cache `-c` asks for beside the weights is
`restart_will_not_fit`, in llama.cpp's own words (the shared restart rule, kvtop/domain/engines/restart.py).

The node is one H100 running llama-server with Llama-3.1-8B (its config.json) at `-c 131072 -np 1`: llama.cpp
allocates the whole context at start, 131,072 cells × 32 layers × 2,048 K+V elements × 2 B = 16 GiB of KV
(the KV book's test: tests/engines/llamacpp/test_kv_book.py, 4,096 MiB at 32,768 cells).
"""

from __future__ import annotations

from kvtop.domain.diagnose import Severity, diagnose
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
    NodeObservation,
    ProcessRole,
)
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_model
from tests.data_paths import CONFIGS
from tests.diagnose_node import H100, RESERVED, co_tenant, only

SERVER = 4400
CELLS = 131_072


def plan() -> Ledger:
    model = load_model(str(CONFIGS / "meta-llama--Llama-3.1-8B.json"))
    return predict(model, parse_flags("llamacpp", ["-c", str(CELLS), "-np", "1"]), gpu_total_bytes=H100)


def llamacpp_node(ledger: Ledger, others: tuple[GpuProcess, ...] = ()) -> NodeSnapshot:
    engine_id = f"llamacpp:{SERVER}"
    (row,) = ledger.ranks
    server = GpuProcess(
        pid=SERVER, used_bytes=row.weights_bytes + row.kv_pool_bytes + GIB, name="llama-server",
        role=ProcessRole.ENGINE_WORKER, engine_id=engine_id, engine_kind="llamacpp", rank=EngineRank(tp=0),
    )  # fmt: skip
    used = server.used_bytes or 0
    used += sum(p.used_bytes or 0 for p in others)
    gpu = GpuObservation(index=0, total_bytes=H100, used_bytes=used, reserved_bytes=RESERVED,
                         free_bytes=H100 - used - RESERVED, processes=(server, *others))  # fmt: skip
    engine = EngineInstance(
        engine_id=engine_id, kind="llamacpp", server_pid=SERVER, settings=ledger.settings, host="127.0.0.1",
        port=8080, live=EngineLive(state=EndpointState.OK, token_capacity=ledger.token_capacity),
    )  # fmt: skip
    return build_snapshot(NodeObservation(taken_at=0.0, gpus=(gpu,), engines=(engine,)), {engine_id: ledger},
                          source="test")  # fmt: skip


def test_the_plan_holds_the_whole_context_asked() -> None:
    ledger = plan()
    assert ledger.token_capacity == CELLS
    assert ledger.ranks[0].kv_pool_bytes == CELLS * 32 * 2048 * 2 == 16 * GIB


def test_a_restart_beside_a_60_gib_co_tenant_cannot_allocate_the_cache() -> None:
    """16 GiB of weights and 16 GiB of KV do not fit in what an 80 GB H100 keeps beside 60 GiB of others (18.4 GiB)."""
    restart = only(diagnose(llamacpp_node(plan(), (co_tenant(9100, 60 * GIB),))), "restart_will_not_fit")
    assert restart.severity is Severity.CRITICAL and restart.gpus == (0,)
    assert restart.tokens == restart.gain_tokens == CELLS
    assert restart.bytes > 0
    assert restart.summary.startswith(f"a restart of llamacpp:{SERVER} would fail to allocate its KV cache: GPU 0 ")
    assert restart.fix == "free memory on GPU 0, or a smaller -c, or -ctk q8_0 -ctv q8_0"
    assert restart.evidence == ("llama.cpp allocates the whole -c at start: 'failed to allocate buffer for kv cache'",)


def test_a_small_co_tenant_leaves_the_restart_room() -> None:
    found = diagnose(llamacpp_node(plan(), (co_tenant(9101, 2 * GIB),)))
    assert not [f for f in found if f.rule == "restart_will_not_fit"]
