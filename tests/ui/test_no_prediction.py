"""The dashboard on an engine kvtop has no plan for (its model URL cannot be loaded): the findings pane
names it as unchecked instead of "No findings: every byte is accounted for.", and `p` says why there is
no planner instead of doing nothing (s37 user review)."""

from __future__ import annotations

from kvtop.ui.screens.planner import PlannerScreen
from kvtop.ui.widgets.findings import NO_FINDINGS, FindingItem, FindingsPane
from tests.sources.fake_prometheus import FakePrometheus, Target
from tests.sources.test_prometheus import kvtop_page
from tests.sources.test_prometheus_node import source
from tests.test_no_prediction_named import unreadable_snapshot
from tests.ui.conftest import wait_for, wait_for_snapshot


async def test_the_findings_pane_names_the_unchecked_engine(make_app):
    snapshot = unreadable_snapshot()
    app = make_app(snapshot)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for_snapshot(pilot)
        pane = app.screen.query_one(FindingsPane)
        await wait_for(pilot, lambda: pane.received and list(app.screen.query(FindingItem)))
        texts = [item.render().plain for item in app.screen.query(FindingItem)]
        assert len(texts) == 1 and "Engine not checked: no prediction" in texts[0]
        assert f"sglang:41000 is not checked: {snapshot.engines[0].ledger_error}" in texts[0]
        note = app.screen.query_one(".findings-note")
        assert not note.display or NO_FINDINGS not in note.render().plain


async def test_p_says_there_is_no_plan_without_a_model(make_app):
    snapshot = unreadable_snapshot()
    app = make_app(snapshot)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for_snapshot(pilot)
        await pilot.press("p")
        await pilot.pause()
        assert not isinstance(app.screen, PlannerScreen)
        said = [n.message for n in app._notifications]
        assert said == [f"no plan for sglang:41000 without a model: {snapshot.engines[0].ledger_error}"]


async def test_p_on_an_engine_read_through_prometheus_says_where_to_plan_it(make_app):
    # Prometheus carries the exporter's figures, not the engine's command line: the planner has nothing to start
    # from, and `p` names the node the exporter reported (its `instance`) and the `kvtop plan` line to run instead
    fake = FakePrometheus([Target("kvtop", "10.0.0.1:9401", kvtop_page("gpu-node-01", co_tenant_gpu=3))])
    snapshot = source(fake, "gpu-node-01").collect()
    app = make_app(snapshot)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for_snapshot(pilot)
        await pilot.press("p")
        await pilot.pause()
        assert not isinstance(app.screen, PlannerScreen)
        (said,) = [n.message for n in app._notifications]
        engine = snapshot.engines[0].engine
        assert said == (
            f"no plan for {engine.engine_id} here: its launch settings are not known (its ledger stays on the node); "
            "run kvtop on 10.0.0.1, or plan the launch with "
            "`kvtop plan --engine sglang --model llama-3-70b -- <its engine flags>`"
        )
