"""The node's stored terms are never a wrong number: no negative term, a runtime charge kept only where the engine's
package says its start measures one (a measured 0 included), a node's term marked as such, expected values from the
case logs' own lines."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kvtop.cli import main
from kvtop.commands.explain import settings_typed_for_log
from kvtop.domain.calibration.estimate import preload_estimate
from kvtop.domain.calibration.node import NodeMeasure, measure_of_explanation, measure_of_start
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.registry import ENGINE_IDS, engine_rules
from kvtop.domain.explain import explain
from kvtop.domain.explain_request import ExplainRequest
from kvtop.domain.explanation import Explanation
from kvtop.domain.wording import GIB
from kvtop.sources.engine_logs import read_engine_log
from kvtop.sources.hub import load_model
from tests.data_paths import CASES, CONFIGS

LLAMA_8B = CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"
VLLM_3090 = CASES / "vllm" / "vllm-10517-llama31-8b-3090-v0" / "engine.log"
SGLANG_C13 = CASES / "sglang" / "C13" / "engine.log"


def explained(path: Path, engine: str, gpu: str, flags: list[str]) -> Explanation:
    """The case log explained as `kvtop explain LOG --model LLAMA_8B --gpu GPU FLAGS` does."""
    log = read_engine_log(path)
    printed = {**log.server_args, **log.engine_config}
    settings = settings_typed_for_log(printed, engine, flags, str(LLAMA_8B), log.launch_command)[0]
    if settings.engine_version is None:
        settings = settings.model_copy(update={"engine_version": engine_rules(engine).resolve_version(log).text})
    return explain(ExplainRequest(log=log, model=load_model(str(LLAMA_8B)), settings=settings, gpu_name=gpu))


def vllm_3090() -> Explanation:
    return explained(VLLM_3090, "vllm", "RTX3090", ["--max-model-len", "20000"])


def test_weights_beyond_what_the_kv_memory_leaves_are_kept_together_never_a_negative_charge() -> None:
    """vllm-10517: `total_gpu_memory=23.58GiB … peak_torch_memory=17.06GiB … non_torch_memory=0.35GiB
    kv_cache_size=3.81GiB gpu_memory_utilization=0.90`, `Loading model weights took 14.9888 GB`. What the KV memory
    leaves is 23.58 × 0.90 − 3.81 = 17.41 GiB (= 17.06 + 0.35): the weights and the charge together. A start whose
    weights read 18.41 GiB (1 GiB beyond that) gave a charge of 17.41 − 18.41 = −1 GiB; it proved their sum only."""
    result = vllm_3090()
    ledger = result.ledger
    assert ledger is not None
    measure = measure_of_start(ledger, date="2024-11-27", free_before_load_bytes=None, weights_bytes=round(18.41 * GIB),
                               runtime_measured=True)  # fmt: skip
    assert measure is not None and all(value >= 0 for value in measure.terms.values())
    assert measure.terms[Term.ACTIVATION] == 0 and measure.together
    assert abs(measure.terms[Term.WEIGHTS] - 17.41 * GIB) < 0.01 * GIB
    assert measure.note() is not None and "not determined" in (measure.note() or "")
    # a plan of the same batch replays the logged KV memory; one of another batch takes neither term
    plan = ledger.model_copy(update={"measured": MeasuredInputs()})
    same = {e.term: e for e in preload_estimate(plan, node_measures=(measure,)).terms}
    assert same[Term.WEIGHTS].origin == same[Term.ACTIVATION].origin == "node"
    other = plan.model_copy(update={"settings": plan.settings.model_copy(update={"max_num_batched_tokens": 4096})})
    assert {e.term: e.origin for e in preload_estimate(other, node_measures=(measure,)).terms}[Term.WEIGHTS] == "estimate"


def test_a_negative_term_in_an_older_store_line_is_never_applied() -> None:
    """A line written before negative charges were refused: the plan keeps the engine's estimate of that term."""
    result = vllm_3090()
    assert result.ledger is not None
    measure = measure_of_explanation(result, date="2024-11-27")
    assert measure is not None
    old = measure.model_copy(update={"terms": {**measure.terms, Term.ACTIVATION: -GIB}})
    plan = result.ledger.model_copy(update={"measured": MeasuredInputs()})
    terms = {e.term: e for e in preload_estimate(plan, node_measures=(old,)).terms}
    assert terms[Term.ACTIVATION].origin == "estimate" and terms[Term.ACTIVATION].bytes > 0


def test_vllms_measured_charge_is_kept_even_at_zero() -> None:
    """vLLM solves its charge from the logged KV memory (its package's START_MEASURES): 17.41 − 14.9888 = 2.42 GiB
    (peak 17.06 − weights 14.99 + non-torch 0.35) here, and a charge it solved to 0 is a measured 0, kept."""
    result = vllm_3090()
    assert result.ledger is not None
    measure = measure_of_explanation(result, date="2024-11-27")
    assert measure is not None and abs(measure.terms[Term.ACTIVATION] - 2.42 * GIB) < 0.01 * GIB
    ledger = result.ledger.model_copy(update={"engine": result.ledger.engine.model_copy(update={"reserve_bytes": 0})})
    zero = measure_of_explanation(result.model_copy(update={"ledger": ledger}), date="2024-11-27")
    assert zero is not None and zero.terms[Term.ACTIVATION] == 0


def test_sglangs_reserve_is_no_measured_charge_even_beside_a_logged_kv_memory() -> None:
    """C13: `avail mem=78.81 GB` before, `63.72 GB` after the load: SGLang's weights are the drop, 15.09 GiB (its
    package's START_MEASURES); its reserve is the fraction's rest, never a charge its log measured, so no runtime
    term is kept even where a log states its KV memory (`K size: 27.13 GB, V size: 27.13 GB`)."""
    result = explained(SGLANG_C13, "sglang", "H100", ["--mem-fraction-static", "0.88", "--chunked-prefill-size", "8192"])
    assert result.ledger is not None and result.ledger.engine.reserve_bytes > 0
    with_kv = result.model_copy(update={"logged": result.logged.model_copy(update={"available_kv_bytes": round(54.26 * GIB)})})
    measure = measure_of_explanation(with_kv, date="2025-01-23")
    assert measure is not None and Term.ACTIVATION not in measure.terms
    assert abs(measure.terms[Term.WEIGHTS] - 15.09 * GIB) < 0.005 * GIB


def test_each_engine_states_what_its_start_measures() -> None:
    facts = {engine: engine_rules(engine).calibration.START_MEASURES for engine in ENGINE_IDS}
    assert {e for e, f in facts.items() if f.runtime_charge} == {"vllm"}
    assert {e for e, f in facts.items() if f.weights_from_free_drop} == {"sglang"}
    assert all(f.source for f in facts.values())


def test_explaining_the_same_log_again_keeps_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    for _ in range(2):
        assert main(["explain", str(VLLM_3090), "--model", str(LLAMA_8B), "--gpu", "RTX3090"]) == 0
    capsys.readouterr()
    store = Path(os.environ["XDG_STATE_HOME"]) / "kvtop" / "calibration.jsonl"
    (line,) = [json.loads(text) for text in store.read_text().splitlines()]
    assert line["engine"] == "vllm" and isinstance(NodeMeasure.model_validate(line), NodeMeasure)
