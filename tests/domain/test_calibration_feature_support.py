"""A plan that uses a feature its fit never measured (no row carried it, or one source's rows only) widens and says so.

Every expected figure below is the least-squares arithmetic done by hand in the comments, not read off the code.
"""

from __future__ import annotations

import pytest

from kvtop.domain.calibration.cuda_context import CUDA_CONTEXT_FITS, CUDA_CONTEXT_KEY
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


def test_the_committed_v0_all_reduce_rests_on_two_sources() -> None:
    # tests/data/calibration/vllm.jsonl: the one pre-0.7 start at TP > 1 on NVLink is issue 10702's Llama-3.1-70B at TP 8
    # on H200 (v0.6.4.post1), which printed non_torch_memory=5.68 GiB. Its premise moved in session 51: v0.6.4's figure
    # holds the worker's CUDA context (worker.py:206-213 at v0.6.4 and v0.6.4.post1: total − free − torch's allocated
    # bytes), so it is no row of the growth fits and is planned as the growth from the worker's init (the `v0` fit,
    # v0.6.5's and v0.7's form) plus one process's context (`cuda_context.py`). The `v0` fit's custom all-reduce part
    # rested on one source until session 52 added a second V0 start at TP > 1 on NVLink (Dynamo's vLLM 0.7.2 at TP 8 on
    # A100, ai-dynamo/dynamo#787). Part of the figure is NCCL's NVLS
    # buffers, which kvtop sizes by code (nvls_buffers.py, docs/engines/vllm.md §2): NCCL 2.21.5 (torch 2.5.1's pin)
    # with 24 channels × 2 × (1 MiB buffer + 2 MiB) × 8 heads = 1,152 MiB, held as 1,536 MiB at the 512 MiB multicast
    # granularity; one communicator, as V0 chunks prefill at 512 tokens above a 32K context (131,072 here) and 512 ×
    # 8,192 hidden × 2 B = 8 MiB is not above the custom all-reduce's 8 MiB max_size. The plan's figure, summed here by
    # hand from the committed coefficients: growth constant + all-reduce part + 1.5 GiB + context per 100 SMs of 2,048 threads × 1.32.
    nvls = -(-24 * 2 * (1 + 2) * 8 // 512) * 512 / 1024  # GiB
    assert nvls == 1.5
    growth = FITS["vllm.non_torch.v0"]
    assert growth.feature_sources[1] == 2
    context = CUDA_CONTEXT_FITS[CUDA_CONTEXT_KEY].coefficients[0] * 132 / 100
    model = load_config_file(CONFIGS / "meta-llama--Llama-3.1-70B-Instruct.json")
    settings = parse_flags("vllm", ["--engine-version", "0.6.4.post1", "--tensor-parallel-size", "8"])
    plan = planned_capacity(model, settings, gpu_total_bytes=gpu_total_bytes("H200"), gpu_name="H200")
    term = plan.estimate.term(Term.NON_TORCH)
    assert term is not None
    assert term.bytes / GIB == pytest.approx(sum(growth.coefficients) + nvls + context, abs=0.001)
    # With two sources the part is no longer widened as one source's, and the log's 5.68 GiB lies 1.46 GiB above the
    # plan, outside its interval: this start is among the corpus's uncovered records (tests/test_calibration_corpus.py),
    # its printed ranks being workers that skip the sampler (docs/engines/vllm.md): not a figure to tune the part to.
    # The gap moves only with the one-process context fit (the v0 growth, 0.112 + 1.988 GiB, and the 1.5 GiB of NVLS
    # buffers are fixed): about 1.46 GiB at a context of ~0.47 GiB per 100 SMs of 2,048 threads (sessions 54-55).
    assert 5.68 - term.bytes / GIB == pytest.approx(1.46, abs=0.05)
    assert abs(5.68 - term.bytes / GIB) > term.error_bytes / GIB
