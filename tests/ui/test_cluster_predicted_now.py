"""The cluster list's "tokens per rank now / clean" cell says when "now" is kvtop's prediction (session 44, F2).

`kvtop --demo-cluster` at 200 columns showed h20-b (the second node of SGLang DeepSeek-V3 TP16, scenario
dsv3-tp16-sglang-node1) as "471,607 / 546,967 (-13.8%) sglang:61500" beside h20-a's live "485,265 / 546,967
(-11.3%)": 471,607 is kvtop's prediction (clean less a co-tenant's 75,360 tokens on GPU 3), the node reports no
live figure (the engine's API is on h20-a), yet it read as what the engine holds now.
"""

from __future__ import annotations

from kvtop.domain.cluster import ClusterEngine, ClusterNode, ClusterTarget, ClusterView, TargetHealth
from kvtop.ui.widgets.cluster_table import COLUMNS
from tests.sources.fake_prometheus import NOW
from tests.ui.conftest import wait_for
from tests.ui.helpers import URL, FakeReader, make_cluster_app, rows


def _node(name: str, engine: str, **figures: int) -> ClusterNode:
    return ClusterNode(
        name=name,
        targets=(ClusterTarget(job="kvtop", instance=f"{name}:9401", health=TargetHealth.UP, age_seconds=1.0),),
        engines=(ClusterEngine(instance=f"{name}:9401", engine=engine, source="kvtop", **figures),),
    )


async def test_a_node_without_a_live_figure_shows_its_prediction_as_one() -> None:
    # the demo's figures (kvtop cluster --demo-cluster --json): clean 546,967 on both nodes; h20-a live 485,265,
    # h20-b predicted 471,607 and no live figure. 75,360 ÷ 546,967 = 13.8 %, 61,702 ÷ 546,967 = 11.3 %
    view = ClusterView(prometheus_url=URL, taken_at=NOW, nodes=(
        _node("h20-a", "sglang:61000", clean_token_capacity=546_967, predicted_token_capacity=546_967,
              live_token_capacity=485_265),
        _node("h20-b", "sglang:61500", clean_token_capacity=546_967, predicted_token_capacity=471_607),
    ))  # fmt: skip
    app = make_cluster_app(FakeReader(view))
    async with app.run_test(size=(200, 40)) as pilot:
        await wait_for(pilot, lambda: app.cluster.view is not None)
        await pilot.pause()
        shown = rows(app)
        tokens = COLUMNS.index("tokens per rank now / clean")
        assert shown["h20-b"][tokens] == "471,607 predicted / 546,967 (−13.8%)"
        assert shown["h20-a"][tokens] == "485,265 / 546,967 (−11.3%)"
        engine = COLUMNS.index("engine")  # the engine the tokens are of, in its own column (session 46, G3)
        assert (shown["h20-b"][engine], shown["h20-a"][engine]) == ("sglang:61500", "sglang:61000")
