"""The weights term of a plan's interval counts what the load holds beside the book once (session 50, g; stop 49's
"noticed, not checked": gpt-oss TP 8 may count 0.52 GiB twice).

vLLM on an H100 keeps gpt-oss-120b's MXFP4 checkpoint scales beside the Triton backend's swizzled, padded copy
(`engines/vllm/mxfp4_weights.py`): 0.52 GiB a rank at TP 8 beside kvtop's weights book. Checked: the central ledger
holds the book plus that figure once (the 'calibrated_beyond_book' row is the same bytes, not more), and the
interval's ends move the KV budget by the terms' combined error and no more, so the 0.52 GiB is neither in the
error twice nor charged twice at an end (since session 52 the high end stops short of the combined error, at the
terms' floors, and is checked term by term).
"""

from __future__ import annotations

from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.calibration.terms import Term
from kvtop.domain.calibration.weights import WEIGHTS_RELATIVE_ERROR
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import LaunchSettings
from kvtop.sources.hub import load_model


def test_gpt_oss_tp8_weights_beside_the_book_count_once() -> None:
    model = load_model("gpt-oss-120b")
    settings = LaunchSettings(engine="vllm", model="gpt-oss-120b", tp=8, engine_version="0.33.0")
    plan = planned_capacity(model, settings, gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100")
    estimate = plan.estimate
    beside = estimate.weights_beside_book_bytes
    # 0.52 GiB until session 66 (stop 49's figure, the checkpoint's scales counted twice); 0.33.0 deletes them
    # (fused_moe/oracle/mxfp4.py:1469-1472): the rope cache 131,072 × 64 × 4 B, the swizzled w2 scales' rows 2,880 → 3,072
    # (128 × 192 × 12 B a layer), float32 biases 128 × (768 + 2,880) × 4 less the built 128 × 2 × (720 + 2,880) and the
    # padded bias rows 128 × 2 × 24 × 2; 36 layers, each tensor under 10 MiB (no allocator rounding)
    assert beside == 131_072 * 64 * 4 + 36 * (128 * 192 * 12 + 128 * 3648 * 4 - 128 * 2 * 3600 - 128 * 2 * 24 * 2)
    rank = plan.ledger.ranks[0]
    rows = {row.component: row.bytes for row in rank.weights.rows}
    book = sum(size for name, size in rows.items() if name != "calibrated_beyond_book")
    assert rows["calibrated_beyond_book"] == beside and rank.weights_bytes == book + beside  # once in the centre
    weights = estimate.term(Term.WEIGHTS)
    assert weights is not None and weights.bytes == rank.weights_bytes  # the term is the book and it, once
    assert estimate.figures("central").weights_extra_bytes == beside
    # its error is the corpus's relative error of the whole term, with no MXFP4 backend error beside it (Triton is
    # the release's backend on Hopper: nothing assumed) and not the beside figure again
    assert weights.error_bytes == round(weights.bytes * WEIGHTS_RELATIVE_ERROR) and weights.beside_error_bytes == 0
    # each end moves the budget by at most the combined error: vLLM's budget takes the fraction (0.92) of the CUDA
    # total's move, so a little less, never more (a term counted twice would move it further)
    combined = estimate.combined_error_bytes
    central = plan.ledger.engine.kv_budget_bytes
    assert 0.99 * combined <= central - plan.kv_budget_min_bytes <= combined
    # Session 52 to 63 (CUDA graphs charged from v0.20.0: 1.95 ± 3.21 GiB beside a 1.04 ± 3.19 GiB activation) the high
    # end could not reach the combined error: both stopped at 0. Since session 64 the activation keeps FlashInfer's 3.5
    # logits copies (flashinfer_copies.py: 2.94 ± 1.38 GiB), so only the graphs stop at 0 and the rest of the move is
    # shared among the others, none beyond its own error (terms.py `_end_moves`): the high end reaches the combined
    # error as the low end does, by the CUDA total's 0.92 a little less
    activation, graphs = (estimate.term(term) for term in (Term.ACTIVATION, Term.CUDA_GRAPHS))
    assert activation is not None and graphs is not None
    assert activation.error_bytes < activation.bytes and graphs.error_bytes > graphs.bytes  # only the graphs stop at 0
    assert 0.99 * combined <= plan.kv_budget_max_bytes - central <= combined
