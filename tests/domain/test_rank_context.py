"""One context per rank (stop 37): what a rank holds before its weights (CUDA context, NCCL) is one figure,
`MeasuredInputs.context_before_load`, read by the ledger's ranks, a restart's arithmetic (`start_overhead`)
and the demo's simulated workers. vLLM's budget reads no free memory before load, so its ranks used to hold a
flat 1 GiB while the demo's workers (and diagnose) held the engine's calibrated context: 1,648,960,352 B at
TP8 × PP2, 0.52 GiB a rank shown "unexplained" on the PP2 demo nodes. Expected figures are the fit's
arithmetic by hand: `vllm.context` = c0 + c1 × [TP × PP > 1] + c2 × [MoE and TP > 1] GiB (coefficients
imported from the committed fit, docs/calibration.md)."""

from __future__ import annotations

from kvtop.commands.node_source import DemoSource
from kvtop.domain.calibration.estimate import calibrated_ledger
from kvtop.domain.calibration.gpu_totals import CUDA_TOTAL_FITS
from kvtop.domain.calibration.start_overhead import start_overhead
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.sglang.calibration import FITS as SGLANG_FITS
from kvtop.domain.engines.vllm.calibration import FITS as VLLM_FITS
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_model
from tests.ui.fakes import H100_NAME, H100_TOTAL_BYTES

C0, C1, C2 = VLLM_FITS["vllm.context"].coefficients


def test_the_vllm_pp2_demo_ranks_hold_the_calibrated_context_and_nothing_unexplained() -> None:
    """Llama-3-70B TP8 × PP2 (dense, several ranks): (c0 + c1) GiB on every rank, the worker's own."""
    expected = round((C0 + C1) * GIB)
    # 1,648,960,352 B with the fit of this stop (0.51 + 1.025714 GiB), the figure the demo's workers hold
    for scenario in ("llama70b-pp2-vllm-node0", "llama70b-pp2-vllm-node1"):
        (view,) = DemoSource.open(scenario).collect().engines
        assert view.ledger is not None and view.ledger.ranks[0].context_bytes == expected
        for rank in view.ranks:
            assert rank.predicted is not None and rank.predicted.context_bytes == expected
            # said as the estimate it is: calibrated, within the fit's held-out error (0.017 GiB)
            assert (rank.predicted.context_source, rank.predicted.context_error_bytes) == (
                "calibrated", VLLM_FITS["vllm.context"].error_bytes)  # fmt: skip
            # the demo's few MiB of noise at most; before, 0.52 GiB a rank (4.16 GiB on the node)
            assert rank.unexplained_bytes is not None and rank.unexplained_bytes < 64 << 20
        assert start_overhead(view.ledger).context_bytes == expected  # diagnose's restart reads the same


def test_a_vllm_rank_context_is_the_fit_by_layout_and_measured_where_measured() -> None:
    model = load_model("tests/data/configs/Qwen--Qwen3-30B-A3B.json")  # an MoE model

    def context(tp: int, measured: MeasuredInputs | None = None) -> tuple[int, str]:
        settings = LaunchSettings(engine="vllm", model="qwen3-30b-a3b", tp=tp)
        ledger = calibrated_ledger(model, settings, gpu_total_bytes=H100_TOTAL_BYTES, gpu_name=H100_NAME,
                                   measured=measured)  # fmt: skip
        return ledger.ranks[-1].context_bytes, ledger.measured.context_source()

    assert context(1) == (round(C0 * GIB), "calibrated")  # one rank: no NCCL, no all-to-all
    assert context(2) == (round((C0 + C1 + C2) * GIB), "calibrated")  # MoE across two TP ranks
    free = H100_TOTAL_BYTES - 3 * GIB  # a log's free memory before load: the total less 3 GiB
    assert context(2, MeasuredInputs(free_before_load_bytes=free)) == (3 * GIB, "measured")
    assert MeasuredInputs(free_before_load_bytes=free).context_error_bytes() == 0


def test_an_engine_that_reads_free_memory_before_load_holds_its_context_term_and_the_drivers_share_apart() -> None:
    """SGLang's budget reads the free memory before load (CUDA's total less its context): its rank's context is the
    fitted context (a0 per 100 SMs × the H100's 132 SMs + a1 × log2 TP), and nvidia-smi's total less CUDA's total
    (the committed fit's mean of logged H100 totals) is the driver's, its own field. Before, the rank's context was
    nvidia-smi's total less that free memory: both at once, beside the plan's context term."""
    model = load_model("tests/data/configs/meta-llama--Llama-3.1-70B-Instruct.json")
    settings = LaunchSettings(engine="sglang", model="llama-3.1-70b", tp=8)
    ledger = calibrated_ledger(model, settings, gpu_total_bytes=H100_TOTAL_BYTES, gpu_name=H100_NAME)
    a0, a1, *_ = SGLANG_FITS["sglang.context"].coefficients
    overhead = start_overhead(ledger)
    assert overhead.context_bytes == round((a0 * 1.32 + a1 * 3) * GIB)
    driver = H100_TOTAL_BYTES - round(CUDA_TOTAL_FITS["cuda_total.H100"].coefficients[0] * GIB)
    assert overhead.driver_bytes == driver
    assert (ledger.ranks[0].context_bytes, ledger.ranks[0].driver_reserved_bytes) == (overhead.context_bytes, driver)
    # its error is the fit's held-out error of the feature group a TP8 NVLink launch falls in (the plan's term's)
    groups = dict(SGLANG_FITS["sglang.context"].group_errors)
    assert ledger.ranks[0].context_error_bytes == groups["100 SMs of 2,048 threads + log2(TP) on NVLink GPUs"]
