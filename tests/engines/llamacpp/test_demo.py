"""examples/scenarios/llamacpp-llama31-8b.json: llama-server on a simulated L40S, its cache the -c it was given."""

from __future__ import annotations

from kvtop.commands.node_source import DemoSource
from kvtop.sources.scenario import load_scenario


def test_the_llamacpp_demo_node() -> None:
    snapshot = DemoSource(load_scenario("llamacpp-llama31-8b")).collect_at(0)
    (engine,) = snapshot.engines
    assert [(rank.gpu_index, rank.pid) for rank in engine.ranks] == [(0, 31000)]  # one process, one GPU
    assert engine.ledger is not None
    # -c 65536 over 4 slots, one stream each of GGML_PAD(65536 / 4, 256) = 16384 cells: 65536 cells in all;
    # 32 layers × (1024 K + 1024 V) elements in q8_0 (34 B per 32) = 69,632 B a cell
    assert engine.ledger.token_capacity == 65536 and engine.ledger.engine.max_running_requests == 4
    assert engine.ledger.engine.kv_pool_bytes == 65536 * 32 * 2 * 1024 // 32 * 34 == 4_563_402_752
