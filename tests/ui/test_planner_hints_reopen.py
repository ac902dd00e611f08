"""The planner's hints survive closing it on an edit that does not solve (session 61's operator pass).

An invalid field keeps the hints of the last launch that solved (test_planner_other_model.py); closing the planner
and opening it again lost them: the new screen had solved nothing yet, so every blank field read "engine default"
while the typed text stayed invalid. The draft now carries the hints with the edits.
"""

from __future__ import annotations

from textual.widgets import Input

from tests.ui.helpers import open_planner, retype


def hint(screen, key: str) -> str:  # type: ignore[no-untyped-def]
    return screen.query_one(f"#plan-{key}", Input).placeholder


async def test_reopening_on_an_invalid_edit_keeps_the_last_solved_hints_and_the_edit(planner_on):  # type: ignore[no-untyped-def]
    async with planner_on(size=(200, 50)) as (_, pilot, screen):
        # SGLang 0.5.9's automatic share for Llama-3-70B at TP 4 on the H100 (test_planner.py's TP4): 0.824;
        # config.json max_position_embeddings 8192
        await retype(pilot, "#plan-tp", "4")
        assert hint(screen, "memory_fraction") == "auto: 0.824"
        await retype(pilot, "#plan-tp", "x")
        assert screen.outcome.after is None
        await pilot.press("escape")
        screen = await open_planner(pilot)
        assert screen.query_one("#plan-tp", Input).value == "x"  # the edit is kept
        assert screen.outcome.after is None
        assert hint(screen, "memory_fraction") == "auto: 0.824"
        assert hint(screen, "context_length") == "auto: 8192"
        await retype(pilot, "#plan-tp", "8")  # solved again: its own hints
        assert hint(screen, "memory_fraction") == "auto: 0.818"
