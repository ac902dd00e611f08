"""What a unified-memory host takes while an engine that sizes from the total starts, which that engine charges as
its own non-torch memory (vLLM from v0.11.1 on GB10 / DGX Spark and Jetson).

vLLM's budget is total × `--gpu-memory-utilization` less what the worker measured beside the weights and KV while it
loaded and profiled: the non-torch increase is (total − free) − torch's reserve from the worker's first snapshot
(taken after the CUDA context and NCCL, v1/worker/gpu_worker.py:340-342 at v0.24.0) to the profile's end
(`MemorySnapshot.measure`, vllm/utils/mem_utils.py:134-159 at v0.24.0), and from v0.27.0 the drop in free memory
itself (`total_consumed`, mem_utils.py:317-326 at v0.27.1). On a unified device the free memory it reads there is
the kernel's available memory (`unified_free.py`: psutil's `virtual_memory().available` from v0.11.1), so every byte
the host's processes take in that window (the engine's own host-side growth while it loads, compiles and captures;
anything else running) is charged as the engine's non-torch memory, where on a card of its own only the device's
allocations are. kvtop's non-torch fits are of cards of their own; this is the rest, as such starts left it: what
each start left beside its weights (the log's, else the book's) and its KV (the logged GiB or tokens) beyond its
plan's runtime terms, with the total the plan takes. It is no property of the device, and no other host predicts it
(benchmarks/calibration/unified.py: a centre at the other sources' median did no better than none), so the centre is
not moved and the term's error takes it: the 90th percentile of those starts' distances from 0 (each source weighing
one), written by `benchmarks/calibration/run.py --write` and refitted without the judged source in the corpus's
judgement. Read outside the corpus, inside that span: a vLLM 0.27.1 GB10 start of Qwen3-0.6B at 0.6 ('Free memory
on device (114.54/121.69 GiB)', 'Actual usage is 3.35 GiB for consumed memory (weights + non-torch)', 69.4 GiB of
KV: 2.23 GiB beside its 1.12 GiB of weights; search-index id 69198182448).

Not charged: SGLang (it sizes from the free memory after the load; its one GB10 start's free memory fell by its
weights exactly across the load, 110.63 → 101.82 GiB beside 8.81 GiB of weights: yukimaru77-qwen3.5-4b-gb10-v059-mf08)
and TensorRT-LLM (no integrated case: the page cache is held, `host_memory.py`)."""

from __future__ import annotations

from collections.abc import Mapping

from kvtop.domain.calibration.linear import LinearTerm
from kvtop.domain.calibration.terms import TermEstimate
from kvtop.domain.gpus import is_unified
from kvtop.domain.wording import gib

UNIFIED_START_KEY = "unified.taken_during_start"
UNIFIED_START_FEATURES = ("bytes a unified-memory start left beside weights and KV beyond the plan's terms",)
# BEGIN FITTED unified start
UNIFIED_START_ERROR_BYTES = 11727273984  # 11184 MiB
UNIFIED_START_RECORDS = 34
# END FITTED


def unified_start_fit(error_bytes: int, records: int, sources: int) -> LinearTerm:
    """What such starts left beyond their plans as a fit: its one coefficient the centre, 0 (not moved), its error the
    half-width, as `run.py` fits it and the constants above hold it committed."""
    return LinearTerm(key=UNIFIED_START_KEY, features=UNIFIED_START_FEATURES, coefficients=(0.0,),
                      error_bytes=error_bytes, records=records, sources=sources)  # fmt: skip


def committed_unified_start() -> LinearTerm | None:
    """The committed fit (None where no start measured it: the plan charges nothing and says so)."""
    if not UNIFIED_START_RECORDS:
        return None
    return unified_start_fit(UNIFIED_START_ERROR_BYTES, UNIFIED_START_RECORDS, 0)


def with_unified_start(
    non_torch: TermEstimate, gpu_name: str | None, reads_available: bool, fits: Mapping[str, LinearTerm]
) -> TermEstimate:
    """The engine's non-torch term with what the host takes during the start in its error (its centre not moved),
    on a unified-memory device whose release reads the kernel's available memory (`reads_available`); as it was
    elsewhere, or where `fits` hold no such figure."""
    fit = fits.get(UNIFIED_START_KEY)
    if not reads_available or not is_unified(gpu_name) or fit is None:
        return non_torch
    why = (f"± {gib(fit.error_bytes)} for what the host takes during the start (unified memory: the engine reads the "
           "kernel's available memory, so the host's processes' growth while it loads and profiles counts as its "
           f"non-torch memory; not modelled at the centre, it moves from host to host: the span of {fit.records} "
           "such starts)")  # fmt: skip
    return non_torch.plus(0, fit.error_bytes, why=why, beside=True)
