"""The planner reads the edit's per-node flags (the engine's span rule, `per_node`) once per keystroke: the status
line, the flags line and `c` read it off the solved edit (`PlanOutcome.nodes`), not each from the rule again."""

from __future__ import annotations

import kvtop.domain.engines.sglang.span as sglang_span
from tests.ui.helpers import retype


async def test_one_keystroke_reads_the_node_flags_once(planner_on, monkeypatch):
    asked: list[int] = []
    rule = sglang_span.per_node

    def counted(settings, nodes):  # type: ignore[no-untyped-def]
        asked.append(nodes)
        return rule(settings, nodes)

    async with planner_on(size=(100, 40)) as (_, pilot, screen):
        await retype(pilot, "#plan-tp", "4")  # home, ctrl+k, 4: three edits, each re-solved
        monkeypatch.setattr(sglang_span, "per_node", counted)
        await pilot.press("backspace", "2")  # two keystrokes: '' (invalid, nothing to read) then TP 2
        await pilot.pause()
        assert screen.query_one("#plan-tp").value == "2"
        assert asked == [1]  # was [1, 1]: the flags line and its engine-flag list each asked it
