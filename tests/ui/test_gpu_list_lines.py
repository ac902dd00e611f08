"""The GPU list keeps the lines it drew and hands them back while they show the same thing.

Each check compares every line the list hands the compositor with what Textual's own styles
cache draws from `render_line` for the same state (its cache emptied first), after each change
an operator can make: a new snapshot, a selection, a finding's marks, focus, a theme, a filter,
a scroll on a node with more GPUs than the screen has lines.
"""

from __future__ import annotations

from textual.geometry import Region
from textual.widget import Widget

from kvtop.commands.node_source import DemoSource
from kvtop.sources.scenario import generated_scenario
from kvtop.ui.widgets.gpu_list import GpuList
from tests.ui.conftest import wait_for, wait_for_snapshot
from tests.ui.fakes import FakeSource, llama_snapshot


def assert_lines_as_textual_draws_them(gpus: GpuList) -> None:
    region = Region(0, 0, gpus.size.width, gpus.size.height)
    kept = gpus.render_lines(region)  # what the compositor gets (maybe strips drawn earlier)
    gpus._styles_cache.clear()  # Textual's cache of this widget, emptied: every line drawn anew
    fresh = Widget.render_lines(gpus, region)
    assert [strip.text for strip in kept] == [strip.text for strip in fresh]
    assert kept == fresh, "same text, different styles"


async def test_kept_lines_equal_fresh_ones_through_an_operators_changes(make_app):
    source = FakeSource(llama_snapshot(kv_usage=0.42))
    app = make_app(source)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for_snapshot(pilot)
        gpus = app.query_one(GpuList)
        assert_lines_as_textual_draws_them(gpus)
        source.push(llama_snapshot(kv_usage=0.9, co_tenant_gpu=3))
        await pilot.press("r")
        await wait_for(pilot, lambda: "90%" in gpus.row_text(0))
        assert_lines_as_textual_draws_them(gpus)
        await pilot.press("down", "down")
        assert gpus.selected == 2
        assert_lines_as_textual_draws_them(gpus)
        gpus.mark_gpus([3, 5], "error")
        await pilot.pause()
        assert_lines_as_textual_draws_them(gpus)
        await pilot.press("f")  # focus leaves the list: its background tint goes
        await pilot.pause()
        assert not gpus.has_focus
        assert_lines_as_textual_draws_them(gpus)
        await pilot.press("t")  # the next theme
        await pilot.pause()
        assert_lines_as_textual_draws_them(gpus)
        gpus.filter_text = "TP3"
        await pilot.pause()
        assert gpus.shown_gpus == (3,)
        assert_lines_as_textual_draws_them(gpus)


async def test_kept_lines_follow_a_scroll(make_app):
    node = DemoSource(generated_scenario(32, 40)).collect_at(0)
    app = make_app(node)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for_snapshot(pilot)
        gpus = app.query_one(GpuList)
        assert gpus.max_scroll_y > 0  # 64 lines in a shorter list: it scrolls
        assert_lines_as_textual_draws_them(gpus)
        await pilot.press("end")
        await wait_for(pilot, lambda: gpus.scroll_offset.y == gpus.max_scroll_y)
        assert_lines_as_textual_draws_them(gpus)
        await pilot.press("up")
        assert_lines_as_textual_draws_them(gpus)


async def test_kept_lines_follow_the_switch_to_one_line_rows_and_back(make_app):
    app = make_app(FakeSource(llama_snapshot(kv_usage=0.42, co_tenant_gpu=3)))
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for_snapshot(pilot)
        gpus = app.query_one(GpuList)
        assert not gpus.compact
        assert_lines_as_textual_draws_them(gpus)
        await pilot.resize_terminal(80, 24)  # two-line rows would leave the findings 3 lines
        await wait_for(pilot, lambda: gpus.compact and gpus.size.height == 8)
        assert_lines_as_textual_draws_them(gpus)
        await pilot.press("down", "down")
        gpus.mark_gpus([3], "warning")
        await pilot.pause()
        assert_lines_as_textual_draws_them(gpus)
        await pilot.resize_terminal(160, 48)
        await wait_for(pilot, lambda: not gpus.compact and gpus.size.height == 16)
        assert_lines_as_textual_draws_them(gpus)
