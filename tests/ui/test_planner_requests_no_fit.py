"""A launch that does not fit runs no requests: the planner's max-requests hint names that state, never 'auto: 0'.

Session 62's operator pass: the demo's Llama-3-70B on SGLang with --mem-fraction-static 0.001 leaves no KV pool
(SGLang's max_running_requests follows its token pool, so its figure is 0), and the blank field read 'auto: 0' as if
the engine picked zero on purpose. The engine does not start there (the domain's `fits` is false).
"""

from __future__ import annotations

from textual.widgets import Input

from tests.ui.conftest import wait_for
from tests.ui.helpers import retype, shown


async def test_a_plan_that_does_not_fit_says_so_in_the_requests_hint(planner_on):  # type: ignore[no-untyped-def]
    async with planner_on(size=(160, 48)) as (_, pilot, screen):
        field = screen.query_one("#plan-max_running_requests", Input)
        assert field.placeholder.startswith("auto: ") and field.placeholder != "auto: 0"  # the live launch fits
        await retype(pilot, "#plan-memory_fraction", "0.001")
        await wait_for(pilot, lambda: screen.outcome.after is not None and not screen.outcome.after.engine.fits)
        assert field.placeholder == "auto: — (does not fit)"
        row = next(line for line in shown(screen, "#plan-result").splitlines() if "max running reqs" in line)
        assert row.rstrip().endswith("→ — (does not fit)"), row  # the after column's row, not '0'
        await retype(pilot, "#plan-memory_fraction", "")
        await wait_for(pilot, lambda: screen.outcome.after is not None and screen.outcome.after.engine.fits)
        assert field.placeholder == f"auto: {screen.outcome.after.engine.max_running_requests}"
