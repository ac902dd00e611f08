"""The leave-one-source-out judgement reads only the fits it passes: no committed FITTED block.

A plan the judgement makes (`evaluate.blind`) must take every fit from the fits refitted without the judged record's
source. One that fell back to a committed block (the assumed context's error in `features.py`, one process's CUDA
context in `cuda_context.py`, an engine's FITS or INTERVAL_SCALE) read a fit its own log helped make, and made
`run.py --write` take two passes from a stale state (session 51: TensorRT-LLM's INTERVAL_SCALE 0.5548, then 0.5418,
its PyTorch backend's assumed context reading `ASSUMED_CONTEXT_ERROR_GIB`; the two desktop starts' low ends reading
`DESKTOP_HELD_BYTES`, the most those same two starts held). Every committed block is perturbed here
in-process (coefficients, errors, spans and factors × 3, dict blocks emptied) and a small corpus subset judged before
and after: the judged figures, the fits and the interval scales must not move. The subset holds vLLM's hybrid
prefix-caching starts too, whose plans read a calibrated centre and its held-out span (`vllm.hybrid_sample`,
hybrid_graph_sample.py; review R2 4): each fold must read its own fit's, not the committed block's.
"""

from __future__ import annotations

import json

import pytest

from benchmarks.calibration import evaluate
from benchmarks.calibration.corpus import CORPUS, Record, load, resolve
from benchmarks.calibration.evaluate import Corpus
from benchmarks.calibration.judgement import engine_scale, judge_corpus
from kvtop.domain.calibration import cuda_context, features, gpu_totals, host_memory, plan_fits, weights
from kvtop.domain.calibration.linear import LinearTerm
from kvtop.domain.engines.registry import ENGINE_IDS, engine_rules
from kvtop.domain.engines.trtllm.calibration import _profiled
from kvtop.domain.engines.vllm.hybrid_graph_sample import SAMPLE_KEY, SAMPLE_ROWS

# vLLM v0.6.4's non-torch memory holds one process's CUDA context (`calibration_non_torch._context_inside`)
V064 = ("vllm-issue11251-v100", "case-vllm-10517-llama31-8b-3090", "case-vllm-pr10927-deepseek-v2-lite",
        "vllm-issue10517-llama31-8b-3090-29k", "vllm-issue10702-llama-3.1-70b-h200-tp8")  # fmt: skip
HYBRID_SAMPLE = tuple(record_id for record_id, _, _ in SAMPLE_ROWS)  # the class's starts on GPUs of their own


def _vllm(ids: tuple[str, ...]) -> list[Record]:
    """vLLM's records of `ids`, in file order, each resolved fresh from its line as `load(fresh=True)` resolves every
    line: the subset's few, not the file's ≈ 760 (each resolve plans its record)."""
    lines = (CORPUS / "vllm.jsonl").read_text().splitlines()
    raws = [raw for raw in (json.loads(line) for line in lines if line.strip()) if raw["id"] in ids]
    assert {raw["id"] for raw in raws} == set(ids), "a subset record left the corpus"
    return [resolve(raw) for raw in raws]


def _subsets() -> dict[str, Corpus]:
    """Fresh records (no memo carried over): TensorRT-LLM's, LMDeploy's, SGLang's and vLLM v0.6.4's starts (the
    one-process context fitted) with vLLM's hybrid prefix-caching ones (the class's centre fitted), and vLLM v0.6.4's
    alone (too few sources to fit it: the plan assumes it). Resolved again (`fresh`): the records `load_all` shares
    across the process hold plans made with the committed blocks."""
    lmdeploy = load("lmdeploy", fresh=True)
    v064 = _vllm(V064)
    return {
        "with context fits": {"sglang": load("sglang", fresh=True), "trtllm": load("trtllm", fresh=True),
                              "lmdeploy": lmdeploy, "vllm": v064 + _vllm(HYBRID_SAMPLE)},
        "without context fits": {"vllm": v064, "lmdeploy": lmdeploy},
    }  # fmt: skip


def _judged(corpus: Corpus) -> dict[str, object]:
    """Every judged figure, fit and interval scale of the subset's judgement."""
    judgement = judge_corpus(corpus)
    found: dict[str, object] = {f"fit {key}": fit for key, fit in judgement.fits.items()}
    for kind, by_engine in (("logged", judgement.logged), ("blind", judgement.blind)):
        for judged in (judged for items in by_engine.values() for judged in items):
            found[f"{kind} {judged.record.id}"] = (judged.predicted, judged.low, judged.high)
    for engine in corpus:
        found[f"scale {engine}"] = engine_scale(engine, judgement.scores)
    return found


def _tripled(fit: LinearTerm) -> LinearTerm:
    span = None if fit.span_bytes is None else (3 * fit.span_bytes[0] - 1, 3 * fit.span_bytes[1] + 1)
    return fit.model_copy(update={"coefficients": tuple(3 * c + 1 for c in fit.coefficients),
                                  "error_bytes": 3 * fit.error_bytes + 1,
                                  "novel_error_bytes": 3 * fit.novel_error_bytes + 1, "span_bytes": span})  # fmt: skip


def _perturb(monkeypatch: pytest.MonkeyPatch, emptied: bool) -> None:
    """Every committed block off its value: dicts emptied, or each fit tripled; scalars and scale factors tripled."""
    calibrations = [engine_rules(engine).calibration for engine in ENGINE_IDS]
    blocks = [gpu_totals.CUDA_TOTAL_FITS, cuda_context.CUDA_CONTEXT_FITS] + [module.FITS for module in calibrations]
    for block in blocks:
        for key, fit in list(block.items()):
            if emptied:
                monkeypatch.delitem(block, key)
            else:
                monkeypatch.setitem(block, key, _tripled(fit))
    for module in calibrations:
        if module.INTERVAL_SCALE is not None:
            monkeypatch.setattr(module, "INTERVAL_SCALE",
                                module.INTERVAL_SCALE.model_copy(update={"factor": 3 * module.INTERVAL_SCALE.factor}))  # fmt: skip
    monkeypatch.setattr(features, "ASSUMED_CONTEXT_ERROR_GIB", 3 * features.ASSUMED_CONTEXT_ERROR_GIB + 1)
    monkeypatch.setattr(weights, "WEIGHTS_RELATIVE_ERROR", 0.3)
    monkeypatch.setattr(weights, "BUILT_WEIGHTS_RELATIVE_ERROR", 0.3)
    monkeypatch.setattr(weights.weights_estimate, "__defaults__", (0.3, 1, None))
    monkeypatch.setattr(host_memory, "DESKTOP_HELD_BYTES", 3 * host_memory.DESKTOP_HELD_BYTES + 1)
    monkeypatch.setattr(plan_fits, "DESKTOP_HELD_BYTES", 3 * plan_fits.DESKTOP_HELD_BYTES + 1)
    monkeypatch.setattr(host_memory, "DESKTOP_PROFILE_BYTES", 3 * host_memory.DESKTOP_PROFILE_BYTES + 1)
    monkeypatch.setattr(plan_fits, "DESKTOP_PROFILE_BYTES", 3 * plan_fits.DESKTOP_PROFILE_BYTES + 1)
    monkeypatch.setattr(host_memory, "DESKTOP_GIVEN_BACK_BYTES", 3 * host_memory.DESKTOP_GIVEN_BACK_BYTES + 1)
    monkeypatch.setattr(plan_fits, "DESKTOP_GIVEN_BACK_BYTES", 3 * plan_fits.DESKTOP_GIVEN_BACK_BYTES + 1)
    monkeypatch.setattr(evaluate, "_WEIGHTS_ERRORS", {})  # by record id: made again from the fresh records


@pytest.fixture(scope="module")
def unperturbed() -> dict[str, dict[str, object]]:
    """Each subset judged with every committed block as committed: made once for both perturbations (their xdist group
    keeps them on one worker), from records of its own."""
    return {name: _judged(corpus) for name, corpus in _subsets().items()}


@pytest.mark.xdist_group("calibration-no-committed-leak")
@pytest.mark.parametrize("emptied", [False, True], ids=["tripled", "emptied"])
def test_the_judgement_reads_no_committed_block(monkeypatch: pytest.MonkeyPatch, emptied: bool,
                                                unperturbed: dict[str, dict[str, object]]) -> None:  # fmt: skip
    before = unperturbed
    # what the subset must reach for the check to mean something: a TensorRT-LLM PyTorch start (its context assumed)
    # and a v0.6.4 vLLM start (one process's context added), judged; the context fitted in one subset, not the other
    ids = [name.split(" ", 1)[1] for name in before["with context fits"] if name.startswith("blind ")]
    records = {record.id: record for records in _subsets()["with context fits"].values() for record in records}
    assert any(records[i].engine == "trtllm" and _profiled(records[i].inputs()) for i in ids)
    assert any(i in V064 for i in ids)
    # every desktop start: SGLang's two under WSL2 (my-deepseek-…-3090; ghourimarti-…-rtx3060, session 60),
    # lmdeploy#1703's Windows and TensorRT-LLM's WSL2 Triton start (tritonbackend-issue625-…-4090-wsl2, session 62)
    assert sum(records[i].desktop for i in ids) == 4
    assert "fit cuda_context.one_process" in before["with context fits"]
    # the class's centre fitted in the subset, and every one of its starts judged blind with a fold's (review R2 4)
    assert f"fit {SAMPLE_KEY}" in before["with context fits"]
    assert set(HYBRID_SAMPLE) <= set(ids)
    assert "fit cuda_context.one_process" not in before["without context fits"]
    _perturb(monkeypatch, emptied)
    after = {name: _judged(corpus) for name, corpus in _subsets().items()}
    for name in before:
        moved = sorted(key for key in before[name] if before[name][key] != after[name].get(key))
        assert not moved and before[name].keys() == after[name].keys(), (name, moved)
