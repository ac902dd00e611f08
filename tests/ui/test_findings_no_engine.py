"""The findings pane on a node where no engine runs: an H200 read live (session 49, `kvtop snapshot --json`,
tests/data/device/) with one foreign process holding memory. The pane said "No findings: every byte is accounted
for." while the header said nothing was diagnosed; it now says the header's verdict and names the GPU whose memory
a process of no engine holds, with the bytes nvidia-smi gave for it."""

from __future__ import annotations

from kvtop.domain.incident import ALL_CLEAR, NO_ENGINE
from kvtop.ui.widgets.findings import FindingsPane
from tests.ui.conftest import wait_for, wait_for_snapshot
from tests.ui.helpers import h200_snapshot


def note_lines(app) -> list[str]:  # type: ignore[no-untyped-def]
    note = app.screen.query_one(FindingsPane).query_one(".findings-note")
    assert note.display
    return note.render().plain.splitlines()


async def test_no_engine_is_not_said_accounted_for_and_the_foreign_bytes_are_named(make_app):
    """pid 524 holds 8802 MiB (nvidia-smi --query-compute-apps, tests/data/device/SOURCES.md) = 9,229,565,952 B
    = 8.5957 GiB: '8.60 GiB'."""
    app = make_app(h200_snapshot())
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for_snapshot(pilot)
        await wait_for(pilot, lambda: app.screen.query_one(FindingsPane).received)
        await pilot.pause()
        lines = note_lines(app)
        assert lines[0] == f"No findings: {NO_ENGINE}"
        assert lines[1:] == ["GPU 0: 8.60 GiB held by 1 process of no engine (x: the process panel names it)"]
        assert not any("accounted for" in line for line in lines)


async def test_a_healthy_planned_node_says_the_all_clear(make_app, healthy_snapshot):
    """Eight ranks each holding their plan (tests/ui/fakes.py), no finding of any kind: the header's sentence."""
    app = make_app(healthy_snapshot)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for_snapshot(pilot)
        app.show_findings([])
        await pilot.pause()
        assert note_lines(app) == [f"No findings: {ALL_CLEAR}"]


async def test_nothing_diagnosed_is_not_marked_as_a_check_passed(make_app):
    """The header said '✓ no engine rank here has a plan to check it against: nothing was diagnosed' (the H200 of
    tests/data/device/): a ✓ read as all clear for a check never made. It is marked '○', and the pane's verdict is
    drawn muted, not in the colour of a pass."""
    app = make_app(h200_snapshot())
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for_snapshot(pilot)
        await wait_for(pilot, lambda: app.screen.query_one(FindingsPane).received)
        await pilot.pause()
        header = app.screen.query_one("#header").render().plain.splitlines()
        assert f"○ {NO_ENGINE}" in header[1] and "✓" not in header[1]
        note = app.screen.query_one(FindingsPane).query_one(".findings-note").render()
        head = note.plain.splitlines()[0]
        styles = {str(span.style) for span in note.spans if span.start < len(head)}
        assert styles == {"bold $text-muted"}


async def test_a_planned_node_without_findings_keeps_its_check_mark(make_app, healthy_snapshot):
    app = make_app(healthy_snapshot)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for_snapshot(pilot)
        app.show_findings([])
        await pilot.pause()
        header = app.screen.query_one("#header").render().plain.splitlines()
        assert f"✓ {ALL_CLEAR}" in header[1]
        note = app.screen.query_one(FindingsPane).query_one(".findings-note").render()
        assert {str(span.style) for span in note.spans} == {"$success"}
