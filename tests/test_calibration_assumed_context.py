"""The assumed context's error: how far the context the engines' logs measured fell from the assumption
(0.75 GiB + 0.75 GiB per doubling of TP), never the capacity misses of the records an assumed term is judged on
(docs/calibration.md, docs/engines/lmdeploy.md §15.3)."""

from __future__ import annotations

import pytest

from benchmarks.calibration.corpus import load_all
from benchmarks.calibration.evaluate import assumed_context_fits, context_misses, cuda_total_fits
from kvtop.domain.calibration.features import (
    ASSUMED_CONTEXT_ERROR_GIB,
    ASSUMED_CONTEXT_ERROR_KEY,
    ASSUMED_CONTEXT_RECORDS,
    ASSUMED_CONTEXT_SOURCES,
)

CORPUS = load_all()
TOTALS = cuda_total_fits(CORPUS)
MISSES = {record.id: miss for record, miss in context_misses(CORPUS, TOTALS)}


def test_a_start_that_prints_its_total_and_free_memory_measures_the_miss() -> None:
    # the L40S start (search-index 57621177671, SGLang 0.5.16, TP 1) prints CUDA's total 44.53 GiB and 44.02 GiB free
    # before the load: a context of 0.51 GiB where 0.75 is assumed at TP 1, a miss of 0.24 GiB
    assert MISSES["file57621177671-medgemma-27b-fp8-l40s"] == pytest.approx(0.24, abs=1e-6)


def test_a_slice_whose_printed_total_is_cudas_own_measures_the_miss_from_that_total() -> None:
    # the HAMi start (markat1/course-assistant, SGLang 0.5.20, a 38,000 MiB memory limit on an H100 SXM, no GPU model
    # named: `gpu_total_is_cuda`) prints 'avail mem=36.60 GB' before the load: hami-core reports the limit as CUDA's
    # total, so the context is 38,000 MiB (37.109 GiB) less 36.60 GiB, 0.51 GiB, where 0.75 is assumed at TP 1: a miss
    # of 0.24 GiB (read from the record's own total, as the judge's plan reads it: `Record.host_measured`)
    assert MISSES["markat1-course-assistant-qwen3-8b-hami38000-h100sxm-v0520"] == pytest.approx(
        abs(38_000 / 1024 - 36.60 - 0.75), abs=1e-6
    )


def test_hosts_that_hold_memory_of_their_own_and_lmdeploy_leave_no_miss() -> None:
    # the DGX Spark start (unified memory: the host's 49.8 GiB are in its 'context') and the desktop starts are not the
    # engine's context; no LMDeploy log prints a free memory, so none of its records measures it
    ids = {record.id: record for records in CORPUS.values() for record in records}
    spark = "case-trtllm-dgxspark-gpt-oss-120b"
    assert spark in ids and spark not in MISSES
    desktops = [record for record in ids.values() if record.desktop and record.engine != "lmdeploy"]
    assert desktops and not any(record.id in MISSES for record in desktops)
    assert not any(ids[found].engine == "lmdeploy" for found in MISSES)


def test_the_committed_error_is_the_corpus_quantile_and_lmdeploys_records_do_not_move_it() -> None:
    fit = assumed_context_fits(CORPUS, TOTALS)[ASSUMED_CONTEXT_ERROR_KEY]
    assert (fit.coefficients[0], fit.records, fit.sources) == (
        ASSUMED_CONTEXT_ERROR_GIB, ASSUMED_CONTEXT_RECORDS, ASSUMED_CONTEXT_SOURCES
    )
    others = {engine: records for engine, records in CORPUS.items() if engine != "lmdeploy"}
    assert assumed_context_fits(others, TOTALS)[ASSUMED_CONTEXT_ERROR_KEY] == fit
    # wider than the 0.75 GiB stated until session 46: the largest misses were SGLang's TP 4 starts across PCIe and
    # vLLM's TP 8 on L40S (0.4–0.5 GiB measured where 2.25 and 3 GiB are assumed), TensorRT-LLM's 3.0 GiB at TP 1
    assert ASSUMED_CONTEXT_ERROR_GIB > 0.75
    # QwQ-32B's 4 × L4 start misses by at least the quantile (since session 51 it is the quantile's own row; the
    # committed figure is rounded to 3 decimals)
    assert MISSES["file47376055009-qwq-32b-4xl4-tp4"] >= ASSUMED_CONTEXT_ERROR_GIB - 0.0005
