"""vLLM charges its CUDA-graph estimate to the KV budget from v0.20.0, not v0.21.0 (profile_run.GRAPHS_CHARGED).

PR #38284 set VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS's default to "1" and is first released in v0.20.0 (envs.py:1724-
1726 at v0.20.0, 1736-1738 at v0.20.1; "0" at v0.19.0, envs.py:1654-1656), and v0.20.0's gpu_worker.py:421-425 takes the
estimate off the budget, whatever the advisory's "(default since v0.21.0)" says. A v0.20.2 start prints it so
(clinician-co-pilot's Gemma-4-26B on an H200, tests/data/calibration/vllm.jsonl: 'Estimated CUDA graph memory: 0.88 GiB
total' beside its 'Available KV cache memory: 71.67 GiB').
"""

from __future__ import annotations

import pytest

from benchmarks.calibration.corpus import load
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.vllm import calibration
from kvtop.domain.engines.vllm.profile_run import graphs_charged

RECORDS = {record.id: record for record in load("vllm")}
CLINICIAN = "clinician-co-pilot-gemma-4-26b-a4b-h200-v0202"


@pytest.mark.parametrize(("version", "charged"), [("0.19.0", False), ("0.20.0", True), ("0.20.2", True)])
def test_the_estimate_is_charged_from_v0_20_0(version: str, charged: bool) -> None:
    inputs = RECORDS[CLINICIAN].inputs()
    inputs = inputs.model_copy(update={"version": inputs.version.model_copy(update={"text": version})})
    assert graphs_charged(inputs) is charged
    assert (Term.CUDA_GRAPHS in {term.term for term in calibration.terms(inputs)}) is charged


def test_the_v0_20_2_start_charged_it() -> None:
    inputs = RECORDS[CLINICIAN].inputs()
    graphs = [term for term in calibration.terms(inputs) if term.term is Term.CUDA_GRAPHS]
    assert len(graphs) == 1 and "charged since v0.20.0" in graphs[0].basis
