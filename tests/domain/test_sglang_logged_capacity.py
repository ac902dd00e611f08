"""One answer to "what capacity did this SGLang log state", read by `kvtop explain` and by `--engine-log`.

An operator trial found the two disagree: `--engine-log` read only the scheduler summary and the post-capture
resize, so C04 (whose excerpt ends at `KV Cache is allocated. #tokens: 2795207`) "states no token capacity"
attached to the demo, while explain read the first `#tokens` and ignored a resize. Expected figures are the
log lines' own, quoted beside each assertion.
"""

from __future__ import annotations

import json
from pathlib import Path

from kvtop.commands.node_source import DemoSource
from kvtop.domain.capacity import CapacitySource
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.sglang.log_records import SglangRankLog
from kvtop.domain.explain import explain
from kvtop.domain.explain_request import ExplainRequest
from kvtop.domain.launch import parse_flags
from kvtop.domain.logged_capacity import logged_token_capacity
from kvtop.domain.wording import GIB
from kvtop.sources.engine_logs import parse_engine_log, read_engine_log
from kvtop.sources.hub import load_model
from kvtop.sources.scenario import scenario_dir
from tests.conftest import CASES, CONFIGS

C04 = CASES / "sglang/C04/engine.log"
LLAMA_70B = CONFIGS / "meta-llama--Llama-3.1-70B-Instruct.json"
TP8 = parse_flags("sglang", ["--tp", "8"])

# A start with SGLANG_ENABLE_POST_CAPTURE_KV_SIZING, in the engine's own wording: the pool line is
# memory_pool.py's, the resize model_runner_kv_cache_mixin.py's `post_capture_resize_kv_pool`
# ("Post-capture KV sizing: max_total_num_tokens=%d, free memory=%.2f GB"), the summary scheduler.py's. No log in
# tests/data (cases, calibration corpus) holds a resize: these are the format strings filled in. Llama-3-70B at TP 8
# holds 80 layers × 1 KV head × 128 × 2 B = 20,480 B of K per token per rank: (1,200,000 + 1) × 20,480 B = 22.89 GiB.
RESIZED = (
    "[2026-05-04 10:00:01 TP0] KV Cache is allocated. #tokens: 1200000, K size: 22.89 GB, V size: 22.89 GB\n"
    "[2026-05-04 10:00:01 TP0] Memory pool end. avail mem=27.50 GB\n"
    "[2026-05-04 10:00:40 TP0] Post-capture KV sizing: max_total_num_tokens=1310720, free memory=3.10 GB\n"
)
SUMMARY = (
    "[2026-05-04 10:00:41 TP0] max_total_num_tokens=1310720, chunked_prefill_size=8192, max_prefill_tokens=16384, "
    "max_running_requests=4096, context_len=131072, available_gpu_mem=3.05 GB\n"
)


def _explained(log_text_or_path: str | Path) -> int | None:
    """`kvtop explain`'s reading of the logged capacity (Llama-3.1-70B at TP 8)."""
    log = (
        read_engine_log(log_text_or_path)
        if isinstance(log_text_or_path, Path)
        else parse_engine_log(log_text_or_path, source="resize.log")
    )
    result = explain(ExplainRequest(log=log, model=load_model(str(LLAMA_70B)), settings=TP8))
    return result.logged.token_capacity


def _attached(tmp_path: Path, log: Path) -> tuple[set[tuple[int | None, CapacitySource]], str | None]:
    """`--engine-log` on the SGLang demo node (Llama-3-70B TP 8), its endpoints unreachable so the log's
    capacity is the one the ranks show."""
    scenario = json.loads((scenario_dir() / "llama70b-tp8-sglang.json").read_text())
    scenario["engines"][0]["endpoint"] = "unreachable"
    path = tmp_path / "sglang-no-endpoint.json"
    path.write_text(json.dumps(scenario))
    snapshot = DemoSource.open(str(path), engine_log=log).collect_at(0)
    (view,) = snapshot.engines
    return {(r.capacity.actual_tokens, r.capacity.actual_source) for r in view.ranks if r.capacity}, snapshot.notice


def test_c04_states_its_allocated_tokens_to_both_paths(tmp_path: Path) -> None:
    # C04: "KV Cache is allocated. #tokens: 2795207, K size: 53.31 GB, V size: 53.31 GB" (no scheduler summary)
    assert logged_token_capacity(read_engine_log(C04)) == 2_795_207
    assert _explained(C04) == 2_795_207
    ranks, notice = _attached(tmp_path, C04)
    assert ranks == {(2_795_207, CapacitySource.LOGGED)}
    assert notice is None or "states no token capacity" not in notice


def test_a_post_capture_resize_is_the_capacity_both_paths_state(tmp_path: Path) -> None:
    # "KV Cache is allocated. #tokens: 1200000" then "Post-capture KV sizing: max_total_num_tokens=1310720": the
    # resize wins, whether or not the scheduler's summary (printed after it, the same figure) is in the excerpt
    for text in (RESIZED, RESIZED + SUMMARY):
        assert logged_token_capacity(parse_engine_log(text, source="resize.log")) == 1_310_720
        assert _explained(text) == 1_310_720
    log = tmp_path / "resize.log"
    log.write_text(RESIZED)
    ranks, _ = _attached(tmp_path, log)
    assert ranks == {(1_310_720, CapacitySource.LOGGED)}


def test_explain_names_the_post_capture_resize_not_modelled() -> None:
    """kvtop sizes the pool before the capture: a resized figure is read and said, never rebuilt as a mismatch."""
    log = parse_engine_log(RESIZED + SUMMARY, source="resize.log")
    result = explain(ExplainRequest(log=log, model=load_model(str(LLAMA_70B)), settings=TP8))
    assert result.verdict == "insufficient" and result.unsolved is not None
    assert "post-capture KV resize (to 1310720 tokens" in result.unsolved and "not modelled" in result.unsolved


def test_a_sliding_window_log_states_its_full_pool_not_the_sub_pool() -> None:
    # C03: "Use sliding window memory pool. full_layer_tokens=375360, swa_layer_tokens=300288" then
    # "KV Cache is allocated. #tokens: 300288, …" (the SWA sub-pool's): the capacity is the full-attention pool's
    log = read_engine_log(CASES / "sglang/C03/engine.log")
    explained = engine_rules("sglang").explainer.logged_figures(log, parse_flags("sglang", ["--tp", "4"]))
    assert logged_token_capacity(log) == explained.token_capacity == 375_360
    # C25: "SWAKVPool mem usage: 79.94 GB, swa size: 798276, full size: 997846"
    log = read_engine_log(CASES / "sglang/C25/engine.log")
    assert logged_token_capacity(log) == 997_846


def test_two_runs_pasted_in_one_log_state_the_latest_start_by_its_lines_times() -> None:
    # C09 pastes two runs: "[2025-10-07 23:17:19 DP0 TP0] … #tokens: 975424, KV size: 43.67 GB" then
    # "[2025-10-07 22:29:11 DP0 TP0] … #tokens: 1462784, KV size: 54.52 GB": the later start is printed first,
    # and it is the run case.json's logged.kv_tokens names (975,424; the other is its `main_branch_run`)
    log = read_engine_log(CASES / "sglang/C09/engine.log")
    case = json.loads((CASES / "sglang/C09/case.json").read_text())
    explained = engine_rules("sglang").explainer.logged_figures(log, parse_flags("sglang", ["--page-size", "64"]))
    assert logged_token_capacity(log) == explained.token_capacity == case["logged"]["kv_tokens"] == 975_424
    # bytes per token of that pool: 43.67 GiB ÷ (975,424 + 64) rows = 48,068 B
    assert explained.kv_bytes_per_token == round(43.67 * 2**30) // (975_424 + 64) == 48_068


def test_a_log_without_dates_states_the_start_printed_last() -> None:
    # no date in the prefix (`[23:17:19 TP0]`): nothing orders the runs but the print order
    text = (
        "[23:17:19 TP0] KV Cache is allocated. #tokens: 975424, KV size: 43.67 GB\n"
        "[22:29:11 TP0] KV Cache is allocated. #tokens: 1462784, KV size: 54.52 GB\n"
    )
    assert logged_token_capacity(parse_engine_log(text, source="undated.log")) == 1_462_784


# Two starts of one server in one file, each in SGLang's own wording (model_runner.py's `Load weight begin. avail
# mem=%.2f GB` / `Load weight end. type=…, dtype=…, avail mem=%.2f GB, mem usage=%.2f GB.`, memory_pool.py's pool
# line, scheduler.py's summary), filled in with two runs' figures: the first start loads 131.60 GB into 137.34 GB
# free, the second (after a co-tenant took 6 GB) 131.60 GB into 131.30 GB; C24's lines for the draft's second load.
_FIRST_START = (
    "[2026-05-04 09:00:00 TP0] Load weight begin. avail mem=137.34 GB\n"
    "[2026-05-04 09:01:00 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=120.94 GB, mem usage=16.40 GB.\n"
    "[2026-05-04 09:01:05 TP0] KV Cache is allocated. #tokens: 2795207, K size: 53.31 GB, V size: 53.31 GB\n"
    "[2026-05-04 09:01:05 TP0] Memory pool end. avail mem=11.87 GB\n"
)
_SECOND_START = (
    "[2026-05-04 10:00:00 TP0] Load weight begin. avail mem=131.30 GB\n"
    "[2026-05-04 10:01:00 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=114.90 GB, mem usage=16.40 GB.\n"
    "[2026-05-04 10:01:05 TP0] KV Cache is allocated. #tokens: 2600000, K size: 49.59 GB, V size: 49.59 GB\n"
    "[2026-05-04 10:01:05 TP0] Memory pool end. avail mem=10.98 GB\n"
)


def _figures(text: str) -> tuple[int | None, int | None, int | None, int | None]:
    log = parse_engine_log(text, source="two-starts.log")
    logged = engine_rules("sglang").explainer.logged_figures(log, TP8)
    return logged.token_capacity, logged.free_before_load_bytes, logged.free_after_load_bytes, logged.weights_bytes


def test_two_starts_state_the_free_memory_and_weights_of_the_start_their_capacity_is_read_from() -> None:
    # the latest start (10:00) is the second: 2,600,000 tokens, loaded into 131.30 GB, 114.90 GB left, 16.40 GB of
    # weights — never the first start's 137.34 GB before beside the second's 114.90 GB after (as read before)
    second = (2_600_000, round(131.30 * GIB), round(114.90 * GIB), round(16.40 * GIB))
    assert _figures(_FIRST_START + _SECOND_START) == second
    # pasted out of order (the later start printed first, as C09): the lines' times still pick the 10:00 start
    assert _figures(_SECOND_START + _FIRST_START) == second


def test_a_draft_load_stays_part_of_its_start() -> None:
    # C24 (one start, a DSpark draft): "Load weight begin. avail mem=111.47 GB" (the target), the draft's
    # "Load weight end … avail mem=14.74 GB, mem usage=2.80 GB." printed after it and before any pool line: free
    # before load is the target's 111.47 GB, after load the draft's 14.74 GB, the weights the target's 94.00 GB
    log = read_engine_log(CASES / "sglang/C24/engine.log")
    (rank,) = [r for r in log.ranks(SglangRankLog) if r.weight_loads]
    assert [load.start for load in rank.weight_loads] == [0, 0] and rank.draft_load is not None
    logged = engine_rules("sglang").explainer.logged_figures(log, TP8)
    assert (logged.free_before_load_bytes, logged.free_after_load_bytes, logged.weights_bytes) == (
        round(111.47 * GIB), round(14.74 * GIB), round(94.00 * GIB)
    )


def test_every_restart_of_a_log_pasted_in_a_loop_opens_its_own_start() -> None:
    # 70 identical undated starts (one `Load weight begin` each, then its pool lines; `_FIRST_START`'s figures):
    # the reader keeps the first and last 32 values of a kind, so from the 33rd start on the pool lists' lengths and
    # last values stand still. Each load still follows a pool line, so each is its own start (0..69): the last start
    # holds one load and no speculative draft (read before as the last 6 loads sharing one start, a "draft")
    one = (
        "[09:00:00 TP0] Load weight begin. avail mem=137.34 GB\n"
        "[09:01:00 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=120.94 GB, mem usage=16.40 GB.\n"
        "[09:01:05 TP0] KV Cache is allocated. #tokens: 2795207, K size: 53.31 GB, V size: 53.31 GB\n"
        "[09:01:05 TP0] Memory pool end. avail mem=11.87 GB\n"
    )
    log = parse_engine_log(one * 70, source="loop.log")
    (rank,) = log.ranks(SglangRankLog)
    assert rank.weight_loads[-1].start == 69 and rank.weight_loads[0].start == 0
    assert len(rank.started_loads) == 1 and rank.draft_load is None
