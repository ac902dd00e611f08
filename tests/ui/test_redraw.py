"""What is on the screen after a new snapshot: rows and the header redraw only what changed, but
everything that changed shows (read from the exported screen, not from a widget's render()).
"""

from __future__ import annotations

import re

from tests.ui.conftest import wait_for, wait_for_snapshot
from tests.ui.fakes import FakeSource, FixedClock, llama_snapshot
from tests.ui.helpers import screen_lines, screen_text


def gpu_line(app, index: int) -> str:
    return next(line for line in screen_lines(app) if line.startswith(f" {index} H100 80GB"))


async def test_a_new_kv_usage_shows_in_every_row(make_app):
    source = FakeSource(llama_snapshot(kv_usage=0.42))
    app = make_app(source)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for_snapshot(pilot)
        assert screen_text(app).count("KV  42%") == 8
        source.push(llama_snapshot(kv_usage=0.9))
        await pilot.press("r")
        await wait_for(pilot, lambda: screen_text(app).count("KV  90%") == 8)
        assert "KV  42%" not in screen_text(app)


async def test_a_co_tenant_arriving_redraws_the_bars_of_its_gpu(make_app):
    source = FakeSource(llama_snapshot())
    app = make_app(source)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for_snapshot(pilot)
        assert "×" not in gpu_line(app, 3)
        source.push(llama_snapshot(co_tenant_gpu=3))
        await pilot.press("r")
        await wait_for(pilot, lambda: "×" in gpu_line(app, 3))
        assert "×" not in gpu_line(app, 2)


async def test_the_header_age_advances_with_the_clock(make_app, healthy_snapshot):
    clock = FixedClock()
    app = make_app(healthy_snapshot, clock=clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for_snapshot(pilot)
        assert "● live · every 3600 s" in screen_text(app)  # on time: no age to tick
        clock.advance(7300)  # two intervals late
        await wait_for(pilot, lambda: "● late · 7300 s ago" in screen_text(app), rounds=300)


async def test_a_clock_tick_moves_now_only_when_a_freshness_marker_reads_differently(
    make_app, healthy_snapshot
):
    """On time, the once-a-second tick costs no redraw; late, it counts the seconds."""
    clock = FixedClock()
    app = make_app(healthy_snapshot, clock=clock)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for_snapshot(pilot)
        app._tick()  # the first tick learns what the marker says
        shown = app.now
        clock.advance(3000)  # within two intervals (3600 s each): still "● live · every 3600 s"
        app._tick()
        assert app.now == shown
        clock.advance(4300)
        app._tick()
        assert app.now == clock.now  # late: the marker reads "late · 7300 s ago"
        clock.advance(1)
        app._tick()
        assert app.now == clock.now
        await wait_for(pilot, lambda: "● late · 7301 s ago" in screen_text(app))


async def test_a_terminal_too_narrow_for_two_line_rows_draws_one_line_per_gpu_uncut(
    make_app, healthy_snapshot
):
    app = make_app(healthy_snapshot)
    async with app.run_test(size=(50, 20)) as pilot:
        await wait_for_snapshot(pilot)
        lines = screen_lines(app)
        rows = [line for line in lines if re.match(r"^\s*[0-7] sglang TP[0-7] ", line)]
        assert [int(line.split()[0]) for line in rows] == list(range(8))  # one line each, in order
        first = lines.index(rows[0])
        assert lines[first : first + 8] == rows  # no wrapped tail between them
        assert all(len(line) <= 50 and line.rstrip().endswith("%") for line in rows)  # the KV % fits


async def test_a_new_kv_usage_shows_in_every_one_line_row(make_app):
    source = FakeSource(llama_snapshot(kv_usage=0.42))
    app = make_app(source)
    async with app.run_test(size=(80, 24)) as pilot:  # one line per GPU at this size
        await wait_for_snapshot(pilot)
        await wait_for(pilot, lambda: screen_text(app).count("KV  42%") == 8)
        source.push(llama_snapshot(kv_usage=0.9, co_tenant_gpu=3))
        await pilot.press("r")
        await wait_for(pilot, lambda: screen_text(app).count("KV  90%") == 8)
        assert "KV  42%" not in screen_text(app)
        assert sum("×" in line for line in screen_lines(app) if re.match(r"^\s*[0-7] sglang", line)) == 1
