"""SVG snapshots of the dashboard, the rank ledger, the planner, the engine tree, the process panel and
the signal dialog, the node's process table with two tagged and their dialog at 80×24, 120×40 and 200×60.

Deterministic: a fixed clock (age 0 s), one collect (the interval is an hour), a fixed
`taken_at`, history of one sample, the dark palette, and no blinking cursor.
Regenerate with `pytest tests/ui/test_snapshots.py --snapshot-update` and look at the SVGs.
"""

from __future__ import annotations

import pytest
from textual.widgets import Input

from kvtop.ui.screens.engines import EngineTreeScreen
from kvtop.ui.screens.ledger import RankLedgerScreen
from kvtop.ui.screens.planner import PlannerScreen
from kvtop.ui.screens.processes import ProcessScreen
from kvtop.ui.screens.signal_confirm import SignalScreen
from tests.ui.conftest import wait_for, wait_for_snapshot

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((120, 40), id="120x40"), pytest.param((200, 60), id="200x60")]


async def _steady(pilot) -> None:
    for box in pilot.app.screen.query(Input):
        box.cursor_blink = False
    await pilot.pause()


async def show_dashboard(pilot) -> None:
    await wait_for_snapshot(pilot)
    await _steady(pilot)


async def show_ledger_of_gpu_3(pilot) -> None:
    await wait_for_snapshot(pilot)
    await pilot.press("down", "down", "down", "enter")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, RankLedgerScreen))
    await _steady(pilot)


async def show_planner_at_tp_4(pilot) -> None:
    await wait_for_snapshot(pilot)
    await pilot.press("p")
    await wait_for(
        pilot, lambda: isinstance(pilot.app.screen, PlannerScreen) and pilot.app.screen.outcome is not None
    )
    await pilot.click("#plan-tp")
    await pilot.press("end", "backspace", "4")
    await _steady(pilot)


@pytest.mark.parametrize("size", SIZES)
def test_dashboard(snap_compare, make_app, co_tenant_snapshot, size):
    assert snap_compare(make_app(co_tenant_snapshot), terminal_size=size, run_before=show_dashboard)


@pytest.mark.parametrize("size", SIZES)
def test_rank_ledger(snap_compare, make_app, co_tenant_snapshot, size):
    assert snap_compare(make_app(co_tenant_snapshot), terminal_size=size, run_before=show_ledger_of_gpu_3)


@pytest.mark.parametrize("size", SIZES)
def test_planner(snap_compare, make_app, co_tenant_snapshot, size):
    assert snap_compare(make_app(co_tenant_snapshot), terminal_size=size, run_before=show_planner_at_tp_4)


async def show_signal_dialog_of_the_co_tenant(pilot) -> None:
    await wait_for_snapshot(pilot)
    await pilot.press("f", "enter")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, ProcessScreen))
    await pilot.press("T")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, SignalScreen))
    await _steady(pilot)


async def show_process_panel_of_gpu_3(pilot) -> None:
    await wait_for_snapshot(pilot)
    await pilot.press("f", "enter")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, ProcessScreen))
    await _steady(pilot)


@pytest.mark.parametrize("size", SIZES)
def test_process_panel(snap_compare, make_app, co_tenant_snapshot, size):
    app = make_app(co_tenant_snapshot, signal_sender=_NoSender())
    assert snap_compare(app, terminal_size=size, run_before=show_process_panel_of_gpu_3)


@pytest.mark.parametrize("size", SIZES)
def test_signal_dialog(snap_compare, make_app, co_tenant_snapshot, size):
    app = make_app(co_tenant_snapshot, signal_sender=_NoSender())
    assert snap_compare(app, terminal_size=size, run_before=show_signal_dialog_of_the_co_tenant)


class _NoSender:
    """A signal sender for pictures: the snapshots never confirm a dialog."""

    def send(self, request):  # pragma: no cover - never called
        raise AssertionError("a snapshot test sent a signal")


async def show_engine_tree(pilot) -> None:
    await wait_for_snapshot(pilot)
    await pilot.press("g")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, EngineTreeScreen))
    await _steady(pilot)


@pytest.mark.parametrize("size", SIZES)
def test_engine_tree(snap_compare, make_app, co_tenant_snapshot, size):
    assert snap_compare(make_app(co_tenant_snapshot), terminal_size=size, run_before=show_engine_tree)


async def show_node_table_with_two_tagged(pilot) -> None:
    """`X`: every GPU's processes; the co-tenant (pid 9001) and SGLang's TP0 worker (pid 4243) tagged."""
    await wait_for_snapshot(pilot)
    await pilot.press("X")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, ProcessScreen))
    table = pilot.app.screen
    for pid in (9001, 4243):
        table.query_one("#processes-table").move_cursor(row=[row.pid for row in table._rows].index(pid))
        await pilot.pause()
        await pilot.press("space")
    await _steady(pilot)


async def show_dialog_of_the_two_tagged(pilot) -> None:
    await show_node_table_with_two_tagged(pilot)
    await pilot.press("T")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, SignalScreen))
    await _steady(pilot)


@pytest.mark.parametrize("size", SIZES)
def test_node_process_table(snap_compare, make_app, co_tenant_snapshot, size):
    app = make_app(co_tenant_snapshot, signal_sender=_NoSender())
    assert snap_compare(app, terminal_size=size, run_before=show_node_table_with_two_tagged)


@pytest.mark.parametrize("size", SIZES)
def test_signal_dialog_of_tagged(snap_compare, make_app, co_tenant_snapshot, size):
    app = make_app(co_tenant_snapshot, signal_sender=_NoSender())
    assert snap_compare(app, terminal_size=size, run_before=show_dialog_of_the_two_tagged)
