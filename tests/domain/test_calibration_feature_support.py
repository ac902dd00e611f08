"""A plan that uses a feature its fit never measured (no row carried it, or one source's rows only) widens and says so.

Every expected figure below is the least-squares arithmetic done by hand in the comments, not read off the code.
"""

from __future__ import annotations

import pytest

from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.linear import LinearTerm, RowOrigin, fit_term
from kvtop.domain.calibration.support import widened
from kvtop.domain.calibration.terms import PreloadEstimate, Term, TermEstimate
from kvtop.domain.engines.versions import NOT_STATED
from kvtop.domain.engines.vllm.calibration import FITS
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_config_file
from tests.data_paths import CONFIGS

FEATURES = ("1 GiB", "1 GiB when the custom all-reduce runs")
INPUTS = CalibrationInputs(model=None, settings=parse_flags("vllm", []), layout=ParallelLayout(), gpu_name=None,
                           gpu_total_bytes=80 * GIB, version=NOT_STATED, weights_bytes=0, context_length=8192)  # fmt: skip


def _estimate(fit: LinearTerm, values: tuple[float, ...]) -> TermEstimate:
    return TermEstimate(term=Term.NON_TORCH, label="non-torch", bytes=fit.predict(values), error_bytes=fit.error_bytes,
                        source="calibrated", basis="test", fit_key=fit.key, values=values)  # fmt: skip


def test_a_feature_no_row_carried_widens_to_its_part_measured_elsewhere() -> None:
    # four sources, none with the all-reduce: targets 1.0, 1.0, 1.2, 0.8 GiB. The constant is their mean, 1.0; the
    # all-reduce coefficient is 0 (no row measures it). Leaving c out, (1 + 1 + 0.8) / 3 misses 1.2 by 4/15; leaving d
    # out (1 + 1 + 1.2) / 3 misses 0.8 by 4/15; a and b by 0: rank ⌈4 × 0.9⌉ = 4, the largest, 4/15 GiB.
    rows = [((1.0, 0.0), 1.0), ((1.0, 0.0), 1.0), ((1.0, 0.0), 1.2), ((1.0, 0.0), 0.8)]
    fit = fit_term("vllm.non_torch.v06", FEATURES, rows, origins=[RowOrigin(source=s) for s in "abcd"])
    assert fit.feature_sources == (4, 0) and fit.unseen_error_bytes == 0
    assert fit.coefficients == pytest.approx((1.0, 0.0), abs=1e-6)
    assert fit.error_bytes / GIB == pytest.approx(4 / 15, abs=1e-6)
    # another era measured the all-reduce at 2.0 GiB (three sources carried it): the plan at TP > 1 misses that part
    # here, so its error is the larger of the part measured there (2.0 × 1) and the term's own value (1.0): 2.0 GiB
    other = LinearTerm(key="vllm.non_torch.v0", features=FEATURES, coefficients=(0.1, 2.0), error_bytes=GIB // 10,
                       records=12, sources=12, feature_sources=(12, 3))  # fmt: skip
    fits = {fit.key: fit, other.key: other}
    at_tp8 = widened(_estimate(fit, (1.0, 1.0)), fits, INPUTS)
    assert at_tp8.error_bytes == pytest.approx(2 * GIB, abs=2)
    # in words: the term's label and the release of its era (the plan's, here the latest), never the fit's key
    assert at_tp8.beyond == "no record of non-torch at the latest release with '1 GiB when the custom all-reduce runs'"
    assert PreloadEstimate(engine="vllm", terms=(at_tp8,)).beyond_support == (at_tp8.beyond,)
    # without another fit, the term's own value: 1.0 GiB
    assert widened(_estimate(fit, (1.0, 1.0)), {fit.key: fit}, INPUTS).error_bytes == pytest.approx(GIB, abs=2)
    # at TP 1 the plan uses only what every source carried: unchanged
    at_tp1 = _estimate(fit, (1.0, 0.0))
    assert widened(at_tp1, fits, INPUTS) == at_tp1


def test_a_feature_one_source_carried_widens_to_the_error_without_it() -> None:
    # ten sources at 1.0 GiB without the all-reduce, one (k) at 3.0 with it: the fit is 1.0 + 2.0 × all-reduce. Leaving
    # any of the ten out misses by 0, leaving k out misses its row by 3.0 − 1.0 = 2.0 (the fit without it never saw the
    # feature); 11 sources, rank ⌈11 × 0.9⌉ = 10: the 10th smallest, 0. The rows no other source shares a feature with
    # are k's: its 2.0 GiB miss is the error of a plan the feature rests on one source for.
    rows = [*[((1.0, 0.0), 1.0)] * 10, ((1.0, 1.0), 3.0)]
    fit = fit_term("vllm.non_torch.v06", FEATURES, rows, origins=[RowOrigin(source=s) for s in "abcdefghijk"])
    assert fit.coefficients == pytest.approx((1.0, 2.0), abs=1e-6)
    assert fit.feature_sources == (11, 1)
    assert fit.error_bytes / GIB == pytest.approx(0.0, abs=1e-6)
    assert fit.unseen_error_bytes / GIB == pytest.approx(2.0, abs=1e-6)
    at_tp8 = widened(_estimate(fit, (1.0, 1.0)), {fit.key: fit}, INPUTS)
    assert at_tp8.error_bytes / GIB == pytest.approx(2.0, abs=1e-6)
    assert at_tp8.beyond == ("one source only of non-torch at the latest release with '1 GiB when the custom all-reduce "
                             "runs'")  # fmt: skip
    assert widened(_estimate(fit, (1.0, 0.0)), {fit.key: fit}, INPUTS).beyond is None


def test_a_fit_of_one_source_asks_no_second_source_of_its_features() -> None:
    # a GPU's CUDA total logged by one source: its one feature carried by that source is all the fit has
    fit = LinearTerm(key="cuda_total.L4", features=("1 GiB",), coefficients=(22.0,), error_bytes=GIB // 8, records=1,
                     sources=1, feature_sources=(1,))  # fmt: skip
    estimate = _estimate(fit, (1.0,))
    assert widened(estimate, {fit.key: fit}, INPUTS) == estimate


def test_the_committed_v06_all_reduce_rests_on_one_source() -> None:
    # tests/data/calibration/vllm.jsonl: the one pre-0.7 start at TP > 1 on NVLink is issue 10702's Llama-3.1-70B at TP 8
    # on H200 (v0.6.4.post1), which printed non_torch_memory=5.68 GiB. Part of it is NCCL's NVLS buffers, which kvtop
    # sizes by code and takes off the logged figure before fitting (nvls_buffers.py, docs/engines/vllm.md §2): NCCL
    # 2.21.5 (torch 2.5.1's pin) with 24 channels × 2 × (1 MiB buffer + 2 MiB) × 8 heads = 1,152 MiB, held as 1,536 MiB
    # at the 512 MiB multicast granularity; one communicator, as V0 chunks prefill at 512 tokens above a 32K context
    # (131,072 here) and 512 × 8,192 hidden × 2 B = 8 MiB is not above the custom all-reduce's 8 MiB max_size, so the
    # torch communicator is never made. The fit sees 5.68 − 1.5 = 4.18 GiB; the other five v06 starts (TP 1) give the
    # constant: three at 0.266667 GiB on average (0.80 GiB together) and, since session 50, the RTX 3090 Qwen2.5-7B
    # (file62352993850: non_torch_memory 0.10 GiB) and the Colab T4 Qwen2.5-0.5B (file69421856836: 0.11 GiB), so
    # (0.80 + 0.10 + 0.11) / 5 = 0.202 GiB, and the fit without 10702 predicts 0.202 there: a miss of 4.18 − 0.202 =
    # 3.978 GiB (5.41 before the NVLS buffers were sized), the error a plan at v0.6 with the custom all-reduce takes, named.
    nvls = -(-24 * 2 * (1 + 2) * 8 // 512) * 512 / 1024  # GiB
    assert nvls == 1.5
    fit = FITS["vllm.non_torch.v06"]
    assert fit.feature_sources == (5, 1)
    assert fit.unseen_error_bytes / GIB == pytest.approx(5.68 - nvls - (0.80 + 0.10 + 0.11) / 5, abs=0.01)
    model = load_config_file(CONFIGS / "meta-llama--Llama-3.1-70B-Instruct.json")
    settings = parse_flags("vllm", ["--engine-version", "0.6.4.post1", "--tensor-parallel-size", "8"])
    plan = planned_capacity(model, settings, gpu_total_bytes=gpu_total_bytes("H200"), gpu_name="H200")
    term = plan.estimate.term(Term.NON_TORCH)
    # the fit passes through 10702's remainder (its one source of the feature) and the plan adds the buffers back
    assert term is not None and term.bytes / GIB == pytest.approx(5.68, abs=0.001)
    assert term.error_bytes / GIB == pytest.approx(3.978, abs=0.01)
    assert term.beyond == ("one source only of vLLM's non-torch memory at 0.6.4.post1 with '1 GiB when the custom "
                           "all-reduce runs (TP > 1 on NVLink GPUs)'")  # fmt: skip
    assert term.beyond in plan.beyond_support
