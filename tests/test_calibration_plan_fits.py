"""The judgement plans exactly as the product plans: one fit set per engine (`plan_fits`), whoever asks.

docs/calibration.md claims to measure what `kvtop plan` prints. A record judged with the committed fits (every
engine's, as `fit_all` on the whole corpus gives them, and its engine's committed interval scale) must then be the
plan `planned_capacity` makes with its defaults, term by term; and a fit of another engine that happens to carry a
feature of the same name never reaches the plan (`support.measured_elsewhere`: another era of the engine's own term,
or an engine-neutral fit).
"""

from __future__ import annotations

import pytest

from benchmarks.calibration.corpus import Record, by_id
from benchmarks.calibration.evaluate import blind
from kvtop.domain.calibration.cuda_context import CUDA_CONTEXT_KEY
from kvtop.domain.calibration.estimate import CapacityPlan, engine_fits, planned_capacity
from kvtop.domain.calibration.features import ASSUMED_CONTEXT_ERROR_KEY
from kvtop.domain.calibration.gpu_totals import CUDA_TOTAL_FITS
from kvtop.domain.calibration.host_memory import DESKTOP_GIVEN_BACK_KEY, DESKTOP_HELD_KEY, DESKTOP_PROFILE_KEY
from kvtop.domain.calibration.linear import LinearTerm
from kvtop.domain.calibration.plan_fits import committed_fits
from kvtop.domain.calibration.support import measured_elsewhere
from kvtop.domain.calibration.terms import Term
from kvtop.domain.calibration.unified_start import UNIFIED_START_KEY
from kvtop.domain.calibration.weights import BUILT_ERROR_KEY, LOADED_ERROR_KEY
from kvtop.domain.engines.registry import ENGINE_IDS, engine_rules
from kvtop.domain.gpus import gpu_key
from kvtop.domain.wording import GIB

CORPUS = by_id()
# the corpus's fits as the committed blocks hold them: every engine's, and the engine-neutral ones
COMMITTED = committed_fits({key: fit for engine in ENGINE_IDS for key, fit in engine_rules(engine).calibration.FITS.items()})
RECORDS = (
    "case-sglang-C01-qwen3-235b-fp8-h100-tp4",  # SGLang's context fit, TP 4 on H100
    "vllm-issue10702-llama-3.1-70b-h200-tp8",  # vLLM v0.6.4: one process's CUDA context inside the non-torch memory
    "trtllm-issue6294-llama-3.1-8b-fp8-h100-bench",  # the PyTorch backend's assumed context and its error
    "case-lmdeploy-4285-internvl3-78b-a800-tp8",  # no LMDeploy fit: CUDA's total and the assumed context
    "my-deepseek-r1-distill-qwen-7b-3090",  # a desktop (WSL2) shares the card: the low end takes the desktop's share
)
# the custom all-reduce's constant in vLLM's non-torch fits (V0's, v0.6.4's stand-in since session 52, holds it from two sources)
ALL_REDUCE = "1 GiB when the custom all-reduce runs (TP > 1 on NVLink GPUs)"


def _plan(record: Record, **given: object) -> CapacityPlan:
    assert record.model is not None and record.gpu_total_bytes is not None
    return planned_capacity(record.model, record.settings, gpu_total_bytes=record.gpu_total_bytes,
                            gpu_name=gpu_key(record.gpu), measured=record.host_measured(),
                            **given)  # type: ignore[arg-type]  # fmt: skip


@pytest.mark.parametrize("record_id", RECORDS)
def test_the_judgement_with_the_committed_fits_is_the_product_plan(record_id: str) -> None:
    record = CORPUS[record_id]
    scale = engine_rules(record.engine).calibration.INTERVAL_SCALE
    product = _plan(record)
    judged = blind(record, COMMITTED, weights_logged=False, scale=scale)
    assert judged is not None
    if judged.kind == "tokens":
        ends = (product.token_capacity_min, product.ledger.token_capacity, product.token_capacity_max)
    else:  # the log printed the KV memory (GiB), not the tokens
        ends = (product.kv_budget_min_bytes / GIB, product.ledger.engine.kv_budget_bytes / GIB,
                product.kv_budget_max_bytes / GIB)  # fmt: skip
    assert (judged.low, judged.predicted, judged.high) == ends
    assert _plan(record, fits=COMMITTED, scale=scale).estimate == product.estimate  # every term, its error and why


def test_a_plan_reads_its_engines_fits_and_the_engine_neutral_ones_only() -> None:
    vllm = engine_rules("vllm").calibration.FITS
    assert set(engine_fits("vllm", COMMITTED)) == {
        *CUDA_TOTAL_FITS, CUDA_CONTEXT_KEY, ASSUMED_CONTEXT_ERROR_KEY, LOADED_ERROR_KEY, BUILT_ERROR_KEY, DESKTOP_HELD_KEY,
        DESKTOP_PROFILE_KEY, DESKTOP_GIVEN_BACK_KEY, UNIFIED_START_KEY, *vllm}
    assert engine_fits("vllm") == engine_fits("vllm", COMMITTED)  # the product's set is the committed corpus's
    assert not any(key.startswith("sglang.") for key in engine_fits("vllm", COMMITTED))


def test_another_engines_fit_of_a_feature_named_alike_does_not_widen_a_plan() -> None:
    # since session 52 (5a688f46) v0.6.4 has no non-torch fit of its own: it plans on V0's (its stand-in) plus one
    # process's context by SM count, and V0's fit carries the custom all-reduce's part from two sources (its committed
    # feature_sources), so the committed plan is widened for the H200 only (no V0 record ran one), not for the feature
    record = CORPUS["vllm-issue10702-llama-3.1-70b-h200-tp8"]
    product = _plan(record).estimate
    non_torch = next(term for term in product.terms if term.term is Term.NON_TORCH)
    assert non_torch.fit_key == "vllm.non_torch.v0" and ALL_REDUCE not in (non_torch.beyond or "")
    # the feature made one source's, with no error measured where it is used: the widening falls back to the part
    # measured elsewhere; an SGLang-keyed fit carrying the same feature name (5 sources, 40 GiB) is not that
    stand_in = COMMITTED[non_torch.fit_key]
    own = stand_in.model_copy(update={"feature_sources": (stand_in.feature_sources[0], 1), "unseen_error_bytes": 0})
    alone = _plan(record, fits={**COMMITTED, own.key: own}).estimate
    assert ALL_REDUCE in (next(term for term in alone.terms if term.term is Term.NON_TORCH).beyond or "")
    foreign = LinearTerm(key="sglang.context.custom_all_reduce", features=(ALL_REDUCE,), coefficients=(40.0,),
                         error_bytes=0, records=5, sources=5, feature_sources=(5,))  # fmt: skip
    planned = _plan(record, fits={**COMMITTED, own.key: own, foreign.key: foreign}).estimate
    widened = next(term for term in planned.terms if term.term is Term.NON_TORCH)
    assert widened.error_bytes < 40 * GIB
    assert planned == alone


def test_a_gpus_cuda_total_is_no_part_measured_elsewhere() -> None:
    # a term's constant '1 GiB' and the H200's CUDA total (its one feature also '1 GiB'): only the other era of the
    # term gives the part, 0.5 GiB × 1 (hand arithmetic), never the GPU's 139.8 GiB
    def fit(key: str, coefficient: float) -> LinearTerm:
        return LinearTerm(key=key, features=("1 GiB",), coefficients=(coefficient,), error_bytes=0, records=4,
                          sources=4, feature_sources=(4,))  # fmt: skip

    total = COMMITTED["cuda_total.H200"]
    assert total.features == ("1 GiB",) and total.predict_gib((1.0,)) > 139
    era, other_era = fit("vllm.context.v1", 0.3), fit("vllm.context.v0", 0.5)
    fits = {total.key: total, era.key: era, other_era.key: other_era}
    assert measured_elsewhere(fits, era, "1 GiB", 1.0) == GIB // 2
