"""The PyTorch backend's assumed terms by their mechanism (docs/engines/trtllm.md §19; session 50, #27).

* Its context before the model: issue 5872's start (Qwen3-235B-A22B-FP8 at TP 8 on H200s, TensorRT-LLM 1.0.0rc1,
  tests/data/cases/trtllm/trtllm-5872-qwen3-235b-kv-not-created) printed `Total GPU memory (GiB): 140.06` and
  `Model: 139.55 / 110.70` (py_executor_creator.py's free memory before and after each component): 0.51 GiB taken
  before the model, at TP 8, where the engines' assumption (0.75 GiB + 0.75 per doubling) said 3.00. The NCCL of
  its TP group comes up with the model: its 0.75 GiB per doubling is charged to the profiled non-torch growth, and
  the budget's sum is the same.
* Its activation peak: the profiling run is a context batch of max_num_tokens (§3); issue 6294's trtllm-bench start
  (Llama-3.1-8B FP8, `--max_num_tokens 23552`) profiles 15,360 tokens over the default 8,192, whose MLP transient is
  15,360 × (3 × 14,336 + 4,096) × 2 B (Llama-3.1-8B's config: intermediate 14,336, hidden 4,096).
"""

from __future__ import annotations

from benchmarks.calibration.corpus import load
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.trtllm.calibration import terms

GIB = 1 << 30
RECORDS = {record.id: record for record in load("trtllm")}
TP8 = "case-trtllm-5872-qwen3-235b-fp8-h200-tp8"
BENCH = "trtllm-issue6294-llama-3.1-8b-fp8-h100-bench"


def _by_term(record_id: str) -> dict[Term, tuple[int, int]]:
    found = terms(RECORDS[record_id].inputs())
    return {estimate.term: (estimate.bytes, estimate.error_bytes) for estimate in found}


def test_the_context_before_the_model_holds_no_nccl_and_holds_issue_5872() -> None:
    taken = round((140.06 - 139.55) * GIB)  # the log's total less its free memory before 'Model'
    (context, error), (non_torch, _) = _by_term(TP8)[Term.CONTEXT], _by_term(TP8)[Term.NON_TORCH]
    assert context == round(0.75 * GIB)
    assert context - error <= taken <= context + error
    # the budget's sum as before: 0.75 + 0.75 × log2(8) of context and 0.5 of growth
    assert context + non_torch == round((0.75 + 0.75 * 3 + 0.5) * GIB)


def test_the_activation_grows_with_the_profiled_tokens() -> None:
    activation, error = _by_term(BENCH)[Term.ACTIVATION]
    mlp = (23_552 - 8_192) * (3 * 14_336 + 4_096) * 2
    assert abs(activation - (2 * GIB + mlp)) <= 1  # GiB rounding of the transient
    assert error == activation


def test_at_the_default_tokens_the_activation_stays_2_gib() -> None:
    reranker = "file66094399229-trtllm-qwen3-reranker-0.6b-h100"  # TensorRT-LLM 1.2.1, no --max_num_tokens
    assert _by_term(reranker)[Term.ACTIVATION] == (2 * GIB, 2 * GIB)
    assert _by_term(reranker)[Term.NON_TORCH] == (GIB // 2, GIB // 2)
