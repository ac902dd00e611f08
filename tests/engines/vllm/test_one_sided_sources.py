"""Three of vLLM's widenings that only raise their term (review R1, session 71): the error above the figure takes
them, the side below keeps the fit's, so the capacity's low end moves and its high end does not; and two that only
lower it (session 72): the error below the figure takes them, so the capacity's high end moves and its low end not.

- V1's unsaid cold compile (compile_benchmark.py): the peak is the larger of the embedding table's copy and the count,
  so a cold start only lifts it;
- V2's figure said warm (v2_graphs.py `said_warm`): a cold start, or a changed cache key, pays it, a warm one nothing;
- FlashInfer's sampler (calibration_activation.py): the native copies are taken off the centre; a fallback to the
  native path only raises the peak;
- the sampler path unknown (the install decides, v0.8.0-v0.11.0): the centre keeps the native copies, FlashInfer's
  path only holds fewer (below the figure only);
- V2's compile state unsaid: charged cold at the centre, a warm start compiles nothing (below the figure only).

Expected values from independent sources: the committed fits' held-out errors (calibration.py's block, written by
run.py from the corpus: `vllm.activation.v17` 1,889,920,950 B, `vllm.activation.v1` 21,125,963 B, `vllm.cuda_graphs`
read from the committed block, its held-out error 1,038,489,157 B at the refit 5f9ab079) and Qwen2.5-14B's embedding table from its config (152,064 × 5,120 × 2 B).
"""

from __future__ import annotations

import pytest

import kvtop.domain.engines.vllm.compile_benchmark as compile_benchmark
from benchmarks.calibration.corpus import Record, by_id
from kvtop.domain.calibration.estimate import CapacityPlan, planned_capacity
from kvtop.domain.calibration.terms import Term, TermEstimate
from kvtop.domain.engines.vllm.calibration import FITS, terms
from kvtop.domain.gpus import gpu_key

RECORDS = by_id()
QWEN25_14B_H100 = "file61926285156-qwen2.5-14b-h100-v0210"  # V1 at v0.21.0, the compile state unsaid
QWEN25_14B_TABLE = 152_064 * 5_120 * 2  # 1,557,135,360 B: the cold compile's copy of it
ACTIVATION_V17_ERROR = 1_889_920_950
COLD_7B = "wrbooth-vsb-qwen2.5-7b-rtx5090-v0290-cold"  # V2 at v0.29.0: said warm below
GRAPH_FIT_ERROR = FITS["vllm.cuda_graphs"].error_bytes  # the committed fit's held-out error (1,038,489,157 B at 5f9ab079)
DENNISLEE = "dennislee-qwen2-7b-a100-80gb-u025"  # v0.10-era A100: FlashInfer's sampler, the copies taken off
ACTIVATION_V1_ERROR = 21_125_963


def _term(record_id: str, which: Term, **update: object) -> TermEstimate:
    inputs = RECORDS[record_id].inputs().model_copy(update=update)
    return next(term for term in terms(inputs) if term.term is which)


def _plan(record: Record) -> CapacityPlan:
    assert record.model is not None and record.gpu_total_bytes is not None
    return planned_capacity(record.model, record.settings, gpu_total_bytes=record.gpu_total_bytes,
                            gpu_name=gpu_key(record.gpu))  # fmt: skip


def test_v1s_unsaid_cold_compile_only_raises_the_peak(monkeypatch: pytest.MonkeyPatch) -> None:
    activation = _term(QWEN25_14B_H100, Term.ACTIVATION)
    # the centre is the count; a cold start would lift it to the table's copy: that lift, above the figure only
    assert activation.bytes < QWEN25_14B_TABLE
    assert activation.raise_only_bytes == QWEN25_14B_TABLE - activation.bytes
    assert activation.error_below_bytes == ACTIVATION_V17_ERROR
    assert activation.error_bytes == ACTIVATION_V17_ERROR + QWEN25_14B_TABLE - activation.bytes
    # said cold, the copy is the figure and the fit's error is both sides'
    cold = _term(QWEN25_14B_H100, Term.ACTIVATION, compile_cache_cold=True)
    assert (cold.bytes, cold.error_bytes, cold.raise_only_bytes) == (QWEN25_14B_TABLE, ACTIVATION_V17_ERROR, 0)
    # the plan's high end is the one without the copy, its low end lower (its log, 226,240 tokens, inside)
    record = RECORDS[QWEN25_14B_H100]
    plan = _plan(record)
    with monkeypatch.context() as patched:
        patched.setattr(compile_benchmark, "v1_copy_bytes", lambda inputs: None)
        without = _plan(record)
    assert plan.ledger.token_capacity == without.ledger.token_capacity
    assert plan.token_capacity_max == without.token_capacity_max
    assert plan.token_capacity_min < without.token_capacity_min
    assert plan.token_capacity_min <= (record.tokens or 0) <= plan.token_capacity_max


def test_v2s_figure_said_warm_only_raises_the_graph_term() -> None:
    # on an RTX 4090: on the start's own sm_120 card the cold plan also charges the pinned segment at its centre
    # (pinned_copy.pinned_at_centre, session 71 helper H3), which said warm drops; that is test_pinned_copy.py's
    cold = _term(COLD_7B, Term.CUDA_GRAPHS, compile_cache_cold=True, gpu_name="RTX4090")
    warm = _term(COLD_7B, Term.CUDA_GRAPHS, compile_cache_warm=True, gpu_name="RTX4090")
    # said warm, what the cold start charges leaves the centre for the error above it; below, the two graph fits'
    # errors added (V2's estimate and the figure beside its profile are the one fit, `with_v2_beside`), as cold
    assert warm.error_below_bytes == cold.error_below_bytes == 2 * GRAPH_FIT_ERROR
    assert warm.raise_only_bytes == cold.bytes - warm.bytes > 0
    assert warm.error_bytes == 2 * GRAPH_FIT_ERROR + cold.bytes - warm.bytes


def test_flashinfers_taken_off_copies_only_raise_the_peak() -> None:
    activation = _term(DENNISLEE, Term.ACTIVATION)
    assert "FlashInfer's top-k/top-p sampler" in activation.basis and activation.fit_key == "vllm.activation.v1"
    # below the figure the fit's own error; above it the copies a native fallback holds, as independent errors add
    assert activation.error_below_bytes == ACTIVATION_V1_ERROR
    assert activation.error_bytes > 40 * ACTIVATION_V1_ERROR  # the copies: 0.88 GiB beside the fit's 0.02
    assert activation.one_sided


def _activation_at(install: str | None) -> TermEstimate:
    """dennislee's A100 start (v0.10.1.1, an install-decides release) with its install as `install` says (None: not
    said, no image), so the sampler's path is FlashInfer's (installed), the native one (absent) or unknown."""
    inputs = RECORDS[DENNISLEE].inputs()
    settings = inputs.settings.model_copy(update={"flashinfer": install, "image": None})
    return next(term for term in terms(inputs.model_copy(update={"settings": settings})) if term.term is Term.ACTIVATION)


def test_an_unknown_sampler_path_only_lowers_the_peak() -> None:
    # the install decides (V1 takes FlashInfer's sampler whenever it imports: topk_topp_sampler.py:37-70 at v0.11.0):
    # the centre is the native path's, its error above the fit's own; below, the copies FlashInfer's path does not
    # hold (the native centre less FlashInfer's) beside the fit's error, as independent errors add
    native, taken, unknown = _activation_at("absent"), _activation_at("installed"), _activation_at(None)
    assert native.error_bytes == native.error_below_bytes == ACTIVATION_V1_ERROR  # the native path: the fit alone
    copies = native.bytes - taken.bytes
    assert copies > 40 * ACTIVATION_V1_ERROR  # the copies beyond FlashInfer's: 0.86 GiB beside the fit's 0.02
    assert unknown.bytes == native.bytes and unknown.error_bytes == ACTIVATION_V1_ERROR
    assert unknown.error_below_bytes == round((ACTIVATION_V1_ERROR**2 + copies**2) ** 0.5)
    assert unknown.error_below_bytes == taken.error_bytes  # the mirror of FlashInfer's path's fallback
    assert unknown.lower_only_bytes > 0 and unknown.raise_only_bytes == 0


def test_v2s_unsaid_compile_state_only_lowers_the_graph_term() -> None:
    # not said: charged cold, as a first start compiles; a warm start loads the compiled graphs and compiles nothing
    # (compilation/decorators.py:566-576 at v0.30.0), so what said warm does not charge is the error below only
    cold = _term(COLD_7B, Term.CUDA_GRAPHS, compile_cache_cold=True, gpu_name="RTX4090")
    warm = _term(COLD_7B, Term.CUDA_GRAPHS, compile_cache_warm=True, gpu_name="RTX4090")
    unsaid = _term(COLD_7B, Term.CUDA_GRAPHS, gpu_name="RTX4090")
    charged = cold.bytes - warm.bytes
    assert charged > 0 and unsaid.bytes == cold.bytes and unsaid.error_bytes == cold.error_bytes
    assert unsaid.error_below_bytes == 2 * GRAPH_FIT_ERROR + charged == cold.error_below_bytes + charged
    assert unsaid.lower_only_bytes == charged and cold.lower_only_bytes == 0
    # the launch turns the cache off: every start compiles cold, nothing below
    settings = RECORDS[COLD_7B].settings
    flags = {**settings.flags, "VLLM_DISABLE_COMPILE_CACHE": "1"}
    off = _term(COLD_7B, Term.CUDA_GRAPHS, gpu_name="RTX4090", settings=settings.model_copy(update={"flags": flags}))
    assert off.bytes == cold.bytes and off.lower_only_bytes == 0
