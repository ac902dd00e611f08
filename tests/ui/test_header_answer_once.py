"""The header's ▶ answer is worked out once per snapshot and findings: its tooltip and every draw read that one.

Before, the tooltip's check, the repaint check and each `render()` each called `incident()` anew on the same inputs.
"""

from __future__ import annotations

import pytest

from kvtop.commands.node_source import DemoSource
from kvtop.domain.cluster_findings import ExportedCounts
from kvtop.domain.diagnose_findings import Finding
from kvtop.domain.incident import IncidentAnswer, incident
from kvtop.domain.node import NodeSnapshot
from kvtop.ui.widgets import node_header
from kvtop.ui.widgets.node_header import ANSWER_MEANS, NodeHeader
from tests.ui.conftest import wait_for_snapshot
from tests.ui.fakes import FakeSource


async def test_the_answer_is_computed_once_for_each_snapshot_and_findings(  # type: ignore[no-untyped-def]
    make_app, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[tuple[int, int]] = []

    def counted(
        snapshot: NodeSnapshot, findings: tuple[Finding, ...], exported: ExportedCounts | None = None
    ) -> IncidentAnswer:
        asked.append((id(snapshot), id(findings)))
        return incident(snapshot, findings, exported)

    monkeypatch.setattr(node_header, "incident", counted)
    node = DemoSource.open("llama70b-tp8-foreign-gpu3").collect_at(0)
    app = make_app(FakeSource(node, label="demo:llama70b-tp8-foreign-gpu3"))
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for_snapshot(pilot)
        await pilot.pause()
        header = app.screen.query_one("#header", NodeHeader)
        first = header.header_content().plain
        assert header.header_content().plain == first  # drawn again: the same answer, not asked again
        assert "to pid 4242" in first.splitlines()[1] and header.tooltip == ANSWER_MEANS  # a fault: both read it
    assert asked and len(asked) == len(set(asked))  # every (snapshot, findings) asked once
