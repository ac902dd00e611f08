"""`ctrl+r` leaves the focused field's live value selected, as focusing it does, so the next key replaces it (session
57's operator run: TP 4, ctrl+r, then 4 read 'TP 84': 64 attention heads do not divide over 84 ranks)."""

from __future__ import annotations

from textual.widgets import Input

from tests.ui.conftest import wait_for


async def test_a_key_after_ctrl_r_replaces_the_reset_value(planner_on):
    async with planner_on(size=(160, 48)) as (_, pilot, screen):
        tp = screen.query_one("#plan-tp", Input)
        await pilot.press("2")  # selected on opening: TP 8 → 2
        await wait_for(pilot, lambda: tp.value == "2")
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: tp.value == "8")
        await pilot.press("4")
        await wait_for(pilot, lambda: screen.outcome.after is not None and screen.outcome.after.layout.tp == 4)
        assert tp.value == "4"  # was '84'
