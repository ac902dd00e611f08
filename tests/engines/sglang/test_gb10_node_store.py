"""A node's calibration store on a unified-memory host (GB10): the stored context holds the host's share.

Expected figures are the log's (tests/data/cases/sglang/C25, a GB10 SGLang start of google/gemma-4-E4B-it): 'avail
mem=97.30 GB, mem usage=15.56 GB' after the load (SGLang logs GiB as "GB"), so the free memory it sized from before
the load was 97.30 + 15.56 = 112.86 GiB. `kvtop explain` stores that start's context as CUDA's total less that free
memory (`measure_of_start`), the host's share in it; a later plan of the same launch on that node reads 112.86 GiB
free before the load, not that less the assumed share again (review R3 D1: 99.57 GiB, the share taken twice).
"""

from __future__ import annotations

from kvtop.commands.explain import settings_typed_for_log
from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.calibration.node import measure_of_explanation
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.explain import explain
from kvtop.domain.explain_request import ExplainRequest
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.wording import GIB
from kvtop.sources.engine_logs import read_engine_log
from kvtop.sources.hub import load_model
from tests.data_paths import CASES, DATA

LOG = CASES / "sglang" / "C25" / "engine.log"
GEMMA = DATA / "calibration" / "configs" / "google--gemma-4-E4B-it.RECONSTRUCTED.json"
LOGGED_FREE_GIB = 97.30 + 15.56  # 'avail mem=97.30 GB, mem usage=15.56 GB'
ROUNDING_GIB = 0.01  # each logged figure to 2 decimals


def test_a_stored_gb10_start_gives_its_logged_free_memory_not_less_the_host_share_again() -> None:
    log = read_engine_log(LOG)
    settings = settings_typed_for_log({**log.server_args, **log.engine_config}, "sglang", [], str(GEMMA),
                                      log.launch_command)[0]  # fmt: skip
    if settings.engine_version is None:
        settings = settings.model_copy(update={"engine_version": engine_rules("sglang").resolve_version(log).text})
    model = load_model(str(GEMMA))
    total = gpu_total_bytes("GB10")
    result = explain(ExplainRequest(log=log, model=model, settings=settings, gpu_name="GB10", gpu_total_bytes=total))
    measure = measure_of_explanation(result, date="2026-12-07")
    assert measure is not None and Term.CONTEXT in measure.terms
    assert result.ledger is not None
    plan = planned_capacity(model, result.ledger.settings, gpu_total_bytes=total, gpu_name="GB10",
                            node_measures=(measure,))  # fmt: skip
    host = plan.estimate.term(Term.HOST)
    assert host is not None and host.source == "measured" and host.bytes == 0 and host.origin == "node"
    free = plan.ledger.measured.free_before_load(total)
    assert abs(free / GIB - LOGGED_FREE_GIB) <= 2 * ROUNDING_GIB
    assert plan.ledger.measured.free_before_load_source() == "measured"
    assert any("this node measured at a start on 2026-12-07" in note for note in plan.estimate.host_notes)
    # the same free memory and weights given by hand: the same capacity (one rule for a stored and a given measure)
    weights = measure.terms[Term.WEIGHTS]
    given = planned_capacity(model, result.ledger.settings, gpu_total_bytes=total, gpu_name="GB10",
                             measured=MeasuredInputs(free_before_load_bytes=measure.terms[Term.CUDA_TOTAL]
                                                     - measure.terms[Term.CONTEXT], weights_bytes=weights))  # fmt: skip
    assert given.ledger.token_capacity == plan.ledger.token_capacity
    # blind (no store), the share is assumed and charged once: less free than the host held at this start
    blind = planned_capacity(model, result.ledger.settings, gpu_total_bytes=total, gpu_name="GB10")
    assert blind.ledger.measured.free_before_load(total) < free
