"""SGLang on a unified-memory host (DGX Spark / GB10): CUDA's total, the host's share, and the fixed Mamba slots.

Expected figures are the logs' (CoralLeiCN/DGXSpark-Small-LLMs, one idle DGX Spark, SGLang 0.5.18-era dev build,
kernel 6.17.0-1031-nvidia; tests/data/calibration/sglang.jsonl `coralleicn-dgxspark-*`): 'Failed to get GPU memory
capacity from nvidia-smi. Falling back to torch.cuda.mem_get_info(). Reported total GPU memory per device (MiB):
[124610]' (SGLang's `_cuda_mem_fallback`, srt/utils/common.py at 0.5.18: nvidia-smi prints no memory on GB10, so the
total is cudaMemGetInfo's, the host's memory); 'weight usage of 29.11 GB (114.09 to 84.98 GB free)' (RUN-0005, the
free memory SGLang sizes from, read after its CUDA context: `pre_model_load_memory`, srt/distributed/bootstrap.py
:132-137); 'Mamba Cache is allocated. max_mamba_cache_size: 360, conv_state size: 0.99GB, ssm_state size: 50.77GB',
'KV Cache is allocated. #tokens: 228520' (RUN-0006); 'mem usage=21.90 GB' (RUN-0001) and '20.63 GB reported weight
allocation' (RUN-0013), the NVFP4 checkpoint's weights in two starts. SGLang logs GiB as "GB".
"""

from __future__ import annotations

from benchmarks.calibration.corpus import Record
from kvtop.domain.calibration.estimate import CapacityPlan, planned_capacity
from kvtop.domain.calibration.gpu_totals import UNIFIED_TOTAL_ERROR_BYTES
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.wording import GIB, MIB
from tests.calibration_fits import CORPUS, ONE_WORKER, corpus_fits

pytestmark = ONE_WORKER  # its fits are tests/calibration_fits.py's: made once per run

RECORDS = {record.id: record for record in CORPUS["sglang"]}
FP8 = RECORDS["coralleicn-dgxspark-qwen3.8-27b-fp8-gb10-sglang0518dev-m045-mamba16-bf16state"]
SLOTS_360 = RECORDS["coralleicn-dgxspark-qwen3.8-27b-nvfp4-gb10-sglang0518dev-m070-mamba360-c72"]
PRINTED_TOTAL = 124_610 * MIB  # 'Reported total GPU memory per device (MiB): [124610]'


def _plan(record: Record, measured: MeasuredInputs | None = None) -> CapacityPlan:
    assert record.model is not None
    return planned_capacity(record.model, record.settings, gpu_total_bytes=PRINTED_TOTAL, gpu_name="GB10",
                            measured=measured or MeasuredInputs(), fits=corpus_fits(record.source))  # fmt: skip


def test_the_total_sglang_printed_on_a_newer_spark_lies_in_the_gb10_rows_span() -> None:
    """121.69 GiB (kernel 6.17 hosts) against the row's 119.70 (hosts of late 2025): 2,037 MiB apart, inside the
    row's ± 2 GiB, so a plan typed `--gpu GB10` holds both hosts' totals."""
    assert FP8.gpu_total_bytes == PRINTED_TOTAL
    assert 0 < PRINTED_TOTAL - gpu_total_bytes("GB10") <= UNIFIED_TOTAL_ERROR_BYTES


def test_the_free_memory_before_load_takes_the_host_share_once_and_holds_the_logged_figure() -> None:
    """The share's readings hold the engine's own context (read after it), so the free memory planned before the
    load is the total less the share alone, the context within it: 121.69 GiB × (1 − the centre of the span of the
    readings of the kernel's available memory, 5.74 and 22.8 GiB held of 121.69: 4.72 % – 18.74 %), not that less
    the context again. The idle Spark's logged 114.09 GiB free (7.60 GiB held, its context in it) lies inside the
    share's span and above its centre (this host held less than the centre)."""
    plan = _plan(FP8)
    estimate = plan.estimate
    total, context, host = (estimate.term(term) for term in (Term.CUDA_TOTAL, Term.CONTEXT, Term.HOST))
    assert total is not None and context is not None and host is not None
    assert total.bytes == PRINTED_TOTAL
    assert context.in_host_share and context.error_bytes == 0 and context.bytes > 0
    low, high = 5.74 / 121.69, 22.8 / 121.69
    free = plan.ledger.measured.calibrated.free_before_load_bytes if plan.ledger.measured.calibrated else None
    assert free is not None and abs(free / GIB - 121.69 * (1 - (low + high) / 2)) < 0.01
    assert free == total.bytes - host.bytes  # one figure for what the host holds: the term whole
    assert free - host.error_bytes <= 114.09 * GIB <= free + host.error_bytes
    assert host.bytes - host.error_bytes <= (121.69 - 114.09) * GIB < host.bytes


def test_the_360_slot_start_is_the_remainder_after_the_logged_mamba_state() -> None:
    """--max-mamba-cache-size 360 fixes the state (361 slots with the padding one) at the logged 0.99 + 50.77 GB,
    so the KV budget is what 0.70 of the free memory leaves after the weights and that: a thin remainder, which the
    host's share (± 8.54 GiB) and the weights move by 22,938 and 32,768 tokens a GiB. Given the same Spark's idle free
    memory (114.09 GiB), the plan brackets the logged 228,520 tokens between the NVFP4 checkpoint's two logged loads
    (20.63 GB: above; 21.90 GB: below): no workspace beyond them is missing."""
    blind = _plan(SLOTS_360)
    state = next(step for step in blind.ledger.engine.steps if "linear-attention state" in step.label)
    assert abs(-state.bytes / GIB - (0.99 + 50.77)) < 0.01
    assert blind.token_capacity_min <= SLOTS_360.tokens <= blind.token_capacity_max

    def given(weights_gib: float) -> int:
        measured = MeasuredInputs(free_before_load_bytes=round(114.09 * GIB), weights_bytes=round(weights_gib * GIB))
        return _plan(SLOTS_360, measured).ledger.token_capacity

    light, heavy = given(20.63), given(21.90)
    assert heavy < SLOTS_360.tokens < light
    assert abs((light - heavy) - round((21.90 - 20.63) * 32_768)) < 64  # 32,768 fp8 tokens a GiB (page 1)


def test_the_context_held_in_the_share_says_its_error_is_the_shares() -> None:
    """Inside the host's share the context carries no error of its own (0: the share's span holds it), so its basis
    does not say '± 1.25 GiB: how far …' as if that were its width: it says the error is within the share's span
    (FR2 #6). 1.25 GiB is the assumed context's held-out error (features.ASSUMED_CONTEXT_ERROR_GIB's fit)."""
    context = next(term for term in _plan(FP8).estimate.terms if term.term is Term.CONTEXT)
    assert (context.error_bytes, context.source) == (0, "assumed")
    assert "; its error within the share's span (± " in context.basis
    assert "; ± " not in context.basis
