"""A node's calibration store under PP: vLLM's `Model loading took X GiB` is stage 0's (engines/vllm/load_line.py), so
the store line of such a start says so (`NodeMeasure.weights_stage`), and a later plan of the same launch gives stage 0
that figure and each other stage that figure plus its book beyond stage 0's (`stage_weights.beyond_stage_book`), as a
plan given the log's figure does (test_pp_logged_weights.py).

The engine's figures (tests/data/calibration/vllm.jsonl, kubesimplify-qwen3-235b-a22b-2507-fp8-4xrtxpro6000-pp4-v0271):
"Model loading took 55.70 GiB" (rank 0 alone); stages of 23, 24, 24, 23 layers, one layer 2,488,894,976 B by the
checkpoint's shapes (the sum in test_pp_logged_weights.py's docstring): the middle stages 55.70 GiB + 2,488,894,976 B.
"""

from __future__ import annotations

from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.calibration.node import NodeMeasure, measure_of_start
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import Ledger
from kvtop.domain.wording import MIB
from tests.engines.vllm.test_pp_logged_weights import (
    FLAGS,
    LOGGED,
    ONE_LAYER,
    QWEN3_235B_FP8,
    UNREAD_SHARE,
    _plan,
)

SETTINGS = parse_flags("vllm", FLAGS)


def _stored() -> NodeMeasure:
    """The store line of the start whose log printed stage 0's 55.70 GiB (its ledger rebuilt with that figure)."""
    ledger = _plan().ledger
    measure = measure_of_start(ledger, date="2026-11-30", free_before_load_bytes=None, weights_bytes=LOGGED,
                               runtime_measured=False, weights_stage=ledger.measured.weights_stage)  # fmt: skip
    assert measure is not None
    return measure


def _stage_weights(ledger: Ledger) -> list[int]:
    return [max(r.weights_bytes for r in ledger.ranks if r.pp_rank == pp) for pp in range(4)]


def _planned_from(measure: NodeMeasure) -> Ledger:
    return planned_capacity(QWEN3_235B_FP8, SETTINGS, gpu_total_bytes=97887 * MIB, gpu_name="RTXPRO6000",
                            measured=MeasuredInputs(), node_measures=(measure,)).ledger  # fmt: skip


def test_the_store_line_says_the_weights_are_stage_zeros() -> None:
    measure = _stored()
    assert measure.weights_stage == 0 and measure.terms[Term.WEIGHTS] == LOGGED


def test_a_plan_from_the_store_gives_stage_zero_the_load_and_the_middle_stages_one_layer_more() -> None:
    weights = _stage_weights(_planned_from(_stored()))
    assert weights[0] == weights[3] == LOGGED  # stages 0 and 3 hold the same 23 layers, embedding and head
    # kvtop's layer holds the 2 KV scales (8 B) the docstring's sum leaves out
    assert all(abs(w - (LOGGED + ONE_LAYER)) < 1024 for w in weights[1:3])


def test_the_store_plan_is_the_logged_plan() -> None:
    """The same capacity as a plan given the log's figure itself (one rule): 555,680 tokens logged, over it by what
    is not read beside the binding stage's weights (test_pp_logged_weights.UNREAD_SHARE)."""
    stored, logged = _planned_from(_stored()).engine.token_capacity, _plan().ledger.engine.token_capacity
    assert stored == logged and 0 < stored / 555_680 - 1 < UNREAD_SHARE


def test_a_line_without_a_stage_is_every_stages_figure_as_before() -> None:
    """A line kept before the stage was stored (or of another engine): its weights are the largest stage's."""
    old = _stored().model_copy(update={"weights_stage": None})
    weights = _stage_weights(_planned_from(old))
    assert max(weights) == LOGGED and abs(weights[0] - (LOGGED - ONE_LAYER)) < 1024

