"""The probe dialog of a planner edit never calls the engine's launch "live" on a demo node.

Operator trial (session 58): P in the planner on the demo (header '● simulated') read 'the KV buffers the planner's edit
predicts for this rank (not the live launch's)'.
"""

from __future__ import annotations

from kvtop.commands.node_source import DemoSource
from kvtop.sources.scenario import DEFAULT_SCENARIO
from kvtop.ui.screens.planner import PlannerScreen
from kvtop.ui.screens.probe import ProbeScreen
from tests.ui.conftest import wait_for, wait_for_snapshot


async def test_the_planned_probe_speaks_of_the_running_launch(make_app) -> None:
    app = make_app(
        DemoSource.open(DEFAULT_SCENARIO), probe_runner=lambda request, cancel: None, probe_simulated=True
    )
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for_snapshot(pilot)
        await pilot.press("f", "enter")  # the FP8 finding's fix in the planner
        await wait_for(
            pilot, lambda: isinstance(app.screen, PlannerScreen) and app.screen.outcome is not None
        )
        await pilot.press("P")
        await wait_for(pilot, lambda: isinstance(app.screen, ProbeScreen))
        text = " ".join(app.screen.query_one("#probe-plan").render().plain.split())
        assert "the planner's edit predicts for this rank (not the running launch's)" in text, text
        assert " live " not in text
