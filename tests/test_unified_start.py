"""What a unified-memory host takes while vLLM starts (unified_start.py): its non-torch memory is measured from the
kernel's available memory from v0.11.1 (mem_utils.py:86-102 at v0.11.1, `MemorySnapshot.measure` :134-159 at
v0.24.0), so the host's growth meanwhile is in it; v0.11.0 reads cudaMemGetInfo. Its span widens the term's error;
its centre is not moved."""

from __future__ import annotations

import math

from benchmarks.calibration.corpus import load
from benchmarks.calibration.unified import start_excess
from kvtop.domain.calibration.terms import RUNTIME_TERMS, Term
from kvtop.domain.calibration.unified_start import (
    UNIFIED_START_ERROR_BYTES,
    UNIFIED_START_KEY,
    committed_unified_start,
)
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.vllm.calibration import _committed
from kvtop.domain.gpus import gpu_key
from kvtop.domain.wording import GIB

VLLM = {record.id: record for record in load("vllm")}
FITS = _committed()


def _non_torch(
    record_id: str, gpu: str | None = None, version: str | None = None, *, charged: bool = True
) -> tuple[int, int]:
    """The record's non-torch term, (bytes, error) (on `gpu`, at `version`'s release: a corpus record's), with the
    committed fits (`charged`) or without the host's take."""
    inputs = VLLM[record_id].inputs()
    update: dict[str, object] = {}
    if gpu is not None:
        update["gpu_name"] = gpu
    if version is not None:
        update["version"] = VLLM[version].version
    fits = FITS if charged else {key: fit for key, fit in FITS.items() if key != UNIFIED_START_KEY}
    terms = engine_rules("vllm").calibration.terms(inputs.model_copy(update=update), fits)
    found = next(t for t in terms if t.term is Term.NON_TORCH)
    return found.bytes, found.error_bytes


def test_the_host_take_is_charged_where_the_release_reads_the_available_memory() -> None:
    """The same launch (tennsoku's 7B start at v0.24.0 on a GB10) takes the committed span into the fitted non-torch
    term's error, as independent errors add (the root of squares), its bytes unmoved; at v0.11.0 (cudaMemGetInfo's
    free, vllm/utils/__init__.py:2734) and on a card of its own (an H100) it takes nothing."""
    record = "tennsoku-qwen2.5-7b-instruct-gb10-v0240dev-u025-len8192"
    (charged, error), (bare, bare_error) = _non_torch(record), _non_torch(record, charged=False)
    assert charged == bare and abs(error - math.hypot(bare_error, UNIFIED_START_ERROR_BYTES)) <= 1
    assert _non_torch(record, gpu="H100") == _non_torch(record, gpu="H100", charged=False)
    at_0110 = "unboundedlab-qwen3-30b-a3b-gptq-int4-gb10-v0110-u022-len32768"
    assert _non_torch(record, version=at_0110) == _non_torch(record, version=at_0110, charged=False)
    fit = committed_unified_start()
    assert fit is not None and fit.key == UNIFIED_START_KEY and fit.error_bytes == UNIFIED_START_ERROR_BYTES


def test_a_starts_excess_is_what_its_log_left_beyond_the_plans_runtime_terms() -> None:
    """tennsoku's Qwen2.5-7B start at 0.25 of T = 119.70 GiB (kvtop's GB10 row; its log prints no total): 'Model
    loading took 14.29 GiB memory', 'Available KV cache memory: 13.11 GiB': 0.25 × 119.70 − 14.29 − 13.11 = 2.525 GiB
    beside weights and KV; less the plan's runtime terms without the host's take, the excess (two decimals of the
    log: ± 0.01 GiB each, and the tokens in whole blocks)."""
    record = VLLM["tennsoku-qwen2.5-7b-instruct-gb10-v0240dev-u025-len8192"]
    without = {key: fit for key, fit in FITS.items() if key != UNIFIED_START_KEY}
    terms = engine_rules("vllm").calibration.terms(record.inputs(), without)
    runtime = sum(t.bytes for t in terms if t.term in RUNTIME_TERMS)
    excess = start_excess(record, FITS)
    assert excess is not None
    assert abs(excess - (round(0.25 * 119.70 * GIB) - round(14.29 * GIB) - round(13.11 * GIB) - runtime)) < 0.03 * GIB


def test_no_excess_where_nothing_profiled_or_the_release_reads_cudas_free() -> None:
    """`--kv-cache-memory-bytes` sets the KV with no profile (gpu_worker.py:412-430 at v0.24.0); v0.11.0 reads
    cudaMemGetInfo's free; an H100 is a card of its own."""
    assert start_excess(VLLM["file69451615416-qwen2.5-1.5b-gb10-ngc2608-v0271-kvbytes6gib-bs64"], FITS) is None
    assert start_excess(VLLM["unboundedlab-qwen3-30b-a3b-gptq-int4-gb10-v0110-u022-len32768"], FITS) is None
    assert gpu_key(VLLM["tennsoku-qwen3-8b-gb10-v0240dev-u025-len8192"].gpu) == "GB10"


def test_a_reading_outside_the_corpus_lies_inside_the_committed_span() -> None:
    """A vLLM 0.27.1 GB10 start of Qwen3-0.6B at 0.6 (search-index id 69198182448): 'Actual usage is 3.35 GiB for
    consumed memory (weights + non-torch)' beside 1.12 GiB of weights (the checkpoint's load on a GB10, tennsoku's
    'Model loading took 1.12 GiB'): 2.23 GiB of non-torch memory on unified memory, where the fitted growth of a card
    of its own at TP 1 is under 0.5 GiB: inside the committed span."""
    non_torch = round(3.35 * GIB) - round(1.12 * GIB)
    assert non_torch < UNIFIED_START_ERROR_BYTES
    assert FITS["vllm.non_torch.v18"].coefficients[0] < 0.5
