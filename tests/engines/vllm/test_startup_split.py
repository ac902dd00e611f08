"""The V1 startup line's split, read back into kvtop's terms (startup_split.py).

Expected figures are the logs' own: sql-agent-rl's vLLM 0.31.0 start (search-index id 70929996093, the corpus record
`sql-agent-rl-qwen2.5-coder-1.5b-a100-40gb-v0310`) prints 'The current --gpu-memory-utilization=0.9200 is equivalent
to --gpu-memory-utilization=0.9110', 'CUDA graph pool memory: 0.2 GiB (actual), 0.35 GiB (estimated)', 'Free memory on
device (39.08/39.49 GiB) … (0.92, 36.33 GiB). Actual usage is 3.31 GiB for consumed memory (weights + non-torch), 0.79
GiB for peak activation, and 0.2 GiB for CUDAGraph memory', 'Available KV cache memory: 32.23 GiB', 'Model loading
took 2.98 GiB'; the kubesimplify post's v0.27.1 TP 4 start prints 85.51, 56.89, 0.76, 0.32 and 27.85 GiB.
"""

from __future__ import annotations

import pytest

from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.startup_split import SPLIT_ERAS, charged_terms, graph_estimate_from_equivalence
from kvtop.units import GIB


def _gib(value: float) -> int:
    return round(value * GIB)


def test_the_equivalent_utilization_gives_the_printed_estimate() -> None:
    # E = (0.92 − 0.9110) × 39.49 GiB = 0.3554 GiB, ± 0.00005 × 39.49: 0.3534 – 0.3574; printed 0.35 (0.345 – 0.355)
    low, high = graph_estimate_from_equivalence(0.92, 0.9110, _gib(39.49))
    assert round(low / GIB, 4) == 0.3534 and round(high / GIB, 4) == 0.3574
    assert low < _gib(0.355) and high > _gib(0.345)


def test_from_v0_27_the_peak_activation_holds_the_estimate_and_the_graph_figure_is_not_charged() -> None:
    # 36.33 − 3.31 − 0.79 = 32.23, the printed KV memory; charging the printed 0.2 GiB of graphs too would give 32.03
    assert round(36.33 - 3.31 - 0.79, 2) == 32.23 != round(36.33 - 3.31 - 0.79 - 0.2, 2)
    # the kubesimplify TP 4 start: 85.51 − 56.89 − 0.76 = 27.86 against the printed 27.85 (the figures' rounding)
    assert abs((85.51 - 56.89 - 0.76) - 27.85) <= 0.015
    terms = charged_terms(_version("0.31.0"),
                          weights=_gib(2.98), printed_non_torch_or_consumed=_gib(3.31), printed_activation=_gib(0.79),
                          graph_estimate=_gib(0.3554), kept_buffers=0)  # fmt: skip
    assert round(terms.non_torch / GIB, 2) == 0.33  # 3.31 − 2.98
    assert round(terms.activation / GIB, 2) == 0.43  # 0.79 − 0.3554: the transient alone
    assert terms.non_torch + terms.activation + terms.graph_estimate == _gib(3.31) - _gib(2.98) + _gib(0.79)


def test_the_kept_workspace_moves_back_to_the_activation() -> None:
    # v0.27.1 TP 4: 56.89 − 55.19 − 1.00 (the fused MoE's workspace, moe_workspace.py) = 0.70 GiB of non-torch growth
    terms = charged_terms(_version("0.27.1"), weights=_gib(55.19), printed_non_torch_or_consumed=_gib(56.89),
                          printed_activation=_gib(0.76), graph_estimate=0, kept_buffers=GIB)  # fmt: skip
    assert round(terms.non_torch / GIB, 2) == 0.70 and round(terms.activation / GIB, 2) == 1.76


def test_up_to_v0_26_the_figures_are_kvtop_s_terms_already() -> None:
    assert SPLIT_ERAS.at(_version("0.26.0")) == "apart" and SPLIT_ERAS.at(_version("0.27.0")) == "consumed"
    terms = charged_terms(_version("0.26.0"), weights=_gib(106.69), printed_non_torch_or_consumed=_gib(0.95),
                          printed_activation=_gib(6.31), graph_estimate=_gib(1.0), kept_buffers=GIB)  # fmt: skip
    assert (terms.non_torch, terms.activation) == (_gib(0.95), _gib(6.31))


def _version(label: str) -> ResolvedVersion:
    return ResolvedVersion(text=label)


def test_a_v0_27_record_reads_back_into_kvtop_s_terms() -> None:
    """sql-agent-rl (v0.31.0, dense): 0.79 − 0.35 (its printed estimate) = 0.44 GiB of activation, 0.33 of non-torch,
    0.35 of graphs charged. kubesimplify TP 4 (v0.27.1, no estimate printed): non-torch 1.70 − 1.00 (the workspace) =
    0.70, the activation and graph terms not measured apart. A v0.19.0 record's figures are kvtop's terms already."""
    from benchmarks.calibration.corpus import load
    from kvtop.domain.engines.vllm.startup_split import logged_terms

    records = {record.id: record for record in load("vllm")}
    sql = records["sql-agent-rl-qwen2.5-coder-1.5b-a100-40gb-v0310"]
    found = logged_terms(sql.inputs(), sql.figures)
    assert found == {
        "activation": _gib(0.79) - _gib(0.35),
        "non_torch": _gib(0.33),
        "cuda_graphs": _gib(0.35),
    }
    tp4 = records["kubesimplify-qwen3-235b-a22b-2507-fp8-4xrtxpro6000-tp4-v0271"]
    found = logged_terms(tp4.inputs(), tp4.figures)
    assert found == {"activation": None, "non_torch": _gib(1.70) - GIB, "cuda_graphs": None}
    v019 = records["llmd-v019-llama-3.1-8b-tp1"]
    assert logged_terms(v019.inputs(), v019.figures) == {
        "activation": _gib(1.89),
        "non_torch": _gib(0.25),
        "cuda_graphs": _gib(0.84),
    }


def test_the_fits_read_the_figures_back_once_the_calibration_exposes_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """benchmarks/calibration/evaluate.py `observed` asks the engine calibration's `logged_terms` (the coordinator's
    wiring: vLLM's calibration.py importing startup_split.logged_terms); without it the printed figures stand."""
    from benchmarks.calibration.corpus import load
    from benchmarks.calibration.evaluate import observed
    from kvtop.domain.calibration.terms import Term
    from kvtop.domain.engines.vllm import calibration
    from kvtop.domain.engines.vllm.startup_split import logged_terms

    # a fresh record: `load`'s shared ones may hold a read-back (`Record.memo`) made before the patch
    record = next(r for r in load("vllm", fresh=True) if r.id == "sql-agent-rl-qwen2.5-coder-1.5b-a100-40gb-v0310")
    monkeypatch.setattr(calibration, "logged_terms", logged_terms, raising=False)
    assert observed(record, Term.ACTIVATION, {}) == _gib(0.79) - _gib(0.35)
    assert observed(record, Term.CUDA_GRAPHS, {}) == _gib(0.35)
    assert observed(record, Term.NON_TORCH, {}) == _gib(0.33)
