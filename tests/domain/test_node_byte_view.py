"""One byte view (issue 29): a rank's predicted bytes are the explained ledger's rank, the state the capacity
waterfall ends on, so the rows a person reads add up to the tokens the header says. Expected figures are SGLang's
arithmetic by hand (its pool is what is left after the weights: `rest = free before load − weights − reserve`),
on the Llama-3-70B TP8 H100 node of tests/ui/fakes.py."""

from __future__ import annotations

import pytest

from kvtop.commands.node_source import DemoSource
from kvtop.domain.node import REPORTED_WEIGHTS_ROW, build_snapshot
from tests.ui.fakes import ENGINE_ID, llama_ledger, llama_snapshot


def test_weights_the_engine_reports_above_the_book_are_a_row_of_the_predicted_worker() -> None:
    healthy, ledger = llama_snapshot(), llama_ledger()
    heavier = ledger.weights_bytes * 6 // 5  # the engine reports 20% more than kvtop's book (17,640,734,720 B)
    engine = healthy.observation.engines[0]
    live = engine.live.model_copy(update={"weight_bytes": heavier})
    node = healthy.observation.model_copy(update={"engines": (engine.model_copy(update={"live": live}),)})
    rank = build_snapshot(node, {ENGINE_ID: ledger}).engines[0].ranks[0]
    excess = heavier - ledger.weights_bytes
    assert excess == 3_528_146_944
    rows = {row.component: row.bytes for row in rank.predicted.weights.rows}
    assert rows[REPORTED_WEIGHTS_ROW] == excess and rank.predicted.weights_bytes == heavier
    # SGLang's pool gives up what the heavier weights take, to the token (40,960 B a token at TP8)
    assert 0 <= ledger.ranks[0].kv_pool_bytes - rank.predicted.kv_pool_bytes - excess < 40_960
    # the worker holds the same bytes (weights + pool are one budget), so nothing is unexplained; before, the
    # book's weights beside the smaller pool left 3.29 GiB − the 2 GiB unclaimed reserve = 1.29 GiB "unexplained"
    assert rank.unexplained_bytes == 0


def test_nothing_measured_leaves_the_clean_rank() -> None:
    """A healthy node: the explained ledger is the clean one, so the predicted row is the clean row."""
    rank = llama_snapshot().engines[0].ranks[0]
    clean = llama_ledger().ranks[0]
    assert rank.predicted.kv_pool_bytes == clean.kv_pool_bytes == 51_436_994_560
    assert rank.predicted.weights == clean.weights and rank.predicted.context_bytes == clean.context_bytes


@pytest.mark.parametrize(
    "scenario",
    ["llama70b-tp8-foreign-gpu3", "llama70b-tp4-lmdeploy", "modern-deployment", "dsv3-tp16-sglang-node1",
     "llamacpp-llama31-8b"],
)  # fmt: skip
def test_the_byte_views_tokens_are_the_waterfalls(scenario: str) -> None:
    """Every rank's predicted row holds the tokens its waterfall explains (clean + every named term): the
    byte view and the token view are one answer, on nodes with a co-tenant (SGLang, LMDeploy), one held
    elsewhere (a second node), deployment features (modern-deployment) and llama.cpp."""
    for view in DemoSource.open(scenario).collect().engines:
        for rank in view.ranks:
            assert rank.capacity is not None and rank.predicted is not None
            assert rank.predicted.token_capacity == rank.capacity.explained_tokens == view.explained.token_capacity
