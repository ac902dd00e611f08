"""A demo node's engine figure is the scenario's: every view says "simulated", never "live".

Operator trial (session 58, `kvtop --demo`, SGLang Llama-3-70B TP8): the header read '● simulated' but
'/ 1,229,052 live', the engine tree 'TP0 · GPU 0 · 1,229,052 tokens live', while the rank ledger (fixed on its own)
ended '→ 1,229,052 simulated'. The word is now decided once (`CapacitySource.of_reading`, kept on
`EngineView.capacity_source` and the waterfalls) and every view reads it. The demo's 1,229,052 on GPU 0 is its
scenario's figure (tests/test_one_truth.py: `LIVE_TOKENS`)."""

from __future__ import annotations

from kvtop.commands.node_source import DemoSource
from kvtop.domain.capacity import CapacitySource
from kvtop.ui.engine_tree import engine_tree
from kvtop.ui.keys import KEYS
from kvtop.ui.widgets.node_header import engine_line

DEMO_GPU0_TOKENS = 1_229_052  # the scenario's SGLang figure on GPU 0 (tests/test_one_truth.py)


def _labels(nodes):  # type: ignore[no-untyped-def]
    for node in nodes:
        yield node.label
        yield from _labels(node.children)


def test_a_demo_engines_figure_is_simulated_in_the_header_and_the_tree() -> None:
    node = DemoSource.open("llama70b-tp8-sglang").collect_at(0)
    assert node.simulated
    (view,) = node.engines
    assert view.capacity_source is CapacitySource.SIMULATED
    assert all(r.capacity is not None and r.capacity.actual_source is CapacitySource.SIMULATED for r in view.ranks)
    assert " simulated" in engine_line(view).plain and " live" not in engine_line(view).plain
    labels = list(_labels(engine_tree(node)))
    assert any(f"GPU 0 · {DEMO_GPU0_TOKENS:,} tokens simulated" in label for label in labels), labels
    assert not any("tokens live" in label for label in labels)


def test_the_log_wins_over_the_demo_and_a_driver_reading_is_live() -> None:
    """A startup log is a real file, on a demo node too (--demo --engine-log): its figure stays "logged"."""
    assert CapacitySource.of_reading(logged=True, simulated=True) is CapacitySource.LOGGED
    assert CapacitySource.of_reading(logged=False, simulated=True) is CapacitySource.SIMULATED
    assert CapacitySource.of_reading(logged=False, simulated=False) is CapacitySource.LIVE


def test_the_planners_reset_key_names_the_running_launch_not_live_settings() -> None:
    (reset,) = [k for k in KEYS if k.keys == "ctrl+r" and k.where == "planner"]
    assert "running launch" in reset.description and "live" not in reset.description
