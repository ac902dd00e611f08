"""`p` before the node's first reading says so, not "no engine with known settings on this node" (session 57's
operator run: on a busy machine the demo's first snapshot came after the first keys, and the toast denied the
engine the dashboard then showed)."""

from __future__ import annotations

from kvtop.ui.screens.dashboard import DashboardScreen
from tests.ui.conftest import wait_for
from tests.ui.fakes import FakeSource


async def test_p_before_the_first_snapshot_says_none_was_read_yet(make_app):
    source = FakeSource(RuntimeError("NVML not ready"))  # every collect fails: no snapshot ever arrives
    app = make_app(source)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.node.failure is not None)
        assert app.node.snapshot is None
        await pilot.press("p")
        await pilot.pause()
        said = [str(n.message) for n in app._notifications]
        assert said == ["no snapshot of the node yet: wait for the first reading"]  # the probe's words (P)
        assert isinstance(app.screen, DashboardScreen)
