"""The dashboard fits any terminal (issue 18, item 3): every demo scenario at five sizes.

At each size: the GPU in the most trouble (the worst GPU of the worst finding) is on screen; the
GPU rows take two lines only while the findings keep `MIN_FINDINGS_LINES`, else one; the list is
no taller than its rows; the findings pane takes every line left between the list and the footer.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kvtop.commands.node_source import DemoSource
from kvtop.domain.diagnose import diagnose
from kvtop.ui.attention import node_worst_gpu
from kvtop.ui.screens.dashboard import MIN_FINDINGS_LINES, list_layout
from kvtop.ui.widgets.findings import FindingsPane
from kvtop.ui.widgets.gpu_list import GpuList
from tests.ui.conftest import wait_for, wait_for_snapshot
from tests.ui.fakes import FakeSource

SCENARIOS = sorted(
    p.stem for p in (Path(__file__).resolve().parents[2] / "examples" / "scenarios").glob("*.json")
)
SIZES = [(60, 15), (80, 24), (100, 30), (160, 48), (220, 60)]


def test_every_shipped_scenario_is_covered():
    assert set(SCENARIOS) >= {"llama70b-tp8-foreign-gpu3", "gpu5-lost", "orphan-vllm-worker"}


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("scenario", SCENARIOS)
async def test_the_worst_gpu_is_on_screen_and_the_findings_take_the_rest(make_app, scenario, size):
    node = DemoSource.open(scenario).collect_at(0)
    worst = node_worst_gpu(diagnose(node), node)
    app = make_app(FakeSource(node, label=f"demo:{scenario}"))
    width, height = size
    async with app.run_test(size=size) as pilot:
        await wait_for_snapshot(pilot)
        gpus = app.screen.query_one(GpuList)
        pane = app.screen.query_one(FindingsPane)
        await wait_for(pilot, lambda: pane.received)  # laid out once the findings are in (a healthy node may have none)
        await pilot.pause()
        if worst is not None:
            assert worst in gpus.visible_gpus(), (scenario, size, worst, gpus.visible_gpus())
        footer_top = app.screen.query_one("Footer").region.y
        title = app.screen.query_one("#findings-title").region
        assert gpus.region.bottom == title.y  # the findings start right under the rows
        assert pane.region.y == title.bottom and pane.region.bottom == footer_top  # … and take the rest
        assert gpus.size.height <= gpus.lines_needed()  # no blank lines under the rows
        room = footer_top - gpus.region.y - 1  # what rows and findings share (less the title)
        compact, _ = list_layout(len(gpus.shown_gpus), room, width)
        assert gpus.compact == compact
        if not gpus.compact:
            assert pane.size.height >= MIN_FINDINGS_LINES
        if gpus.lines_needed() <= gpus.size.height:
            assert set(gpus.visible_gpus()) == set(gpus.shown_gpus)  # everything fits: nothing scrolled off
        if size == (220, 60):
            assert pane.size.height >= 60 - 8 - 2 * len(gpus.shown_gpus) - 2  # the findings grew


def test_the_layout_rule():
    assert list_layout(8, 43, 160) == (False, 16)  # 160×48: two lines each, 27 for the findings
    assert list_layout(8, 19, 80) == (True, 8)  # 80×24: two-line rows would leave 3 lines: compact
    assert list_layout(8, 9, 60) == (True, 8)  # 60×15: compact, the worst finding's head below
    assert list_layout(8, 6, 60) == (True, 5)  # shorter still: the list scrolls
    assert list_layout(8, 43, 60) == (True, 8)  # too narrow for the two-line bars


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (120, 20), (200, 50)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_legends_headings_stand_over_their_columns(make_app, size):
    """An operator trial at 100 columns: the legend ran 11 cells past the bars, so "NVML used" and "KV" stood
    over the trend, not over their figures. Each heading now ends (NVML used: the figure '79.2 GiB' is right-aligned)
    or starts (KV) in the column of the first GPU row's own text."""
    node = DemoSource.open("llama70b-tp8-sglang").collect_at(0)
    app = make_app(FakeSource(node, label="demo:llama70b-tp8-sglang"))
    async with app.run_test(size=size) as pilot:
        await wait_for_snapshot(pilot)
        await pilot.pause()
        legend = app.screen.query_one("#legend").render().plain
        row = app.screen.query_one(GpuList).row_text(0).splitlines()[0]
        assert legend.index("NVML used") + len("NVML used") == row.index("GiB") + len("GiB")
        assert legend.index("│KV") + 1 == row.index("KV ")
        bar_end = max(row.rindex(glyph) for glyph in "█▓▒▚×·" if glyph in row)
        assert legend.index("│ NVML") == bar_end  # the bar's last cell carries the separator
