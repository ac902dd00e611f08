"""A budget step with neither bytes nor a value prints a dash (the views' absent figure), never Python's 'None'."""

from kvtop.commands.render_ledger import step_figure, step_lines
from kvtop.domain.engines.base import BudgetStep


def test_a_step_without_a_figure_prints_a_dash() -> None:
    step = BudgetStep(label="free at the worker's start")
    assert step_figure(step) == "—"
    (line,) = step_lines(step, "measured")
    assert "None" not in line
    assert line.rstrip().endswith("—  measured")


def test_a_step_with_a_figure_keeps_it() -> None:
    assert step_figure(BudgetStep(label="blocks (num_gpu_blocks)", value=22_847)) == "22,847"  # vLLM's log's count
    assert step_figure(BudgetStep(label="unused", bytes=0)) == "0 B"  # a zero is a figure, not an absent one
