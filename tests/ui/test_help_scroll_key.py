"""The help dialog says it scrolls (session 60, operator pass in tmux at 100×30): its key table is longer than a
30-line terminal, the box draws no scrollbar, and the footer said only 'esc Close', so the planner's and the
ledger's keys below the fold looked absent."""

from __future__ import annotations

from textual.containers import VerticalScroll

from tests.ui.conftest import footer_keys, wait_for, wait_for_snapshot
from tests.ui.helpers import screen_lines


async def test_help_on_a_short_terminal_names_its_scroll_key(make_app, healthy_snapshot):
    app = make_app(healthy_snapshot)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for_snapshot(pilot)
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: app.screen.query("#help-box"))
        await pilot.pause()
        box = app.screen.query_one("#help-box", VerticalScroll)
        assert box.max_scroll_y > 0  # the table does not fit: there is something to scroll to
        assert await footer_keys(pilot) == ["escape", "j"]  # was ["escape"]: only "esc Close"
        assert "↑↓ Scroll" in screen_lines(app)[-1]
        await pilot.press("down")
        assert box.scroll_y > 0
