"""'auto' typed where the planner's placeholder offers it ('auto: 0.818') reads as the blank it names, the text kept
(session 64's operator walk: the memory fraction field refused it 'needs a number between 0 and 1, got 'auto'').

The fake node is SGLang 0.5.9, Llama-3-70B TP8 on an H100: its automatic fraction is 0.818 (tests/ui/fakes.py,
tests/ui/test_planner.py), and its plan at the blank fraction is `llama_70b_tokens(8)` (tests/calibrated_figures.py,
the committed fits)."""

from __future__ import annotations

import pytest
from textual.widgets import Input

from kvtop.ui.planning import apply_edits
from tests.calibrated_figures import llama_70b_tokens
from tests.ui.fakes import llama_settings
from tests.ui.helpers import retype


@pytest.mark.parametrize("key", ["memory_fraction", "page_size", "context_length", "max_running_requests"])
@pytest.mark.parametrize("typed", ["auto", " AUTO "])
def test_auto_reads_as_the_blank(key: str, typed: str) -> None:
    assert apply_edits(llama_settings(), {key: typed}) == apply_edits(llama_settings(), {key: ""})


async def test_auto_typed_plans_the_engine_s_pick_and_stays_typed(planner_on) -> None:
    async with planner_on() as (_, pilot, screen):
        field = screen.query_one("#plan-memory_fraction", Input)
        assert field.placeholder == "auto: 0.818"
        await retype(pilot, "#plan-memory_fraction", "0.5")
        await retype(pilot, "#plan-memory_fraction", "auto")
        assert screen.outcome.error is None and screen.outcome.after is not None
        assert screen.outcome.after.token_capacity == llama_70b_tokens(8)
        assert round(screen.outcome.after.engine.memory_fraction, 3) == 0.818
        assert field.value == "auto"  # the edit kept, not rewritten
