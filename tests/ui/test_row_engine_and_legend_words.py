"""Session 54's operator trial at 120 columns: the legend was cut to "×for…" with "·free" lost, and a row whose
"kind + rank" did not fit dropped the engine ("TP10"; llama70b-tp4-lmdeploy's two LMDeploy engines both read "TP0")."""

from __future__ import annotations

from kvtop.commands.node_source import DemoSource
from kvtop.ui.screens.dashboard import gpu_rows
from kvtop.ui.state import NodeState
from kvtop.ui.widgets.memory_bar import LEGEND_ORDER, ORPHAN, fitted_legend
from kvtop.ui.widgets.row_data import RANK_WIDTH, who_label
from kvtop.ui.widgets.row_parts import heading_widths


def test_the_legend_keeps_every_kind_at_120_columns() -> None:
    bar, _, _ = heading_widths(116)  # a 120-column dashboard's row, less the list's edge
    shown = fitted_legend(bar - 1).plain
    assert shown.rstrip() == "█wts ▓KV ▒rt ▚drv ×fgn ·free" and "…" not in shown
    assert len(shown) == bar - 1  # the headings after it still stand over their figures
    wide = fitted_legend(80).plain  # room enough: the labels whole
    assert wide.startswith("█weights ▓KV pool ▒runtime ▚driver ×foreign ·free")
    assert "⊘orph" in fitted_legend(bar + 5, (*LEGEND_ORDER, ORPHAN)).plain


def test_two_lmdeploy_engines_each_say_which_they_are() -> None:
    node = DemoSource.open("llama70b-tp4-lmdeploy").collect_at(0)
    state = NodeState(source_label="demo", snapshot=node)
    labels = {row.gpu.index: who_label(row) for row in gpu_rows(state)}
    # GPUs 0-3: lmdeploy:23000 TP0-TP3, GPUs 4-5: lmdeploy:23400 TP0-TP1 (examples/scenarios/llama70b-tp4-lmdeploy)
    assert (labels[0], labels[4]) == ("lmde…1 TP0", "lmde…2 TP0")
    assert labels[0] != labels[4] and all(len(label) < RANK_WIDTH for label in labels.values())


def test_a_single_engine_keeps_its_kind_when_the_rank_is_wide() -> None:
    node = DemoSource.open("dsv3-tp16-sglang-node1").collect_at(0)
    labels = {row.gpu.index: who_label(row) for row in gpu_rows(NodeState(source_label="demo", snapshot=node))}
    assert (labels[0], labels[2]) == ("sglang TP8", "sgla… TP10")  # TP8 − TP15 on node rank 1: whole where it fits


def test_at_80_columns_the_glyphs_alone_part_the_kinds() -> None:
    shown = fitted_legend(27).plain  # the one-line rows' bar at 80 columns (test_dashboard[80x24])
    assert shown.rstrip() == "█wts▓KV▒rt▚drv×fgn·free" and "…" not in shown
