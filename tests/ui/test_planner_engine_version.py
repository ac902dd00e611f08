"""The planner's engine version: what an upgrade of the engine does to the same launch (an operator's what-if
beside TP, KV dtype, memory fraction, context and max requests), solved by that release's rules, the column's
release said in the table; a release kvtop cannot parse is the field's own error, as `plan --engine-version` says.

The fake node is SGLang 0.5.9 (tests/ui/fakes.py). SGLang's automatic fraction on an H100 (81,559 MiB, class
(90 GiB, chunked 8,192, graph bs 512 at TP ≥ 4): kvtop/domain/engines/sglang/eras.py `_s7_activation_reserve`,
docs/engines/sglang.md §5) reserves 512 + 1.5 × 8,192 + 8 × 1 ÷ 8 × 1,024 + 2 × 512 = 14,848 MiB at 0.5.9:
(81,559 − 14,848) ÷ 81,559 = 0.818. From v0.5.10rc0 (#16331) SGLang also captures piecewise prefill CUDA graphs
and reserves 8 MiB for each size up to the chunk: 8 + 14 + 8 + 8 + 12 sizes to 4,096 and 8 more (4,608 … 8,192 by
512) = 58, so 464 MiB, 15,312 MiB in all at 0.5.23: (81,559 − 15,312) ÷ 81,559 = 0.81225, 0.812 to SGLang's three
places. Tokens then follow SGLang's budget by hand (tests/calibrated_figures.py)."""

from __future__ import annotations

from textual.widgets import Input

from tests.calibrated_figures import llama_70b_tokens
from tests.ui.helpers import retype, shown

TP8_TOKENS = llama_70b_tokens(8)  # the fake node's SGLang TP8 plan (tests/calibrated_figures.py)

FRACTION_0_5_23 = round((81_559 - (14_848 + 58 * 8)) / 81_559, 3)


async def test_an_upgrade_is_solved_by_its_release_rules_and_said_in_the_table(planner_on):
    async with planner_on(size=(160, 50)) as (_, pilot, screen):
        assert screen.query_one("#plan-engine_version", Input).value == "0.5.9"  # the live launch's release
        await retype(pilot, "#plan-engine_version", "0.5.23")
        outcome = screen.outcome
        assert outcome is not None and outcome.after is not None and outcome.before is not None
        assert FRACTION_0_5_23 == 0.812
        assert screen.query_one("#plan-memory_fraction", Input).placeholder == "auto: 0.812"
        expected = llama_70b_tokens(8, fraction=FRACTION_0_5_23)
        assert outcome.before.token_capacity == TP8_TOKENS
        assert outcome.after.token_capacity == expected < TP8_TOKENS
        result = shown(screen, "#plan-result")
        assert f"{TP8_TOKENS:,} → {expected:>12,}\n" in result
        assert f"{'−' + format(TP8_TOKENS - expected, ','):>12}" in result
        assert "engine rules            0.5.9 →       0.5.23" in result
        assert shown(screen, "#plan-flags") == "engine flags: --tp-size 8"  # a release is no engine flag


async def test_a_version_that_is_no_release_names_the_field_and_blank_is_the_latest(planner_on):
    async with planner_on(size=(120, 40)) as (_, pilot, screen):
        await retype(pilot, "#plan-engine_version", "banana")
        said = shown(screen, "#plan-error")
        assert said == "✗ engine version: not a release: 'banana' (write e.g. 0.5.9, v0.10.2, 0.4.3.post2 or latest)"
        assert screen.query_one("#plan-engine_version", Input).has_class("-invalid")
        await retype(pilot, "#plan-engine_version", "")
        assert screen.query_one("#plan-engine_version", Input).placeholder == "latest release"
        assert "engine rules            0.5.9 →       latest" in shown(screen, "#plan-result")


async def test_a_release_beyond_those_kvtop_models_says_whose_rules_solve_it(planner_on):
    """An operator trial (session 50): 9.9.9 read as '9.9.9' in the table and nothing more, where `plan
    --engine-version 9.9.9` says the newest release's rules apply; the pane now says it under the table (SGLang's
    newest release in kvtop's calendar is 0.5.23, as the 0.5.23 test above solves)."""
    async with planner_on(size=(160, 50)) as (_, pilot, screen):
        assert "engine rules:" not in shown(screen, "#plan-result")  # the live release, unedited: nothing to say
        await retype(pilot, "#plan-engine_version", "9.9.9")
        result = shown(screen, "#plan-result")
        assert "engine rules            0.5.9 →        9.9.9" in result
        assert ("engine rules: --engine-version 9.9.9 (newer than 0.5.23, the newest release kvtop models: its rules "
                "apply)") in result
