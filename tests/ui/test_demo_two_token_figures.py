"""The foreign-GPU demo's two token figures answer two questions, and each says which (session 62's operator pass).

The ▶ answer reads 'loses 128,660 tokens to pid 4242': one cause's cost, the co-tenant finding's tokens (the cause
priced alone on the clean plan; the explained plan with every cause, 1,093,370, may differ from it by a token of rounding).
Every GPU row reads '−122k tok': the rank's simulated capacity against its clean prediction, every cause and
kvtop's own miss together (1,100,391 − 1,222,073 = −121,682 at session 67's fits; the clean figure is SGLang's
arithmetic on the committed fits, tests/calibrated_figures.py). Both stay as they were; each carries a hover text
naming its question.
"""

from __future__ import annotations

from kvtop.commands.node_source import DemoSource
from kvtop.domain.diagnose import diagnose
from kvtop.domain.diagnose_findings import Rule
from kvtop.ui.widgets.gpu_list import GpuList
from kvtop.ui.widgets.node_header import ANSWER_MEANS, NodeHeader
from kvtop.ui.widgets.row_parts import STATE_CELL_MEANS
from tests.calibrated_figures import demo_llama_70b_tokens
from tests.ui.conftest import wait_for_snapshot
from tests.ui.fakes import FakeSource


async def test_the_banner_and_the_rows_each_say_which_question_their_tokens_answer(make_app) -> None:  # type: ignore[no-untyped-def]
    node = DemoSource.open("llama70b-tp8-foreign-gpu3").collect_at(0)
    (view,) = node.engines
    assert view.ledger is not None and view.explained is not None
    clean, simulated = view.ledger.token_capacity, view.engine.live.token_capacity
    assert (clean, simulated) == (demo_llama_70b_tokens(8), 1_100_391) and simulated is not None
    (co_tenant,) = [f for f in diagnose(node) if f.rule is Rule.CO_TENANT]  # the one cause's cost, computed once
    assert co_tenant.tokens is not None and abs(co_tenant.tokens - (clean - view.explained.token_capacity)) <= 1
    app = make_app(FakeSource(node, label="demo:llama70b-tp8-foreign-gpu3"))
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for_snapshot(pilot)
        await pilot.pause()
        header = app.screen.query_one("#header", NodeHeader)
        answer = header.header_content().plain.splitlines()[1]
        assert f"loses {co_tenant.tokens:,} tokens to pid 4242" in answer  # the finding's figure, not one of its own
        assert header.tooltip == ANSWER_MEANS and "alone" in ANSWER_MEANS and "every cause" in ANSWER_MEANS
        rows = app.screen.query_one(GpuList)
        shown = round((simulated - clean) / 1000)  # −122
        assert f"−{-shown}k" in app.export_screenshot()  # the rows' figure unchanged
        assert rows.tooltip == STATE_CELL_MEANS and "clean prediction" in STATE_CELL_MEANS


def test_the_hover_texts_name_no_demo_figure() -> None:
    """Both hover texts show on every node, so they name the rows' figure generically, never the demo's '−122k'."""
    for means in (ANSWER_MEANS, STATE_CELL_MEANS):
        assert "'−Nk tok'" in means and "122k" not in means and "128,660" not in means
