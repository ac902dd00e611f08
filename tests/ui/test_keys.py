"""The help table and the bindings agree: every bound key is documented."""

from __future__ import annotations

import pytest

from kvtop.ui.app import KvtopApp
from kvtop.ui.keys import KEYS
from kvtop.ui.screens.dashboard import DashboardScreen
from kvtop.ui.screens.help import HelpScreen
from kvtop.ui.screens.ledger import RankLedgerScreen
from kvtop.ui.screens.planner import PlannerScreen
from kvtop.ui.screens.processes import ProcessScreen
from kvtop.ui.screens.signal_confirm import SignalScreen
from kvtop.ui.widgets.findings import FindingsPane
from kvtop.ui.widgets.gpu_list import GpuList

DOCUMENTED = {key for entry in KEYS for key in entry.keys.split(",")}


@pytest.mark.parametrize(
    "owner",
    [
        KvtopApp,
        DashboardScreen,
        RankLedgerScreen,
        PlannerScreen,
        GpuList,
        FindingsPane,
        HelpScreen,
        ProcessScreen,
        SignalScreen,
    ],
    ids=lambda c: c.__name__,
)
def test_every_binding_is_in_the_help_table(owner):
    bound = {key.strip() for binding in owner.BINDINGS for key in binding.key.split(",")}  # type: ignore[union-attr]
    assert bound <= DOCUMENTED, bound - DOCUMENTED


def test_the_issue_keys_are_bound():
    app_keys = {binding.key: binding.action for binding in KvtopApp.BINDINGS}  # type: ignore[union-attr]
    assert app_keys == {
        "q": "quit_unless_typing",
        "question_mark": "help",
        "p": "planner",
        "P": "probe",
        "x": "processes",
        "X": "node_processes",  # nvitop's one process table
        "g": "engine_tree",  # issue 32: nvitop's tree view
        "z": "pause",
        "t": "next_theme",
        "r": "refresh",
    }


def test_ctrl_c_quits_from_every_app():
    """htop's, k9s's and nvitop's habit: bound on the base of both apps, with priority over a field's copy."""
    from kvtop.ui.base_app import KvtopBaseApp

    (binding,) = [b for b in KvtopBaseApp.BINDINGS if b.key == "ctrl+c"]  # type: ignore[union-attr]
    assert binding.action == "quit" and binding.priority
