"""An interval end never shows a negative memory term (the trial: vLLM gpt-oss-120b, H100, TP 8, whose high end
read −0.35 GiB of non-KV memory: the activation peak's 1.04 GiB moved by its share of a 3.52 GiB error).

The ends share the combined error among the terms in proportion to their errors (terms.py `figures`); a term that
would go below 0 stops at 0 and the rest of the move is shared among the others, none beyond its own error.
"""

from __future__ import annotations

import math

from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.calibration.terms import RUNTIME_TERMS, PreloadEstimate, Term, TermEstimate
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS


def _term(term: Term, gib: float, error_gib: float, more_is_more_kv: bool = False) -> TermEstimate:
    return TermEstimate(term=term, label=term.value, bytes=round(gib * GIB), error_bytes=round(error_gib * GIB),
                        source="calibrated", basis="test", more_is_more_kv=more_is_more_kv)  # fmt: skip


def test_a_term_whose_share_would_go_below_zero_stops_there_and_the_rest_is_shared() -> None:
    # CUDA total 79 ± 0.2, activation 1 ± 3, non-torch 2 ± 1 GiB: √(0.04 + 9 + 1) = 3.1686 GiB, shared over the
    # errors' sum 4.2 GiB (0.7544 each GiB of error). High end: the activation's 3 × 0.7544 = 2.263 GiB would take
    # it to −1.263; it stops at 0 (a 1 GiB move), the rest 2.1686 GiB over the others' 1.2 GiB of error is 1.807
    # each: beyond their own, so each moves its own error (0.2 up, 1 down); 3.1686 − 2.2 = 0.97 GiB is not carried.
    estimate = PreloadEstimate(engine="vllm", terms=(
        _term(Term.CUDA_TOTAL, 79, 0.2, more_is_more_kv=True), _term(Term.ACTIVATION, 1, 3), _term(Term.NON_TORCH, 2, 1)
    ))  # fmt: skip
    combined = math.sqrt(0.2**2 + 3**2 + 1**2)
    assert estimate.combined_error_bytes == round(combined * GIB)
    high = estimate.figures("high")
    assert high.cuda_total_bytes == round(79.2 * GIB) and high.non_kv_bytes == 1 * GIB  # activation 0, non-torch 1
    low = estimate.figures("low")  # nothing floors towards less KV: each moves its plain share
    share = combined / 4.2
    assert abs(low.cuda_total_bytes - (79 - 0.2 * share) * GIB) <= 1
    assert abs(low.non_kv_bytes - (1 + 3 * share + 2 + 1 * share) * GIB) <= 2


def test_the_trials_gpt_oss_120b_plan_holds_no_negative_term_at_either_end() -> None:
    model = load_model(str(CONFIGS / "openai--gpt-oss-120b.json"))
    plan = planned_capacity(model, LaunchSettings(engine="vllm", model="openai/gpt-oss-120b", tp=8),
                            gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100")  # fmt: skip
    graphs = plan.estimate.term(Term.CUDA_GRAPHS)  # the trial's activation (3.52 GiB of error over 1.04) keeps
    # FlashInfer's 3.5 logits copies since session 64 (2.94 ± 1.38 GiB); the CUDA graphs' estimate is the term whose
    # error passes its bytes now
    assert graphs is not None and graphs.error_bytes > graphs.bytes
    for side in ("low", "high"):
        figures = plan.estimate.figures(side)
        assert figures.non_kv_bytes is not None and figures.non_kv_bytes >= 0, side
    runtime = [t for t in plan.estimate.terms if t.term in RUNTIME_TERMS]
    assert plan.estimate.figures("high").non_kv_bytes <= sum(t.bytes for t in runtime)  # the high end takes less
    assert plan.token_capacity_min <= plan.ledger.token_capacity <= plan.token_capacity_max
