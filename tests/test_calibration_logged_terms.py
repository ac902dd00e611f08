"""Each engine's calibration states how its logged figures read back into its terms (`EngineCalibration.logged_terms`),
and the corpus's fits take them from there (benchmarks/calibration/evaluate.py `observed`), asking no engine by name.

Expected figures are the logs' own (tests/data/calibration/vllm.jsonl): the kubesimplify post's v0.27.1 TP 4 start of
Qwen3-235B-A22B-FP8 ('56.89 GiB for consumed memory (weights + non-torch), 0.76 GiB for peak activation', 'Model
loading took 55.19 GiB', no graph estimate printed) and sql-agent-rl's v0.31.0 start ('3.31 GiB for consumed memory …,
0.79 GiB for peak activation, and 0.2 GiB for CUDAGraph memory', 'CUDA graph pool memory: 0.2 GiB (actual), 0.35 GiB
(estimated)'); the fused MoE's workspace is TritonExperts' arithmetic, 2 × 8,192 × 8 × 4,096 × 2 B.
"""

from __future__ import annotations

from benchmarks.calibration.corpus import load, load_all
from benchmarks.calibration.evaluate import observed
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.registry import ENGINE_IDS, engine_rules
from kvtop.units import GIB

VLLM = {record.id: record for record in load("vllm")}
TP4 = "kubesimplify-qwen3-235b-a22b-2507-fp8-4xrtxpro6000-tp4-v0271"
SQL_AGENT = "sql-agent-rl-qwen2.5-coder-1.5b-a100-40gb-v0310"
WORKSPACE = 2 * 8192 * 8 * 4096 * 2


def test_every_engine_states_its_read_back() -> None:
    for engine in ENGINE_IDS:
        assert callable(engine_rules(engine).calibration.logged_terms), engine


def test_an_engine_whose_log_prints_its_terms_reads_them_as_printed() -> None:
    for engine, records in load_all().items():
        if engine == "vllm":
            continue
        for record in records[:5]:
            assert engine_rules(engine).calibration.logged_terms(record.inputs(), record.figures) == record.figures


def test_vllm_v0_27_moves_the_workspace_back_and_measures_no_activation_without_the_estimate() -> None:
    record = VLLM[TP4]
    assert round(record.figures["non_torch"] / GIB, 2) == 1.70  # 56.89 − 55.19
    non_torch = observed(record, Term.NON_TORCH, {})
    assert non_torch == record.figures["non_torch"] - WORKSPACE and round(non_torch / GIB, 2) == 0.70
    assert observed(record, Term.ACTIVATION, {}) is None  # 0.76 holds the charged estimate, which it did not print
    assert observed(record, Term.CUDA_GRAPHS, {}) is None  # its CUDAGraph figure is the pool captured after the KV


def test_vllm_v0_27_takes_the_printed_estimate_out_of_the_activation() -> None:
    record = VLLM[SQL_AGENT]
    estimate = record.figures["cuda_graph_estimate"]
    assert round(estimate / GIB, 2) == 0.35
    assert observed(record, Term.CUDA_GRAPHS, {}) == estimate
    assert observed(record, Term.ACTIVATION, {}) == record.figures["activation"] - estimate  # a dense model: no workspace
    assert round(record.figures["activation"] / GIB, 2) == 0.79
