"""`p` in the planner (session 67's walk): where no field held the focus, as in a planner opened on a finding's fix,
`p` opened a second planner over the first, and its footer offered 'p Planner'. The planner is one screen deep."""

from __future__ import annotations

from kvtop.ui.screens.planner import PlannerScreen
from tests.ui.conftest import footer_keys, wait_for


async def test_p_in_the_planner_opens_no_second_planner(planner_on) -> None:
    async with planner_on(size=(120, 40)) as (app, pilot, screen):
        screen.set_focus(None)  # as a fix's planner opens: no field to type `p` into
        await pilot.pause()
        assert "p" not in await footer_keys(pilot)
        await pilot.press("p")
        await pilot.pause()
        assert [type(s) for s in app.screen_stack].count(PlannerScreen) == 1
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, PlannerScreen))
        await pilot.press("p")
        await wait_for(pilot, lambda: isinstance(app.screen, PlannerScreen))  # from the dashboard `p` still opens it
