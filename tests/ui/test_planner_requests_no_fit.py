"""A launch that does not fit runs no requests: the planner's max-requests hint names that state, never 'auto: 0'.

Session 62's operator pass: the demo's Llama-3-70B on SGLang with --mem-fraction-static 0.001 leaves no KV pool
(SGLang's max_running_requests follows its token pool, so its figure is 0), and the blank field read 'auto: 0' as if
the engine picked zero on purpose. The engine does not start there (the domain's `fits` is false).
"""

from __future__ import annotations

from textual.widgets import Input

from kvtop.domain.calibration.estimate import calibrated_ledger
from kvtop.domain.launch import parse_flags
from kvtop.ui.widgets.plan_result import NO_REQUESTS, requests_run, running_requests
from tests.ui.conftest import wait_for
from tests.ui.fakes import H100_TOTAL_BYTES, LLAMA_70B_REF, llama_model, llama_plan
from tests.ui.helpers import retype, shown


async def test_a_plan_that_does_not_fit_says_so_in_the_requests_hint(planner_on):  # type: ignore[no-untyped-def]
    async with planner_on(size=(160, 48)) as (_, pilot, screen):
        field = screen.query_one("#plan-max_running_requests", Input)
        assert field.placeholder.startswith("auto: ") and field.placeholder != "auto: 0"  # the live launch fits
        await retype(pilot, "#plan-memory_fraction", "0.001")
        await wait_for(pilot, lambda: screen.outcome.after is not None and not screen.outcome.after.engine.fits)
        assert field.placeholder == "auto: none"  # 'auto: — (does not fit)' was cut to the field's width
        assert len(field.placeholder) <= field.content_size.width  # seen whole
        row = next(line for line in shown(screen, "#plan-result").splitlines() if "max running reqs" in line)
        assert row.rstrip().endswith("→ — (does not fit)"), row  # the after column's row, not '0'
        await retype(pilot, "#plan-memory_fraction", "")
        await wait_for(pilot, lambda: screen.outcome.after is not None and screen.outcome.after.engine.fits)
        assert field.placeholder == f"auto: {screen.outcome.after.engine.max_running_requests}"


def test_the_table_row_and_the_hint_read_one_rule() -> None:
    """`requests_run`: the engine's figure where the launch fits, None where it does not (SGLang's 0 then is no choice)."""
    flags = ["--model-path", LLAMA_70B_REF, "--tp-size", "8", "--engine-version", "0.5.9", "--mem-fraction-static", "0.001"]
    settings = parse_flags("sglang", flags)  # the fake node's launch (`llama_settings`) with the planner trial's share
    starved = calibrated_ledger(llama_model(), settings, gpu_total_bytes=H100_TOTAL_BYTES, gpu_name="H100")
    assert not starved.engine.fits and starved.engine.max_running_requests == 0
    assert requests_run(starved) is None and running_requests(starved) == NO_REQUESTS
    fitting = llama_plan()
    assert fitting.engine.fits and requests_run(fitting) == fitting.engine.max_running_requests > 0
