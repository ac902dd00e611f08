"""A token capacity read from the startup log (`--engine-log`) is said to be the log's, not "live" (session 57's
TUI run: an RTX 3090 vLLM 0.4.1 start, its endpoint unreachable, read "38,560 predicted / 37,728 live" in the header
and "engine reports 37,728" in the rank ledger, though the 37,728 is the log's: a figure of the start).

The log is tests/data/cases/vllm/file29429054722-v041-llama3-8b-3090/engine.log: '# GPU blocks: 2358' at vLLM
0.4.1's 16-token blocks is 2,358 × 16 = 37,728 tokens. The node: one RTX 3090 running that launch on Llama-3.1-8B
(the same KV geometry as Llama-3-8B: 32 layers, 8 KV heads, head_dim 128), its endpoint unreachable so the log's
figure is the one the engine states. Every view, and the domain's findings, say it in the words of
`kvtop.domain.capacity.capacity_said` (session 58: the views had four: "engine's log printed", "logged", "from the log",
"engine logged"; the findings a fifth, "the engine's log printed")."""

from __future__ import annotations

import json
from pathlib import Path

from kvtop.commands.node_source import DemoSource
from kvtop.domain.logged_capacity import with_logged_capacity
from kvtop.domain.node import NodeSnapshot, build_snapshot
from kvtop.domain.observe import NvmlState
from kvtop.sources.engine_logs import read_engine_log
from kvtop.ui.ledger_rows import rank_ledger
from kvtop.ui.screens.ledger import summary_lines, table_lines
from kvtop.ui.widgets.node_header import engine_line
from tests.data_paths import CASES, CONFIGS
from tests.ui.helpers import open_planner, shown

LOG = CASES / "vllm/file29429054722-v041-llama3-8b-3090/engine.log"
LOGGED_TOKENS = 2_358 * 16  # '# GPU blocks: 2358' × vLLM's 16-token block


def snapshot(tmp_path: Path, endpoint: str) -> NodeSnapshot:
    scenario = {
        "description": "vLLM 0.4.1 on one RTX 3090", "seed": 1,
        "gpu": {"model": "RTX3090", "count": 1, "name": "NVIDIA GeForce RTX 3090"},
        "engines": [{
            "model": str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"),
            "command": "python -m vllm.entrypoints.openai.api_server --model Meta-Llama-3-8B-Instruct "
                       "--gpu-memory-utilization 0.9 --max-model-len 8192",
            "server_pid": 1000, "version": "0.4.1", "endpoint": endpoint,
        }],
    }  # fmt: skip
    path = tmp_path / "vllm-3090.json"
    path.write_text(json.dumps(scenario))
    return DemoSource.open(str(path), engine_log=LOG).collect_at(0)


def test_the_logs_capacity_is_called_the_logs_in_the_header_and_the_ledger(tmp_path: Path) -> None:
    state = snapshot(tmp_path, "unreachable")
    (view,) = state.engines
    assert view.engine.live.token_capacity == LOGGED_TOKENS
    assert f"/ {LOGGED_TOKENS:,} logged" in engine_line(view).plain  # one word, wide or narrow
    assert f"/ {LOGGED_TOKENS:,} logged" in engine_line(view, compact=True).plain
    assert " live" not in engine_line(view).plain
    ledger = rank_ledger(state, 0)
    assert ledger is not None
    assert f"engine logged {LOGGED_TOKENS:,}" in summary_lines(ledger, state).plain
    table = table_lines(ledger).plain
    assert "KV pool (logged tok × B)" in table and "the count the engine logged" in table


def test_a_demo_endpoints_capacity_is_simulated_and_a_real_ones_live(tmp_path: Path) -> None:
    """The endpoint states its own (the log is not used, the notice says so): on a demo node that figure is the
    scenario's, "simulated" in every view (session 58: the header said '● simulated' but '/ 38,816 live'); the same
    observation from a driver (nvml ok) is the endpoint's reading now, "live"."""
    demo = snapshot(tmp_path, "ok")
    (view,) = demo.engines
    assert view.engine.live.token_capacity is not None and not view.engine.live.token_capacity_logged
    assert f"/ {view.engine.live.token_capacity:,} simulated" in engine_line(view).plain
    assert " live" not in engine_line(view).plain
    ledger = rank_ledger(demo, 0)
    assert ledger is not None and "demo simulates" in summary_lines(ledger, demo).plain
    assert "KV pool (simulated tok × B)" in table_lines(ledger).plain
    real = build_snapshot(
        demo.observation.model_copy(update={"nvml_state": NvmlState.OK}),
        {v.engine.engine_id: v.ledger for v in demo.engines if v.ledger is not None},
    )
    (live,) = real.engines
    assert f"/ {live.engine.live.token_capacity:,} live" in engine_line(live).plain
    ledger = rank_ledger(real, 0)
    assert ledger is not None and "engine reports" in summary_lines(ledger, real).plain
    assert "KV pool (live tok × B)" in table_lines(ledger).plain
    assert live.ranks[0].capacity is not None and live.ranks[0].capacity.describe().endswith(" live")


async def test_the_planner_calls_the_logs_capacity_logged(make_app, tmp_path: Path) -> None:
    app = make_app(snapshot(tmp_path, "unreachable"))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_planner(pilot)
        table = shown(screen, "#plan-result")
        assert f"engine logged{'':4}{LOGGED_TOKENS:>12,}" in table and "engine reports" not in table


def test_a_figure_an_earlier_log_gave_is_said_logged_when_a_log_is_offered_again(tmp_path: Path) -> None:
    """Who states the engine's figure is decided once (`CapacitySource.of_reading`): the same log offered to an engine
    whose figure that log already gave (a demo node, its endpoint unreachable) is not used because the engine logged
    it, not because "the demo simulates" it (logged_capacity once decided 'demo' by NVML's state alone: a second rule
    for 'simulated', session 67's second reader)."""
    state = snapshot(tmp_path, "unreachable")
    (view,) = state.engines
    assert view.engine.live.token_capacity_logged and state.observation.nvml_state is NvmlState.DEMO
    _, notice = with_logged_capacity(state.observation, read_engine_log(LOG), {}, None)
    assert notice is not None and "is not used: the engine logged vllm:1000's token capacity (37,728)" in notice
    assert "simulates" not in notice
