"""What a blind plan reads when the calibration leaves its source out: an era's fit from fewer features where its
other logs are too few for all of them, the weights book's error measured without the source, and the engine's
interval scale in the ranges `explain --gpu` rebuilds an input from. Expected figures are the logs' own (the corpus
lines quoted beside them) or hand arithmetic written beside each."""

from __future__ import annotations

import pytest

from benchmarks.calibration.evaluate import fewer_features_fit, weights_fits
from kvtop.domain.calibration.coverage import IntervalScale
from kvtop.domain.calibration.linear import LinearTerm, RowOrigin
from kvtop.domain.calibration.ranges import free_before_load_range, runtime_range
from kvtop.domain.calibration.terms import PreloadEstimate, Term, TermEstimate
from kvtop.domain.calibration.weights import (
    BUILT_ERROR_KEY,
    ERROR_FEATURES,
    LOADED_ERROR_KEY,
    with_fitted_error,
)
from kvtop.domain.engines.vllm.calibration_activation import plan_features
from kvtop.domain.wording import GIB
from tests.calibration_fits import CORPUS, ONE_WORKER, corpus_fits

pytestmark = ONE_WORKER  # its fits are tests/calibration_fits.py's: made once per run

# llm-d-planner's January 2026 text starts (`vllm/vllm-openai:latest`; the Mistral-Small-3.2 start is `@ 0.11.0`)
LLMD_TEXT = "llm-d-incubation/llm-d-planner @ 0.14.0"


def test_an_era_with_few_rows_is_fitted_on_its_kept_feature() -> None:
    # y = 2 × the second feature on three sources' rows; the others' coefficients are 0 and the feature names stay
    # the term's four, so a plan's feature values still line up; each source left out, the other two give 2 again
    names = ("1 GiB", "logits", "dense MLP", "MoE")
    found = [
        (((1.0, x, 5.0, 0.0), 2 * x), RowOrigin(source=s, gpu="H100"))
        for x, s in ((1.0, "a"), (2.0, "b"), (3.0, "c"))
    ]
    fit = fewer_features_fit("vllm.activation.v1", names, (1,), found)
    assert fit.features == names
    assert fit.coefficients == (0.0, 2.0, 0.0, 0.0)
    assert fit.records == 3 and fit.sources == 3 and fit.error_bytes <= 1  # 0 but the least squares' last bit


def test_the_text_sweep_judged_without_itself_takes_the_v1_eras_other_logs() -> None:
    """Left out, llm-d-planner's text sweep (January 2026, the release out then: v0.14.0) leaves V1's era
    (v0.8.0-v0.16.x) seven sampler-bound logs from six sources (the v0.15/v0.16 Qwen3-14B starts; v0.10.2's
    Qwen3-235B-FP8 on 8 × L40S, Qwen3-Next-80B on 2 × H200, Qwen3-8B-FP8 on an RTX 4090 and the two Qwen3-30B-A3B-2507
    starts on an H100; the Mistral-Small-3.2 start, multimodal, is no row): enough for all four features. Since
    session 52 six more logs of five sources join them (13 logs, 11 sources): benyucong/neo4j-graphrag-python's
    v0.10.2 starts on an A100-80GB and an H100, cnubigdata-24/vLLM_Test's and kyaushev/ecg_classifier's v0.10.2 on a
    T4, lucas-wa/ceia-devops-bootcamp's v0.8.5.post1 on a T4, HuazeTang/in-context-learning's v0.10.0 on a V100-32GB;
    in session 53 tituslhy/OysterShell's v0.9.2 Llama-3.2-3B on a Colab T4 (V0 engine, 1.27 GiB printed) joins them
    (14 logs, 12 sources). In session 54 Huzifa1's two repositories join (27 logs, 15 sources: a source is counted by
    release): vllm-serverless-optimization's four v0.11.0 `vllm serve` starts (H100 NVL, L40S) and vllm-profiling's nine
    v0.10.0/v0.10.1.1 `LLMEngine.from_engine_args` starts (A100-40GB, L40S, H100 NVL), whose usage context
    ENGINE_CONTEXT takes the scheduler's 128 seqs and 2,048 tokens (vllm/config.py:2388-2389 at 0.10.0), spelled in
    their records as flags. In session 55 the T4 and V100 starts of v0.8.5.post1 to v0.10.1.1 left the era: v0.8.0–
    v0.10.1.1 run V0 below compute capability 8.0 (their logs: 'Falling back to V0'), so they are V0's rows
    (v0_charge.falls_back_to_v0), as is cnubigdata-24/vLLM_Test's v0.10.2 T4 start (VLLM_USE_V1=0); kyaushev's v0.10.2
    T4 start runs V1 (v0.10.2's oracle asks no capability: 'Initializing a V1 LLM engine') and stays (23 logs, 11
    sources). The four printed peaks below still land within 0.15 GiB (within 0.02 at this refit). The two
    Qwen2.5-3B starts at 1 seq (v0.10.2, RTX 4090: 0.60 and 0.17 GiB printed) are no rows either: their forward's MLP
    transient, 2,048 × (3 × 11,008 + 2,048) × 2 B = 0.134 GiB, is above their sampler's 8 sorted copies of 1 × 151,936 ×
    4 B and the hidden states (0.012 GiB), and a forward-bound log taught the fit 1.84 × the MLP transient (6.36 GiB
    charged to Qwen3-32B, 5.64 printed). The logs' peaks at 1,024 seqs (H100's default) and 8,192 tokens:
    gpt-oss-20b 7.38 GiB, Qwen3-32B at TP 1 and TP 2 5.64, Qwen3-0.6B 5.56."""
    fit = corpus_fits(LLMD_TEXT)["vllm.activation.v1"]
    assert fit.records == 23 and fit.sources == 11
    printed = {"llmd-v011-gpt-oss-20b": 7.38, "llmd-v011-qwen3-32b-tp1": 5.64, "llmd-v011-qwen3-32b-tp2": 5.64,
               "llmd-v011-qwen3-0.6b": 5.56}  # fmt: skip
    for record in CORPUS["vllm"]:
        if record.id in printed:
            features = plan_features(record.inputs())
            assert features is not None
            assert fit.predict_gib(features) == pytest.approx(printed[record.id], abs=0.15), record.id


def test_the_weights_error_a_blind_plan_reads_leaves_its_source_out() -> None:
    every = weights_fits(CORPUS)[LOADED_ERROR_KEY]
    without = weights_fits(CORPUS, leave_out=LLMD_TEXT)[LOADED_ERROR_KEY]
    # the sweep's seven lines log their weights; its Llama-3.3-70B FP8 line is excluded from the weights (its BF16
    # config stands in): six are no longer counted, nor is their source (the Mistral-Small-3.2 start is another source)
    assert every.records - without.records == 6
    assert every.sources - without.sources == 1


def _weights(bytes_: int, source: str = "calibrated") -> TermEstimate:
    return TermEstimate(term=Term.WEIGHTS, label="weights", bytes=bytes_, error_bytes=bytes_ // 40, source=source,
                        basis=f"{source}: test")  # fmt: skip


def test_a_fitted_weights_error_replaces_the_committed_one() -> None:
    # 100 GiB at 5 % → 5 GiB; an engine built ahead reads the built engines' 1 %: 1 GiB; a measured term keeps its own
    loaded = LinearTerm(
        key=LOADED_ERROR_KEY, features=ERROR_FEATURES, coefficients=(0.05,), error_bytes=0, records=9
    )
    built = LinearTerm(
        key=BUILT_ERROR_KEY, features=ERROR_FEATURES, coefficients=(0.01,), error_bytes=0, records=4
    )
    fits = {loaded.key: loaded, built.key: built}
    assert with_fitted_error(_weights(100 * GIB), fits, built_ahead=False).error_bytes == pytest.approx(
        5 * GIB, abs=1
    )
    assert with_fitted_error(_weights(100 * GIB), fits, built_ahead=True).error_bytes == pytest.approx(
        GIB, abs=1
    )
    assert (
        with_fitted_error(_weights(100 * GIB, "measured"), fits, built_ahead=False).error_bytes
        == 100 * GIB // 40
    )
    assert with_fitted_error(_weights(100 * GIB), {}, built_ahead=False).error_bytes == 100 * GIB // 40


def _term(term: Term, gib: float, error_gib: float) -> TermEstimate:
    return TermEstimate(term=term, label=term.value, bytes=round(gib * GIB), error_bytes=round(error_gib * GIB),
                        source="calibrated", basis="calibrated: test")  # fmt: skip


def _scale(engine: str, factor: float) -> IntervalScale:
    return IntervalScale(engine=engine, factor=factor, records=10, sources=5)


def test_the_ranges_take_the_engines_interval_scale() -> None:
    # runtime: activation 5 ± 3 and non-torch 1 ± 4 GiB: 6 GiB ± √(9 + 16) = 5 GiB, × 1.5 = 7.5 GiB → 0 (floored) to 13.5
    runtime = (_term(Term.ACTIVATION, 5.0, 3.0), _term(Term.NON_TORCH, 1.0, 4.0))
    scaled = runtime_range(PreloadEstimate(engine="vllm", terms=runtime, scale=_scale("vllm", 1.5)))
    unscaled = runtime_range(PreloadEstimate(engine="vllm", terms=runtime))
    assert scaled is not None and unscaled is not None
    assert (scaled.value_bytes, scaled.high_bytes, scaled.low_bytes) == (6 * GIB, round(13.5 * GIB), 0)
    assert unscaled.high_bytes == 11 * GIB and unscaled.low_bytes == GIB
    # free before load: CUDA's total 79 ± 0.3 less a context 1 ± 0.4 GiB: 78 ± 0.5, × 2 = ± 1 GiB
    terms = (_term(Term.CUDA_TOTAL, 79.0, 0.3), _term(Term.CONTEXT, 1.0, 0.4))
    free = free_before_load_range(PreloadEstimate(engine="sglang", terms=terms, scale=_scale("sglang", 2.0)))
    assert free is not None
    assert free.value_bytes == 78 * GIB
    assert (free.low_bytes, free.high_bytes) == (
        pytest.approx(77 * GIB, abs=2),
        pytest.approx(79 * GIB, abs=2),
    )
