"""The probe dialog's footer says what n / Esc / q do now: 'Cancel' while the plan awaits an answer and while the
probe runs, 'Close' once the result is shown (the hint under the dialog already said 'Esc closes'; the footer kept
'n Cancel' beside a finished probe, read as undoing it: session 49's trial on the demo, a CPU fill of 6.03 GiB)."""

from __future__ import annotations

from textual.widgets._footer import FooterKey

from kvtop.ui.screens.dashboard import DashboardScreen
from tests.ui.conftest import wait_for, wait_for_value
from tests.ui.helpers import FakeRunner, open_probe_of_gpu_3, wait_for_result


def footer(app) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """Each key the footer lists, with the words it gives it."""
    keys = app.screen.query(FooterKey)
    return {key.key: key.description for key in keys if not key.has_class("-disabled")}


async def test_n_is_cancel_before_and_while_running_and_close_after(make_app, roomy):
    runner = FakeRunner(gate=True)
    app = make_app(roomy, probe_runner=runner)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_probe_of_gpu_3(pilot)
        await wait_for_value(pilot, lambda: footer(app), {"y": "Run", "n": "Cancel"})
        await pilot.press("y")
        await wait_for(pilot, runner.started.is_set)
        await wait_for_value(pilot, lambda: footer(app), {"n": "Cancel"})
        runner.gate.set()
        await wait_for_result(pilot, screen)
        await wait_for_value(pilot, lambda: footer(app), {"n": "Close"})
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, DashboardScreen))
        assert not runner.cancels[0].is_set()  # closing a finished probe cancels nothing
