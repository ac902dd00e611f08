"""A rank ledger read through Prometheus shows the exporter's predicted figure, said as the exporter's.

The node's `kvtop export` publishes `kvtop_rank_token_capacity{source="predicted"}`; the node header showed it, yet
the rank ledger said `predicted —` and "no prediction: ledger not exported" (session 67's second reader). The figure
is the one the header reads (`EngineView.exported`): the exporter's page generated from tests/ui/fakes.py's
Llama-3-70B TP8 node, whose explained ledger predicts 1,127,125 tokens.
"""

from __future__ import annotations

from kvtop.domain.exported_prediction import EXPORTER
from kvtop.ui.ledger_rows import rank_ledger
from kvtop.ui.screens.ledger import summary_lines
from tests.sources.fake_prometheus import FakePrometheus, Target
from tests.sources.test_prometheus import kvtop_page
from tests.sources.test_prometheus_node import source
from tests.ui.fakes import llama_snapshot


def test_rank_ledger_through_prometheus_shows_the_exporters_prediction() -> None:
    original = llama_snapshot(co_tenant_gpu=3)
    fake = FakePrometheus([Target("kvtop", "10.0.0.1:9401", kvtop_page("node-a", co_tenant_gpu=3))])
    snapshot = source(fake, "node-a").collect()
    (engine,) = snapshot.engines
    view = rank_ledger(snapshot, 0)
    assert view is not None and engine.exported is not None
    text = summary_lines(view, snapshot).plain
    expected = original.engines[0].explained.token_capacity  # the exporter's source node's explained ledger
    assert expected == engine.exported.tokens == 1_127_125  # the header's figure
    assert f"predicted {expected:,} by {EXPORTER} · " in text
    assert "predicted —" not in text and "no prediction" not in text
    assert f"{EXPORTER} published the figure only: its ledger stays on the node" in text.splitlines()
