"""`g`: the node as a tree, engines → processes → ranks (nvitop's tree view), from the domain's figures."""

from __future__ import annotations

from kvtop.commands.node_source import DemoSource
from kvtop.sources.scenario import load_scenario
from kvtop.ui.engine_tree import engine_tree
from kvtop.ui.screens.engines import EngineTreeScreen
from kvtop.ui.screens.ledger import RankLedgerScreen
from tests.ui.conftest import wait_for, wait_for_snapshot


def test_turbomind_s_one_process_holds_four_ranks_and_the_co_tenant_is_no_engines():
    """The LMDeploy demo: TurboMind drives GPUs 0–3 from pid 23000; the notebook on GPU 1 belongs to no
    engine; GPUs 6 and 7 hold nothing. Tokens are each rank's waterfall (964,160 of a clean 1,055,680)."""
    snapshot = DemoSource(load_scenario("llama70b-tp4-lmdeploy")).collect_at(0)
    turbomind, pytorch, others, idle = engine_tree(snapshot)
    (server,) = turbomind.children
    assert server.label.startswith("pid 23000 worker · lmdeploy (root) · GPUs 0, 1, 2, 3 · ")
    rank = snapshot.rank_on_gpu(1).capacity
    assert [r.label for r in server.children] == [
        f"TP{i} · GPU {i} · {rank.actual_tokens:,} tokens predicted (clean {rank.clean_tokens:,})" for i in range(4)
    ]
    assert [len(p.children) for p in pytorch.children] == [1, 1]  # server rank 0, a spawned worker rank 1
    assert others.label == "no engine" and others.children[0].label.startswith("pid 4711 co-tenant")
    assert idle.label == "idle: GPU 6, 7 (no process)"


async def test_g_opens_the_tree_and_enter_on_a_rank_opens_its_ledger(make_app, co_tenant_snapshot):
    app = make_app(co_tenant_snapshot)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for_snapshot(pilot)
        await pilot.press("g")
        await wait_for(pilot, lambda: isinstance(app.screen, EngineTreeScreen))
        await pilot.press("down", "down", "enter")  # engine → its first worker → that worker's rank
        await wait_for(pilot, lambda: isinstance(app.screen, RankLedgerScreen))
        assert app.screen.gpu_index == 0
