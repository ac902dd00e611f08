"""The rank ledger shows no memory fraction for an engine that takes no share of memory (session 44, F2).

`kvtop --demo llamacpp-llama31-8b`, Enter on GPU 0, read "engine budget  max running requests 4 · memory
fraction 1.000" and, under it, "fraction from  llama.cpp sizes its KV cache by -c, not by a share of memory":
llama.cpp has no such setting (llama-server sizes its cache from -c and -np; EngineRules.memory_fraction_field is
None for it), the 1.000 is the ledger's placeholder. An engine that has one (SGLang's --mem-fraction-static on
the demo node llama70b-tp8-sglang) keeps its figure.
"""

from __future__ import annotations

from kvtop.commands.node_source import DemoSource
from kvtop.ui.screens.ledger import RankLedgerScreen
from tests.ui.conftest import wait_for, wait_for_snapshot
from tests.ui.fakes import FakeSource


async def _summary(make_app, scenario: str) -> str:
    node = DemoSource.open(scenario).collect_at(0)
    app = make_app(FakeSource(node, label=f"demo:{scenario}"))
    async with app.run_test(size=(100, 50)) as pilot:
        await wait_for_snapshot(pilot)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, RankLedgerScreen))
        await pilot.pause()
        return app.screen.query_one("#ledger-summary").render().plain


async def test_llama_cpp_shows_no_memory_fraction(make_app):
    summary = await _summary(make_app, "llamacpp-llama31-8b")
    assert "max running requests 4 · no memory fraction" in summary  # the demo's -np 4
    assert "memory fraction 1.000" not in summary
    assert "KV sized       llama.cpp sizes its KV cache by -c, not by a share of memory" in summary


async def test_an_engine_with_a_share_keeps_its_fraction(make_app):
    summary = await _summary(make_app, "llama70b-tp8-sglang")
    # SGLang 0.5.9's automatic share on the H100 (81,559 MiB): (81559 − 14848) ÷ 81559 = 0.8179…
    assert "memory fraction 0.818" in summary
    assert "fraction from  auto 0.5.9" in summary
