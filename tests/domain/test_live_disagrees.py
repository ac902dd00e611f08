"""`EngineView.live_disagrees`: the domain decides whether the engine's own token figure differs from kvtop's.

The node header once decided it in the view (session 67's second reader); it now only styles the domain's answer.
Figures: tests/ui/fakes.py's Llama-3-70B TP8 node — clean ledger 1,255,785 tokens, 1,127,125 with a 6 GiB co-tenant
(the explained ledger, the figure the engine reports there); read through Prometheus only the exporter's 1,127,125.
"""

from __future__ import annotations

from kvtop.domain.node import EngineView
from tests.sources.fake_prometheus import FakePrometheus, Target
from tests.sources.test_prometheus import kvtop_page
from tests.sources.test_prometheus_node import source
from tests.ui.fakes import llama_snapshot

CLEAN, EXPLAINED = 1_255_785, 1_127_125


def _with_live(view: EngineView, tokens: int) -> EngineView:
    live = view.engine.live.model_copy(update={"token_capacity": tokens})
    return view.model_copy(update={"engine": view.engine.model_copy(update={"live": live})})


def test_the_explained_ledger_is_what_live_is_held_to() -> None:
    (view,) = llama_snapshot(co_tenant_gpu=3).engines
    assert (view.ledger.token_capacity, view.explained.token_capacity) == (CLEAN, EXPLAINED)
    assert view.engine.live.token_capacity == EXPLAINED and not view.live_disagrees  # not the clean figure
    assert _with_live(view, CLEAN).live_disagrees


def test_the_exporters_figure_is_what_live_is_held_to_through_prometheus() -> None:
    fake = FakePrometheus([Target("kvtop", "10.0.0.1:9401", kvtop_page("node-a", co_tenant_gpu=3))])
    (view,) = source(fake, "node-a").collect().engines
    assert view.ledger is None and view.exported is not None and view.exported.tokens == EXPLAINED
    assert not view.live_disagrees
    assert _with_live(view, CLEAN).live_disagrees


def test_no_live_figure_is_no_disagreement() -> None:
    (view,) = llama_snapshot().engines
    live = view.engine.live.model_copy(update={"token_capacity": None})
    assert not view.model_copy(update={"engine": view.engine.model_copy(update={"live": live})}).live_disagrees
