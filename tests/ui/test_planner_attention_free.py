"""The planner and the snapshot on an attention-free model (MambaForCausalLM on SGLang 0.5.23, TP 2, #26): capacity
in requests, tokens bounded by no memory, and neither the pane nor the snapshot breaks on a KV cell of 0 B.

Expected figures by hand (MambaConfig's defaults, tests/data/engine_diff/registry/configs): one request's state per
rank is 32 layers × (conv 3 × 1,536 ÷ 2 × 2 B + SSM 1,536 ÷ 2 × 16 × 4 B, SGLang's float32) = 32 × 53,760 =
1,720,320 B; SGLang's token pool for a model with no attention layer is the context (2,048: pool_configurator.py
`_zero_kv_max_tokens`), and its running requests at most the pool ÷ 2 (§7 resolve_max_num_reqs) = 1,024.
"""

from __future__ import annotations

import re

from kvtop.domain.engines.base import EngineResult
from kvtop.domain.launch import LaunchSettings, parse_flags
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.node import NodeSnapshot, build_snapshot
from kvtop.domain.observe import EngineInstance, NodeObservation
from kvtop.domain.request_capacity import TokenBound
from kvtop.sources.hub import load_model
from tests.data_paths import DATA
from tests.ui.fakes import ENGINE_ID, H100_TOTAL_BYTES, SERVER_PID, TAKEN_AT, _gpu, _worker_bytes
from tests.ui.helpers import open_planner, retype, shown

MAMBA = str(DATA / "engine_diff" / "registry" / "configs" / "MambaForCausalLM.json")
STATE_TP2 = 32 * (3 * 1536 // 2 * 2 + 1536 // 2 * 16 * 4)


def _settings() -> LaunchSettings:
    flags = ["--model-path", MAMBA, "--tp-size", "2", "--context-length", "2048", "--engine-version", "0.5.23"]
    return parse_flags("sglang", flags)


def _ledger() -> Ledger:
    return predict(load_model(MAMBA), _settings(), gpu_total_bytes=H100_TOTAL_BYTES, gpu_name="H100")


def _snapshot() -> NodeSnapshot:
    ledger = _ledger()
    gpus = tuple(_gpu(i, _worker_bytes(ledger, i, ledger.engine.kv_pool_bytes), ()) for i in range(2))
    engine = EngineInstance(engine_id=ENGINE_ID, kind="sglang", server_pid=SERVER_PID, model=MAMBA,
                            settings=_settings(), host="127.0.0.1", port=30000)  # fmt: skip
    observation = NodeObservation(taken_at=TAKEN_AT, driver_version="570.124.06", gpus=gpus, engines=(engine,))
    return build_snapshot(observation, {ENGINE_ID: ledger}, source="fake:mamba-tp2")


def test_the_ledger_gives_requests_and_no_memory_bound_on_tokens() -> None:
    ledger = _ledger()
    capacity = ledger.request_capacity
    assert capacity is not None and capacity.tokens is TokenBound.NOT_BOUNDED_BY_MEMORY
    assert capacity.state_bytes_per_request == STATE_TP2 == 1_720_320
    assert capacity.token_pool == 2048 and capacity.engine_cap == 2048 // 2
    assert capacity.requests == min(capacity.requests_fit, 1024) == 1024
    # the state pool holds the slots it sized, and SGLang's one padding slot
    assert ledger.engine.state_pool_bytes == (capacity.requests_fit + 1) * STATE_TP2
    assert isinstance(ledger.engine, EngineResult) and ledger.kv_bytes_per_token == 0


def test_the_snapshot_builds_for_it() -> None:
    """Both ranks joined to the engine's ledger and its waterfall built (a cell of 0 B divides nothing)."""
    (view,) = _snapshot().engines
    assert view.ledger is not None and view.ledger_error is None
    assert view.ledger.request_capacity is not None and len(view.ranks) == 2


def test_the_dashboards_engine_line_gives_requests() -> None:
    from kvtop.ui.widgets.node_header import engine_line

    (view,) = _snapshot().engines
    assert "TP2 · requests 1,024 predicted (no KV)" in engine_line(view).plain


async def test_the_planner_shows_requests_and_takes_an_edit(make_app) -> None:
    app = make_app(_snapshot())
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await open_planner(pilot)
        result = shown(screen, "#plan-result")
        assert re.search(r"tokens per rank\s+no KV →\s+no KV", result)
        assert re.search(r"state requests\s+1,024 →\s+1,024", result)
        # the requests' interval (before: 'none in requests yet'): SGLang's cap (1,024) is below the state slots at
        # both ends of the calibrated budget, so memory moves only the slots
        assert re.search(r"fresh start\s+1,024 requests at both ends: the engine's cap binds, not memory \(state slots",
                         result)
        await retype(pilot, "#plan-tp", "1")
        after = screen.outcome.after
        assert after is not None and after.request_capacity is not None
        assert after.request_capacity.state_bytes_per_request == 2 * STATE_TP2


def test_plan_text_and_json_give_requests() -> None:
    """`kvtop plan`'s block and its JSON: requests, the state each, the engine's token pool named its own cap."""
    from kvtop.commands.render_ledger import capacity_lines, ledger_json

    ledger = _ledger()
    text = "\n".join(capacity_lines(ledger))
    assert "Request capacity    1,024 requests per rank" in text and "1,720,320 B" in text
    assert "Token capacity      not bounded by memory (the engine's own token figure: 2,048)" in text
    shown_json = ledger_json(ledger)["request_capacity"]
    assert shown_json["requests"] == 1024 and shown_json["state_bytes_per_request"] == STATE_TP2
    assert shown_json["tokens"] == "not_bounded_by_memory" and shown_json["token_pool"] == 2048


async def test_the_rank_ledger_gives_requests(make_app) -> None:
    from textual.widgets import Static

    from kvtop.ui.screens.ledger import RankLedgerScreen
    from tests.ui.conftest import wait_for, wait_for_snapshot

    app = make_app(_snapshot())
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for_snapshot(pilot)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, RankLedgerScreen))
        await pilot.pause()
        summary = pilot.app.screen.query_one("#ledger-summary", Static).render().plain
        assert "requests       predicted 1,024 (a state of 1.64 MiB each" in summary
