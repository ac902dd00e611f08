"""The engine-log parser against every real case log in tests/data/cases, plus odd inputs.

The case test is parametrised over every non-null number under `logged` in each case.json and
asserts the parser recovers it at the precision the log printed. Numbers the log itself does not
contain (quoted only in a PR text or derived in case.json) are strict xfails saying so.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from kvtop.domain.engine_log import (
    EngineLog,
    Measured,
    RankKey,
    Rounded,
    first_over_ranks,
)
from kvtop.domain.engines.lmdeploy.log_records import LmdeployRankLog
from kvtop.domain.engines.registry import ENGINE_IDS
from kvtop.domain.engines.sglang.log_records import SglangRankLog
from kvtop.domain.engines.trtllm.log_records import TrtllmRankLog
from kvtop.domain.engines.vllm.log_records import VllmRankLog
from kvtop.domain.wording import GIB
from kvtop.sources.engine_logs import (
    parse_engine_log,
    read_engine_log,
)
from tests.data_paths import CASES


def _nth(items: tuple[Any, ...], index: int) -> Any:
    return items[index] if 0 <= index < len(items) else None


def _attr(items: tuple[Any, ...], index: int, name: str) -> Any:
    item = _nth(items, index)
    return None if item is None else getattr(item, name)


# case.json key -> what the parser gives for it on one rank (the first printed occurrence,
# except `draft`/`main_branch_run` figures, which are the second). Rank-keyed entries in case.json
# (C04 TP0/TP7/"TP1-6", C12 DP0-3) are read on that rank; every other number comes from the first
# rank, in RankKey order, that printed the line (unranked lines first: most excerpts carry none).
SGLANG_PICKS: dict[str, Callable[[SglangRankLog], Any]] = {
    "avail_mem_before_load_gb": lambda r: _attr(r.weight_loads, 0, "avail_before"),
    "weight_mem_usage_gb": lambda r: _attr(r.weight_loads, 0, "mem_usage"),
    "avail_mem_after_load_gb": lambda r: _attr(r.weight_loads, 0, "avail_after"),
    "kv_tokens": lambda r: _attr(r.kv_allocations, 0, "tokens"),
    "k_size_gb": lambda r: _attr(r.kv_allocations, 0, "k_size"),
    "v_size_gb": lambda r: _attr(r.kv_allocations, 0, "v_size"),
    "kv_size_gb_mla": lambda r: _attr(r.kv_allocations, 0, "kv_size"),
    "memory_pool_end_avail_gb": lambda r: _nth(r.memory_pool_end_avail, 0),
    "max_total_num_tokens": lambda r: _attr(r.scheduler_summaries, 0, "max_total_num_tokens"),
    "max_running_requests": lambda r: _attr(r.scheduler_summaries, 0, "max_running_requests"),
    "context_len": lambda r: _attr(r.scheduler_summaries, 0, "context_len"),
    "chunked_prefill_size": lambda r: _attr(r.scheduler_summaries, 0, "chunked_prefill_size"),
    "max_prefill_tokens": lambda r: _attr(r.scheduler_summaries, 0, "max_prefill_tokens"),
    "available_gpu_mem_gb": lambda r: _attr(r.scheduler_summaries, 0, "available_gpu_mem"),
    "other.avail_after_draft_load_gb": lambda r: _attr(r.weight_loads, 1, "avail_after"),
    "other.draft_weight_mem_usage_gb": lambda r: _attr(r.weight_loads, 1, "mem_usage"),
    "other.capture_cuda_graph_begin_avail_gb": lambda r: _attr(r.graph_captures, 0, "avail_before"),
    "other.capture_cuda_graph_begin_avail_gb_TP0": lambda r: _attr(r.graph_captures, 0, "avail_before"),
    "other.decode_cuda_graph_mem_usage_gb": lambda r: _attr(r.graph_captures, 0, "mem_usage"),
    "other.cuda_graph_mem_usage_gb": lambda r: _attr(r.graph_captures, 0, "mem_usage"),
    "other.conv_state_gb": lambda r: _attr(r.mamba_allocations, 0, "conv_state"),
    "other.ssm_state_gb": lambda r: _attr(r.mamba_allocations, 0, "ssm_state"),
    "other.max_mamba_cache_size": lambda r: _attr(r.mamba_allocations, 0, "max_mamba_cache_size"),
    "other.full_layer_tokens": lambda r: _attr(r.sliding_window_splits, 0, "full_layer_tokens"),
    "other.swa_layer_tokens": lambda r: _attr(r.sliding_window_splits, 0, "swa_layer_tokens"),
    "other.swakvpool_mem_usage_gb": lambda r: _attr(r.swa_pools, 0, "mem_usage"),
    "other.swa_size": lambda r: _attr(r.swa_pools, 0, "swa_tokens"),
    "other.full_size": lambda r: _attr(r.swa_pools, 0, "full_tokens"),
    "other.init_torch_distributed_mem_usage_gb": lambda r: _nth(r.init_dist_mem_usage, 0),
    "other.profiled_tokens": lambda r: _attr(r.profiled_token_overrides, 0, "profiled_tokens"),
    "other.maximum_allowed_length_tokens": lambda r: _nth(r.max_allowed_input_lengths, 0),
    # C09 concatenates two runs on the same rank: the main-branch run is the second pair printed.
    "other.main_branch_run.kv_tokens": lambda r: _attr(r.kv_allocations, 1, "tokens"),
    "other.main_branch_run.kv_size_gb": lambda r: _attr(r.kv_allocations, 1, "kv_size"),
    "other.main_branch_run.memory_pool_end_avail_gb": lambda r: _nth(r.memory_pool_end_avail, 1),
    "other.max_total_num_tokens_before_fix": lambda r: None,
    "other.max_total_num_tokens_after_fix": lambda r: None,
}
VLLM_PICKS: dict[str, Callable[[VllmRankLog], Any]] = {
    "model_loading_gib": lambda r: _attr(r.model_loading, 0, "memory"),
    "available_kv_cache_memory_gib": lambda r: _nth(r.available_kv_cache_memory, 0),
    "kv_cache_tokens": lambda r: _nth(r.kv_cache_tokens, 0),
    "max_concurrency": lambda r: _attr(r.max_concurrency, 0, "concurrency"),
    "max_concurrency_for_len": lambda r: _attr(r.max_concurrency, 0, "tokens_per_request"),
    "num_gpu_blocks": lambda r: _nth(r.num_gpu_blocks, 0),
    "kv_cache_size_gib": lambda r: next((v.figures.get("kv_cache_size") for v in r.v0_profiles), None),
    "refusal_kv_tokens": lambda r: _attr(r.token_shortfalls, 0, "kv_tokens"),
    "refusal_max_seq_len": lambda r: _attr(r.token_shortfalls, 0, "max_seq_len"),
    "encoder_cache_budget_tokens": lambda r: _nth(r.encoder_cache_budgets, 0),  # an encoder-decoder's (§4.8)
}
# LMDeploy (docs/engines/lmdeploy.md §2.4): TurboMind's `[BlockManager]` triple and the session-length
# truncation, printed once per TP rank thread with no rank in the line.
LMDEPLOY_PICKS: dict[str, Callable[[LmdeployRankLog], Any]] = {
    "block_size_mib": lambda r: _nth(r.block_sizes, 0),
    "block_size_mib_integer": lambda r: _nth(r.block_sizes, 0),
    "max_block_count": lambda r: _nth(r.max_block_counts, 0),
    "chunk_size": lambda r: _nth(r.chunk_sizes, 0),
    "session_len_requested": lambda r: _attr(r.session_truncations, 0, "requested"),
    "session_len_truncated": lambda r: _attr(r.session_truncations, 0, "truncated"),
    "max_cached_tokens": lambda r: _nth(r.max_cached_tokens, 0),
    "tokens_stated": lambda r: None,
    "nvidia_smi_total_mib": lambda r: None,
    "nvidia_smi_used_mib": lambda r: None,
}


def _last(items: tuple[Any, ...]) -> Any:
    return items[-1] if items else None


def _mib(found: Measured | None) -> Rounded | None:
    """A MiB figure as printed (case.json states it in MiB, not GiB)."""
    return Rounded.from_text(found.text) if found is not None else None


# TensorRT-LLM prints the KV pool twice in the PyTorch flow: `estimation_*` is the first (temporary)
# pool, `final_*` and `pool_*` the last (docs/engines/trtllm.md §7).
TRTLLM_PICKS: dict[str, Callable[[TrtllmRankLog], Any]] = {
    "kv_bytes": lambda r: _nth(r.legacy_pool_bytes, 0),
    "pool_tokens": lambda r: _attr(r.allocations, len(r.allocations) - 1, "tokens") or _nth(r.legacy_pool_tokens, 0),
    "pool_gib": lambda r: _attr(r.allocations, len(r.allocations) - 1, "memory"),
    "total_gib": lambda r: _attr(r.cpp_memory, 0, "total"),
    "available_gib": lambda r: _attr(r.cpp_memory, 0, "available"),
    "primary_blocks": lambda r: _nth(r.primary_pool_blocks, 0) or _attr(r.blocks_per_sequence, 0, "primary_blocks"),
    "tokens_per_block": lambda r: _nth(r.tokens_per_block, 0),
    "blocks_per_sequence": lambda r: _nth(r.legacy_blocks_per_sequence, 0),
    "creation_total_gib": lambda r: _nth(r.creation_total, 0),
    "free_before_kv_creation_gib": lambda r: _nth(r.free_before_creation, 0),
    "component_not_created": lambda r: _nth(r.components_not_created, 0),
    "estimation_pool_tokens": lambda r: _attr(r.allocations, 0, "tokens"),
    "estimation_pool_gib": lambda r: _attr(r.allocations, 0, "memory"),
    "final_pool_tokens": lambda r: _attr(r.allocations, len(r.allocations) - 1, "tokens"),
    "final_pool_gib": lambda r: _attr(r.allocations, len(r.allocations) - 1, "memory"),
    "final_primary_blocks": lambda r: _attr(r.blocks_per_sequence, len(r.blocks_per_sequence) - 1, "primary_blocks"),
    "max_blocks_per_seq": lambda r: _attr(r.blocks_per_sequence, 0, "max_blocks_per_sequence"),
    "weights_inside_torch_gib": lambda r: _nth(r.weights_inside_torch, 0),
    "outside_torch_after_load_gib": lambda r: _nth(r.outside_torch_after_load, 0),
    "activation_gib": lambda r: _nth(r.activation, 0),
    "outside_torch_profiling_gib": lambda r: _nth(r.outside_torch_profiling, 0),
    "peak_gib": lambda r: _attr(r.profiles, 0, "peak"),
    "available_kv_gib": lambda r: _attr(r.profiles, 0, "available"),
    "fraction": lambda r: _attr(r.profiles, 0, "fraction"),
    "kv_bytes_per_token": lambda r: _attr(r.profiles, 0, "kv_bytes_per_token"),
    "device_total_gib": lambda r: _attr(r.profiles, 0, "device_total"),
    "tmp_kv_gib": lambda r: _attr(r.profiles, 0, "temporary_pool"),
    "estimated_max_memory_gib": lambda r: _nth(r.estimated_max_memory, 0),
    "max_tokens_exact": lambda r: _last(r.max_tokens_set),
    "execution_context_mib": lambda r: _mib(_nth(r.execution_context, 0)),
}

# Where case.json's number is not on the line its key names, the line it is on, and why.
SOURCE_OVERRIDES: dict[tuple[str, str], Callable[[VllmRankLog], Any]] = {
    # No `Available KV cache memory` line: the figure is the admission error's "available (X GiB)".
    ("vllm-15871-deepseek-v2-lite-offload", "available_kv_cache_memory_gib"): (
        lambda r: _attr(r.admission_errors, 0, "available")
    ),
    ("vllm-34076-qwen3-coder-30b-fp8-pp2-hetero", "available_kv_cache_memory_gib"): (
        lambda r: _attr(r.admission_errors, 0, "available")
    ),
    ("vllm-44376-deepseek-v4-flash-gh200-tp2", "available_kv_cache_memory_gib"): (
        lambda r: _attr(r.admission_errors, 0, "available")
    ),
    # The reflowed excerpt has no Available line: 69.4 is the ledger's "kv cache memory in use".
    ("ngc2608-v0271-qwen3-0.6b-gb10", "available_kv_cache_memory_gib"): (
        lambda r: _attr(r.startup_ledgers, 0, "kv_in_use")
    ),
}

NOT_IN_LOG: dict[tuple[str, str, str | None], str] = {
    ("C04", "other.init_torch_distributed_mem_usage_gb", "others"): (
        "2.01 GB (the other ranks) is not in engine.log: only the TP0 and TP7 Init lines were copied"
    ),
    ("C04", "other.capture_cuda_graph_begin_avail_gb_TP0", None): (
        "11.82 GB is not in engine.log: it has no 'Capture cuda graph begin' line"
    ),
    ("C06", "other.max_total_num_tokens_before_fix", None): "a PR-description number; engine.log is empty",
    ("C06", "other.max_total_num_tokens_after_fix", None): "a PR-description number; engine.log is empty",
    ("C12", "memory_pool_end_avail_gb", "DP1"): "engine.log holds only DP0 lines; DP1 is not in it",
    ("C12", "memory_pool_end_avail_gb", "DP2"): "engine.log holds only DP0 lines; DP2 is not in it",
    ("C12", "memory_pool_end_avail_gb", "DP3"): "engine.log holds only DP0 lines; DP3 is not in it",
    ("C12", "other.capture_cuda_graph_begin_avail_gb", "DP1"): "engine.log holds only DP0 lines",
    ("C17", "avail_mem_before_load_gb", None): (
        "78.43 = 77.45 + 0.98 is derived in case.json; engine.log has no 'Load weight begin' line"
    ),
    ("C21", "other.cuda_graph_mem_usage_gb", None): "0.09 GB is not in engine.log: it has no CUDA-graph line",
    ("lmdeploy-3411-internvl25-8b-a100-80g", "tokens_stated", None): (
        "397,696 is the maintainer's sentence (6214 × 64), not an engine line"
    ),
    ("lmdeploy-tutorial-v010-internlm-chat-7b-vgpu", "nvidia_smi_total_mib", None): (
        "20,470 MiB is an nvidia-smi row pasted after the log, not an LMDeploy line (explain takes it as --gpu-memory)"
    ),
    ("lmdeploy-tutorial-v010-internlm-chat-7b-vgpu", "nvidia_smi_used_mib", None): (
        "14,750 MiB is an nvidia-smi row pasted after the log, not an LMDeploy line"
    ),
}


def _is_rank_label(key: str) -> bool:
    return key == "others" or key[:2] in ("TP", "DP", "PP", "EP")


def _flatten(logged: dict[str, Any], prefix: str = "") -> Iterator[tuple[str, str | None, Any]]:
    """(key path, rank label or None, number) for every non-null number under `logged`."""
    for key, value in logged.items():
        if value is None:
            continue
        if isinstance(value, dict):
            if all(_is_rank_label(label) for label in value):
                for label, number in value.items():
                    yield f"{prefix}{key}", label, number
            else:
                yield from _flatten(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", None, value


def _case_params() -> Iterator[Any]:
    for case_json in sorted(CASES.glob("*/*/case.json")):
        if case_json.parent.parent.name not in ENGINE_IDS:
            continue  # an engine kvtop has no package for yet reads no log
        case = json.loads(case_json.read_text())
        if "logged" not in case:  # the newer one-figure cases (logged_token_capacity) are read by explain's tests
            continue
        engine, case_id = case_json.parent.parent.name, case_json.parent.name
        for key, label, number in _flatten(case["logged"]):
            test_id = f"{case_id}-{key}" + (f"[{label}]" if label else "")
            reason = NOT_IN_LOG.get((case_id, key, label))
            marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
            yield pytest.param(engine, case_id, key, label, number, id=test_id, marks=marks)


def _matches(rank: RankKey, label: str) -> bool:
    """'TP0', 'DP2' or a range 'TP1-6' (C04: of TP1-6 the log shows only TP5, 137.29)."""
    kind, numbers = label[:2].lower(), label[2:]
    low, _, high = numbers.partition("-")
    value = getattr(rank, kind)
    return value is not None and int(low) <= value <= int(high or low)


def _same_as_printed(found: Any, expected: Any) -> bool:
    if isinstance(found, Measured):
        quantum = Decimal(1).scaleb(-found.decimals)
        same_text = Decimal(found.text).quantize(quantum) == Decimal(str(expected)).quantize(quantum)
        scale = 1 << 20 if found.unit == "MiB" else GIB  # LMDeploy prints MiB ("MB"), the others GiB
        return same_text and found.contains(round(Decimal(str(expected)) * scale))
    if isinstance(found, Rounded):
        return Decimal(found.text) == Decimal(str(expected))
    return found is not None and found == expected


def _recover(log: EngineLog, engine: str, case_id: str, key: str, label: str | None) -> Any:
    if engine == "sglang":
        ranks: tuple[Any, ...] = log.ranks(SglangRankLog)
        pick: Callable[[Any], Any] = SGLANG_PICKS[key]
    elif engine == "lmdeploy":
        ranks, pick = log.ranks(LmdeployRankLog), LMDEPLOY_PICKS[key]
    elif engine == "trtllm":
        ranks = log.ranks(TrtllmRankLog)
        pick = TRTLLM_PICKS[key]
    else:
        ranks = log.ranks(VllmRankLog)
        pick = SOURCE_OVERRIDES.get((case_id, key), VLLM_PICKS[key])
    if label is not None:
        ranks = tuple(record for record in ranks if label != "others" and _matches(record.rank, label))
    return first_over_ranks(ranks, pick)


@pytest.mark.parametrize(("engine", "case_id", "key", "label", "expected"), list(_case_params()))
def test_every_logged_number_is_recovered(
    engine: str, case_id: str, key: str, label: str | None, expected: Any
) -> None:
    log = read_engine_log(CASES / engine / case_id / "engine.log")
    found = _recover(log, engine, case_id, key, label)
    assert _same_as_printed(found, expected), (
        f"{case_id} {key} {label}: parsed {found!r}, logged {expected!r}"
    )


@pytest.mark.parametrize(
    "case_dir", sorted(p for p in CASES.glob("*/*/") if p.parent.name in ENGINE_IDS), ids=lambda path: path.name
)
def test_engine_is_detected_from_the_lines(case_dir: Path) -> None:
    log = read_engine_log(case_dir / "engine.log")
    expected = None if case_dir.name == "C06" else case_dir.parent.name  # C06's log is empty
    assert log.engine == expected


def _case_log(engine: str, case_id: str) -> EngineLog:
    return read_engine_log(CASES / engine / case_id / "engine.log")


def test_min_over_ranks_is_the_tightest_rank() -> None:
    """C04: SGLang sizes every rank by the MIN pre-load free memory, TP5's 137.29, not TP0's."""
    log = _case_log("sglang", "C04")
    tightest = log.least(SglangRankLog, lambda record: _attr(record.weight_loads, 0, "avail_before"))
    assert tightest is not None
    assert (tightest.rank, tightest.value.text) == (RankKey(tp=5), "137.29")


def test_vllm_per_rank_ledgers_keep_each_rank() -> None:
    """glm53: Version-B ledgers for TP0-2; the pool is sized by TP1's 17.73 GiB."""
    log = _case_log("vllm", "glm53-flash-nvfp4-tp3-lilab-fork")
    in_use = [
        (record.rank.tp, ledger.kv_in_use.text, ledger.consumed.text, ledger.wording)
        for record in log.ranks(VllmRankLog)
        for ledger in record.startup_ledgers
        if ledger.kv_in_use and ledger.consumed
    ]
    assert in_use == [(0, "17.79", "64.44", "B"), (1, "17.73", "64.5", "B"), (2, "18.04", "64.19", "B")]
    tightest = log.least(VllmRankLog, lambda record: _attr(record.startup_ledgers, 0, "kv_in_use"))
    assert tightest is not None and tightest.rank == RankKey(tp=1, ep=1)
    assert log.first(VllmRankLog, lambda record: _nth(record.block_sizes, 0)) == 3328


def test_vllm_version_a_ledger_advisory_and_graph_pool() -> None:
    log = _case_log("vllm", "glm52-nvfp4-tp4-v0260-fulllog")
    worker = log.rank_record(VllmRankLog, RankKey(tp=0, ep=0))
    assert worker is not None
    ledger = worker.startup_ledgers[0]
    assert ledger.wording == "A"
    assert [m.text for m in (ledger.free, ledger.total, ledger.requested, ledger.weights)] == [
        "181.84", "184.31", "169.56", "106.69",
    ]  # fmt: skip
    assert [m.text for m in (ledger.peak_activation, ledger.non_torch, ledger.cuda_graph)] == [
        "6.31",
        "0.95",
        "4.13",
    ]
    assert (ledger.fit_kv_bytes, ledger.full_kv_bytes) == (55124106138, 68302635520)
    assert ledger.fit_kv is not None and ledger.fit_kv.contains(55124106138)
    advisory = worker.graph_advisories[0]
    assert [r.text for r in (advisory.util, advisory.equivalent_util, advisory.suggested_util)] == [
        "0.9200", "0.8929", "0.9471",
    ]  # fmt: skip
    pool = worker.graph_pools[0]
    assert [pool.actual.text, pool.estimated.text, pool.difference.text, pool.difference_pct.text] == [
        "4.13", "4.99", "0.86", "20.9",
    ]  # fmt: skip
    assert (worker.graph_captures[0].seconds, worker.graph_captures[0].memory.text) == (82.0, "4.13")
    assert worker.estimated_cuda_graph_memory[0].text == "4.99"
    assert worker.block_sizes == (64,)
    assert (log.lines_total, log.lines_parsed, log.unrecognised_engine_lines) == (11, 10, 1)


def test_vllm_v0_and_error_lines() -> None:
    v073 = _case_log("vllm", "vllm-15783-v073-80gb-util080").ranks(VllmRankLog)[0]
    assert (v073.num_gpu_blocks, v073.num_cpu_blocks) == ((53965,), (4681,))  # '# cuda blocks'
    figures = v073.v0_profiles[0].figures
    assert {key: figures[key].text for key in ("requested", "weights", "kv_cache_size")} == {
        "requested": "63.45", "weights": "15.53", "kv_cache_size": "46.11",
    }  # fmt: skip
    v0 = _case_log("vllm", "vllm-10517-llama31-8b-3090-v0").ranks(VllmRankLog)[0]
    assert (v0.num_gpu_blocks, v0.num_cpu_blocks) == ((1952,), (2048,))
    assert v0.model_loading[0].memory.text == "14.9888" and v0.model_loading[0].memory.decimals == 4
    shortfall = _case_log("vllm", "vllm-13061-r1-distill-qwen14b-2x4090-v0").ranks(VllmRankLog)[0].token_shortfalls
    assert [(s.max_seq_len, s.kv_tokens) for s in shortfall] == [(131072, 81536)]
    reserved = _case_log("vllm", "vllm-49878-gemma4-kv-bytes-v026").ranks(VllmRankLog)[0].kv_memory_reserved[0]
    assert (reserved.initial_free.text, reserved.reserved.text) == ("93.88", "49.0")


def test_wrapped_admission_error_is_one_record() -> None:
    """spark-396: the ValueError is wrapped over three lines; one record gets all four numbers."""
    errors = _case_log("vllm", "spark-vllm-docker-396-minimax-m27-awq-tp2").ranks(VllmRankLog)[0].admission_errors
    assert [(e.max_seq_len, e.needed.text, e.available.text, e.estimated_max_model_len) for e in errors] == [
        (196608, "23.25", "22.5", 190272)
    ]


@pytest.mark.parametrize(
    ("case_id", "printed"),
    [
        # each log is the one ValueError line: `… larger than the available KV cache memory (0.93 GiB)`, `(3.18 GiB)`,
        # `(5.44 GiB)`
        ("vllm-15871-deepseek-v2-lite-offload", ["0.93"]),
        ("vllm-34076-qwen3-coder-30b-fp8-pp2-hetero", ["3.18"]),
        ("vllm-44376-deepseek-v4-flash-gh200-tp2", ["5.44"]),
        # `Available KV cache memory: 22.5 GiB` before the error quoting the same 22.5: one figure, not two
        ("spark-vllm-docker-396-minimax-m27-awq-tp2", ["22.5"]),
    ],
)
def test_the_admission_errors_available_memory_is_the_logs_kv_memory(case_id: str, printed: list[str]) -> None:
    """vLLM's admission error quotes the KV memory `Available KV cache memory: X GiB` prints (V1
    check_enough_kv_cache_memory is handed determine_available_memory's result): an excerpt of the error alone
    still states it."""
    (rank,) = _case_log("vllm", case_id).ranks(VllmRankLog)
    assert [m.text for m in rank.available_kv_cache_memory] == printed
    assert rank.available_kv_cache_memory[0] == rank.admission_errors[0].available


def test_sglang_errors_and_draft_load() -> None:
    error = _case_log("sglang", "C26").ranks(SglangRankLog)[0].budget_errors[0]
    assert (error.kind, error.mem_fraction_static, error.minimum_viable.text) == (
        "no_memory_for_kv",
        0.85,
        "1.0000",
    )
    rank = _case_log("sglang", "C24").rank_record(SglangRankLog, RankKey(tp=0, ep=0))
    assert rank is not None and rank.draft_load is not None
    assert (rank.draft_load.model_class, rank.draft_load.quant) == ("DeepseekV4ForCausalLMDSpark", "fp8")


@pytest.mark.parametrize(
    ("kind", "case", "rank", "quote"),
    [
        ("sglang", "C26", RankKey(), "ValueError: Loaded weights leave no GPU memory for the KV cache under "
         "--mem-fraction-static=0.85. Raise --mem-fraction-static above 1.000"),
        ("vllm", "vllm-27508-gpt-oss-120b-h100", RankKey(dp=0), "EngineCore failed to start."),
        ("vllm", "vllm-34076-qwen3-coder-30b-fp8-pp2-hetero", RankKey(dp=0), "ValueError: To serve at least one "
         "request with the models's max seq len (262144), (24.0 GiB KV cache is needed"),
        ("vllm", "spark-vllm-docker-396-minimax-m27-awq-tp2", RankKey(), "ValueError: To serve at least one request "
         "with the model's max seq len (196608), 23.25 GiB KV cache is needed, which is larger than the available "
         "KV cache memory (22.5 GiB)."),  # three wrapped lines, joined
        ("vllm", "vllm-15871-deepseek-v2-lite-offload", RankKey(), "ValueError: To serve at least one request with "
         "the models's max seq len (32768), (0.95 GiB KV cache is needed"),
    ],
)  # fmt: skip
def test_refused_start_keeps_the_engines_error_line(kind: str, case: str, rank: RankKey, quote: str) -> None:
    failures = _case_log(kind, case).startup_failures
    assert len(failures) == 1 and failures[0].rank == rank and failures[0].text.startswith(quote)


def test_a_started_engine_has_no_startup_failure() -> None:
    assert _case_log("sglang", "C13").startup_failures == ()
    assert _case_log("vllm", "lmcache-1739-qwen3-14b").startup_failures == ()


def test_recognised_lines_are_counted_per_engine() -> None:
    """The counts `explain` uses to refuse an empty log or an `--engine` the log contradicts."""
    c13, lmcache = _case_log("sglang", "C13"), _case_log("vllm", "lmcache-1739-qwen3-14b")
    assert (c13.recognised_lines("sglang"), c13.recognised_lines("vllm")) == (5, 0)
    assert (lmcache.recognised_lines("sglang"), lmcache.recognised_lines("vllm")) == (0, 3)
    assert (lmcache.recognised_lines("sglang"), lmcache.recognised_lines("vllm")) == (0, 3)
    assert (parse_engine_log("").recognised_lines("sglang"), parse_engine_log("").recognised_lines("vllm")) == (0, 0)


# --- units and intervals ------------------------------------------------------------------------


def test_format_gib_without_trailing_zero_keeps_the_two_decimal_interval() -> None:
    short = parse_engine_log("Available KV cache memory: 22.5 GiB").ranks(VllmRankLog)[0].available_kv_cache_memory[0]
    full = parse_engine_log("Available KV cache memory: 22.50 GiB").ranks(VllmRankLog)[0].available_kv_cache_memory[0]
    assert (short.value_bytes, short.low_bytes, short.high_bytes) == (
        full.value_bytes,
        full.low_bytes,
        full.high_bytes,
    )
    assert short.low_bytes == int(22.495 * GIB) and short.decimals == 2


def test_sglang_gb_is_gib_with_a_half_hundredth_interval() -> None:
    kv = parse_engine_log("KV Cache is allocated. #tokens: 367404, K size: 8.23 GB, V size: 8.23 GB")
    k_size = kv.ranks(SglangRankLog)[0].kv_allocations[0].k_size
    assert k_size is not None and k_size.unit == "GB"
    assert k_size.value_bytes == round(Decimal("8.23") * GIB)
    assert k_size.contains(round(8.2349 * GIB)) and not k_size.contains(round(8.2351 * GIB))
