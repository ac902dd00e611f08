"""A budget step carries its figure, bytes or a value: one of neither is refused where it is built (`BudgetStep`), so
no view prints a step without one (it printed a dash, session 64; every budget passes one of the two)."""

import pytest
from pydantic import ValidationError

from kvtop.commands.render_ledger import step_figure
from kvtop.domain.engines.budget_step import BudgetStep


def test_a_step_without_a_figure_is_refused_where_it_is_built() -> None:
    with pytest.raises(ValidationError, match="has no figure"):
        BudgetStep(label="free at the worker's start")


def test_a_step_with_a_figure_keeps_it() -> None:
    assert step_figure(BudgetStep(label="blocks (num_gpu_blocks)", value=22_847)) == "22,847"  # vLLM's log's count
    assert step_figure(BudgetStep(label="unused", bytes=0)) == "0 B"  # a zero is a figure, not an absent one
