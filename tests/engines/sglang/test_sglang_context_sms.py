"""SGLang's context by the GPU's resident threads, and the error of the TP group's feature group.

What a CUDA context reserves grows with the GPU's resident threads (the local memory of every resident thread's stack,
which the driver grows to what the kernels loaded need: CUDA driver API, cuCtxSetLimit CU_LIMIT_STACK_SIZE), so the
context's constant is a part per 100 SMs of 2,048 threads (kvtop/domain/calibration/features.py `sm_tp_features`).
Expected values: SM counts from NVIDIA's datasheets (L4 58, H20 78), threads per SM from the CUDA C++ Programming
Guide's table (1,536 at compute capability 8.9, 2,048 at 9.0), and QwQ-32B on 4 × L4 (file47376055009): CUDA's L4 total as its logs print
it (22.03–22.04 GiB, tests/data/calibration/gpus.jsonl) less `Load weight begin. avail mem=21.63 GB`.
"""

from __future__ import annotations

import pytest

from benchmarks.calibration.evaluate import observed
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.sglang.calibration import FITS, context, context_features
from kvtop.units import GIB
from tests.calibration_fits import CORPUS, ONE_WORKER, corpus_fits

pytestmark = ONE_WORKER  # its fits are tests/calibration_fits.py's: made once per run

BY_ID = {record.id: record for record in CORPUS["sglang"]}
L4_TP4 = "file47376055009-qwq-32b-4xl4-tp4"


def test_features_are_the_threads_and_the_tp_group() -> None:
    """4 × L4 over PCIe: 58 SMs of 1,536 threads (58 × 1536 ÷ 204,800 = 0.435), 2 doublings of TP on PCIe; 8 × H20
    over NVLink: 78 SMs of 2,048 threads (0.78), 3 doublings on NVLink."""
    assert context_features(BY_ID[L4_TP4].inputs()) == (pytest.approx(0.435), 0.0, 2.0)
    assert context_features(BY_ID["file54684172587-dsv4-flash-h20-tp8"].inputs()) == (0.78, 3.0, 0.0)


def test_a_gpu_of_unknown_sms_is_assumed_not_fitted() -> None:
    """No SM count in kvtop's GPU table (the A16; the A40 was until session 52): the fit cannot be read, the context is a stated assumption."""
    inputs = BY_ID[L4_TP4].inputs().model_copy(update={"gpu_name": "NVIDIA A16"})
    assert context_features(inputs) is None
    assert context(inputs).source == "assumed"


def test_the_l4_start_s_context_is_planned_within_its_group_s_error() -> None:
    """The L4 start printed 21.63 GiB free before its weights: its context is CUDA's total of an L4 (the mean of the
    totals the corpus's L4 logs printed, 22.03-22.17 GiB: 22.035 on two logs until session 52's Colab L4 starts) less
    that; the fit that left it out plans it within the held-out error of the PCIe TP group's starts."""
    record = BY_ID[L4_TP4]
    fits = corpus_fits(record.source)
    measured = observed(record, Term.CONTEXT, fits)
    total = fits["cuda_total.L4"].coefficients[0]
    assert 22.03 <= total <= 22.17
    assert measured is not None and measured / GIB == pytest.approx(total - 21.63, abs=0.01)
    planned = context(record.inputs(), fits)
    assert planned.source == "calibrated"
    assert abs(planned.bytes - measured) <= planned.error_bytes


def test_a_tp_group_over_nvlink_carries_its_group_s_error() -> None:
    """GB300 at TP 4 over NVLink: its context's error is what NVLink TP starts missed by held out, wider than the
    pool's, which TP 1 starts mostly set."""
    fit = FITS["sglang.context"]
    groups = dict(fit.group_errors)
    nvlink = groups["100 SMs of 2,048 threads + log2(TP) on NVLink GPUs"]
    record = BY_ID["file54518494325-deepseek-r1-0528-nvfp4-v2-gb300-tp4"]
    assert context(record.inputs()).error_bytes == nvlink > fit.error_bytes


def test_a_tp_group_over_two_nodes_counts_its_nvlink_doublings_within_a_node() -> None:
    """DeepSeek-R1 at TP 16 over two 8 × H100 nodes (`--nnodes 2`, slurmv4's prefill and decode servers): NVLink
    joins the 8 GPUs of a node and SGLang builds no custom all-reduce for a group across nodes (custom_all_reduce.py
    :83-87 at 0.5.8), so 3 NVLink doublings, not log2(16) = 4; 132 SMs. The starts printed `Load weight begin. avail
    mem=77.47 / 77.49 GB` of CUDA's H100 total: 1.70–1.72 GiB, below what the fit gave four doublings (2.27); 132 SMs
    of 2,048 threads: 1.32."""
    for record_id in ("slurmv4-deepseek-r1-16xh100-tp16-2nodes-pd-prefill-v058",
                      "slurmv4-deepseek-r1-16xh100-tp16-2nodes-pd-decode-v058post1"):  # fmt: skip
        assert context_features(BY_ID[record_id].inputs()) == (1.32, 3.0, 0.0)


def test_the_basis_says_what_a_group_over_nodes_counts() -> None:
    """The same slurmv4 start's context: its basis says the group (TP 16 over 2 nodes) and what the fit counted of it,
    8 GPUs a node on NVLink, log2(16 ÷ 2) = 3 doublings, never a bare "TP 16"."""
    found = context(BY_ID["slurmv4-deepseek-r1-16xh100-tp16-2nodes-pd-prefill-v058"].inputs())
    assert found.source == "calibrated"
    assert found.basis.endswith("TP 16 over 2 nodes, counted as 8 GPUs a node on NVLink (3 doublings: no custom "
                                "all-reduce across nodes)")  # fmt: skip
    assert ": TP 16" not in found.basis.replace("TP 16 over", "")


@pytest.mark.parametrize(("tp", "pp", "doublings", "words"), [
    (8, 2, 3.0, None),  # each stage's TP 8 on its own node of 8: log2(8 // max(2 // 2, 1)) = 3
    (8, 1, 2.0, "TP 8 over 2 nodes, counted as 4 GPUs a node on NVLink (2 doublings: no custom all-reduce across nodes)"),
])  # fmt: skip
def test_a_pipeline_stage_s_tp_group_over_nodes_is_sglang_s_own_split(
    tp: int, pp: int, doublings: float, words: str | None
) -> None:
    """SGLang gives each pipeline stage its own nodes (srt/entrypoints/engine.py `_launch_subprocesses`:
    `nnodes_per_tp_group = max(nnodes // pp_size, 1)`, `tp_size_per_node = tp_size // nnodes_per_tp_group`): TP 8 PP 2
    over 2 nodes keeps each TP group on one node, so 3 NVLink doublings as on one node. The planner's edit of the demo
    node to TP 8 PP 2 (placed over 2 nodes) had counted 4 GPUs a node: 8,045,432 tokens against `plan`'s 7,995,691
    (session 72's operator pass). The slurmv4 start's H100 inputs (132 SMs of 2,048 threads: 1.32), its layout edited."""
    inputs = BY_ID["slurmv4-deepseek-r1-16xh100-tp16-2nodes-pd-prefill-v058"].inputs()
    inputs = inputs.model_copy(update={
        "layout": inputs.layout.model_copy(update={"tp": tp, "pp": pp}),
        "settings": inputs.settings.model_copy(update={"tp": tp, "pp": pp}),
    })  # fmt: skip
    assert context_features(inputs) == (1.32, doublings, 0.0)
    basis = context(inputs).basis
    assert (words is None and "over 2 nodes" not in basis) or (words is not None and basis.endswith(words)), basis
