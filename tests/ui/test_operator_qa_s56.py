"""Session 56's operator QA run on the demo node (SGLang 0.5.9, Llama-3-70B, TP8 on 8× H100, 1,229,052 tokens
logged per rank): what the screens said badly, each fixed and held here."""

from __future__ import annotations

from kvtop.commands.node_source import DemoSource
from kvtop.sources.scenario import DEFAULT_SCENARIO
from tests.ui.conftest import wait_for, wait_for_snapshot
from tests.ui.test_redraw import screen_lines


def demo_app(make_app, **options):
    return make_app(DemoSource.open(DEFAULT_SCENARIO), **options)


async def test_a_paused_demo_still_says_it_is_simulated(make_app):
    app = demo_app(make_app)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for_snapshot(pilot)
        assert "● simulated" in screen_lines(app)[0]
        await pilot.press("z")
        await wait_for(pilot, lambda: "PAUSED" in screen_lines(app)[0])
        top = screen_lines(app)[0]
        assert "● simulated · ⏸ PAUSED" in top, top  # was: the badge gone while paused


def test_a_late_or_stale_demo_marker_keeps_its_simulated_badge():
    from kvtop.ui.freshness import Wording, freshness

    demo = Wording(failing="source failing", silent="silent", first="first", fresh="simulated")
    assert freshness(0.0, None, 1.0, demo).plain == "● simulated · every 1 s"
    assert freshness(2.5, None, 1.0, demo).plain == "● simulated · ● late · 2 s ago"  # 2 intervals late
    assert freshness(9.0, None, 1.0, demo).plain.startswith("● simulated · ▲ STALE 9 s")
    live = Wording(failing="source failing", silent="silent", first="first")
    assert freshness(2.5, None, 1.0, live).plain == "● late · 2 s ago"  # a real node: no badge
