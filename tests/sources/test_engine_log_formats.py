"""The engine-log parser on odd input: line prefixes, truncation, foreign and binary text, and the
server arguments and launch commands a log prints (the real case logs: test_engine_logs.py)."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kvtop.domain.engine_log import (
    EngineLog,
    RankKey,
)
from kvtop.domain.engines.sglang.log_records import SglangRankLog
from kvtop.domain.engines.vllm.log_records import VllmRankLog
from kvtop.domain.errors import InputError
from kvtop.domain.explain import log_missing
from kvtop.sources.engine_logs import (
    parse_call_args,
    parse_dict_args,
    parse_engine_log,
    rank_of,
    read_engine_log,
)
from tests.conftest import CASES, CONFIGS

# --- prefixes, truncation, foreign and binary input --------------------------------------------

LOAD_END = "Load weight end. elapsed=541.76 s, type=DeepseekV4ForCausalLM, quant=fp8, avail mem=17.47 GB, mem usage=94.00 GB."


@pytest.mark.parametrize(
    "wrap",
    [
        "{}",
        "[2026-09-11 23:43:15 TP0 EP0] {}",
        "Jan 01 12:00:00 host sglang[123]: [2026-09-11 23:43:15 TP0 EP0] {}",
        "\x1b[32m[2026-09-11 23:43:15 TP0 EP0]\x1b[0m {}\x1b[0m",
        "sglang-1  | [2026-09-11 23:43:15 TP0 EP0] {}",
        "INFO 01-23 10:00:00 [model_runner.py:123] {}",
    ],
)
def test_prefixes_do_not_change_the_values(wrap: str) -> None:
    load = parse_engine_log(wrap.format(LOAD_END)).ranks(SglangRankLog)[0].weight_loads[0]
    assert (load.avail_after.text, load.mem_usage.text, load.elapsed_s, load.quant) == (
        "17.47",
        "94.00",
        541.76,
        "fp8",
    )


@pytest.mark.parametrize(
    ("prefix", "rank"),
    [
        ("[2025-01-23 10:00:00 TP0]", RankKey(tp=0)),
        ("[2025-01-23 10:00:00 DP1 TP3 EP3]", RankKey(dp=1, tp=3, ep=3)),
        ("[2025-01-23 10:00:00 PP1 TP2]", RankKey(pp=1, tp=2)),
        ("[20:52:05]", RankKey()),
        ("(Worker_TP0 pid=123) INFO 08-20 17:22:37 [gpu_worker.py:560]", RankKey(tp=0)),
        ("(Worker_TP1_EP1 pid=1160) INFO", RankKey(tp=1, ep=1)),
        ("(EngineCore_DP0 pid=1133552) INFO", RankKey(dp=0)),
        ("(VllmWorker rank=1 pid=105) INFO", RankKey(worker=1)),
        ("Jan 01 12:00:00 host python3[28145]: (Worker_TP2 pid=28145)", RankKey(tp=2)),
        ("(VllmWorkerProcess pid=1786) INFO", RankKey()),
        ("(EngineCore_DP1 pid=1) (Worker_TP3 pid=2) INFO", RankKey(dp=1, tp=3)),
    ],
)
def test_rank_prefixes(prefix: str, rank: RankKey) -> None:
    assert rank_of(f"{prefix} Memory pool end. avail mem=11.87 GB") == rank


# Lines no case shows, written from the format strings in docs/engines/sglang.md §11 and docs/engines/vllm.md §6.
SPEC_LINES: list[tuple[str, Callable[[EngineLog], Any], Any]] = [
    (
        "[2026-01-01 00:00:00 TP0] Init torch distributed ends. elapsed=1.25 s, mem usage=0.51 GB",
        lambda log: log.ranks(SglangRankLog)[0].init_dist_mem_usage[0].text,
        "0.51",
    ),
    (
        "Capture cuda graph begin. This can take up to several minutes. avail mem=20.00 GB\n"
        "Capture cuda graph end. Time elapsed: 12.34 s. mem usage=1.50 GB. avail mem=18.49 GB.",
        lambda log: [
            (c.phase, c.avail_before.text, c.mem_usage.text, c.avail_after.text, c.elapsed_s)
            for c in log.ranks(SglangRankLog)[0].graph_captures
        ],
        [("", "20.00", "1.50", "18.49", 12.34)],
    ),
    (
        "Capture piecewise CUDA graph end. elapsed=3.10 s, mem usage=0.40 GB, avail mem=17.00 GB.",
        lambda log: (
            log.ranks(SglangRankLog)[0].graph_captures[0].phase,
            log.ranks(SglangRankLog)[0].graph_captures[0].mem_usage.text,
        ),
        ("piecewise", "0.40"),
    ),
    (
        "KV Cache is allocated. dtype: torch.bfloat16, #tokens: 800000, K size: 2.00 GB, V size: 2.00 GB\n"
        "KV Cache is allocated. dtype: torch.bfloat16, #tokens: 1000000, K size: 3.00 GB, V size: 3.00 GB",
        lambda log: [a.tokens for a in log.ranks(SglangRankLog)[0].kv_allocations],
        [800000, 1000000],
    ),
    (
        "Reserving 0.10 GB of the KV budget for post-sizing multimodal allocations (feature-transport pools + embedding cache).",
        lambda log: log.ranks(SglangRankLog)[0].mm_reserves[0].text,
        "0.10",
    ),
    (
        "Post-capture KV sizing: max_total_num_tokens=123456, free memory=5.25 GB",
        lambda log: (
            log.ranks(SglangRankLog)[0].post_capture_resizes[0].max_total_num_tokens,
            log.ranks(SglangRankLog)[0].scheduler_summaries,
        ),
        (123456, ()),
    ),
    (
        "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: mem_fraction_static=0.5",
        lambda log: (
            log.ranks(SglangRankLog)[0].budget_errors[0].kind,
            log.ranks(SglangRankLog)[0].budget_errors[0].mem_fraction_static,
        ),
        ("not_enough_memory", 0.5),
    ),
    (
        "Overriding num_gpu_blocks=17804 with num_gpu_blocks_override=512",
        lambda log: (
            log.ranks(VllmRankLog)[0].blocks_overrides[0].num_gpu_blocks,
            log.ranks(VllmRankLog)[0].blocks_overrides[0].override,
        ),
        (17804, 512),
    ),
    (
        "ValueError: Free memory on device cuda:0 (10.5/79.19 GiB) on startup is less than desired GPU memory "
        "utilization (0.92, 72.85 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
        lambda log: (
            [
                (s.free.text, s.total.text, s.util.text, s.requested.text)
                for s in log.ranks(VllmRankLog)[0].startup_shortfalls
            ]
            + [len(log.ranks(VllmRankLog)[0].startup_ledgers)]
        ),
        [("10.5", "79.19", "0.92", "72.85"), 0],
    ),
    (
        "(EngineCore_DP0 pid=1) INFO 08-20 17:28:20 [core.py:250] init engine (profile, create kv cache, warmup model) took 492.43 seconds",
        lambda log: log.ranks(VllmRankLog)[0].init_engine_seconds,
        (492.43,),
    ),
]


@pytest.mark.parametrize(("text", "pick", "expected"), SPEC_LINES, ids=[line[0][:40] for line in SPEC_LINES])
def test_spec_format_lines(text: str, pick: Callable[[EngineLog], Any], expected: Any) -> None:
    assert pick(parse_engine_log(text)) == expected


def test_truncated_log_gives_what_it_has() -> None:
    lines = (CASES / "sglang" / "C17" / "engine.log").read_text().splitlines()
    cut = "\n".join(lines[:2]) + "\n" + lines[2][: lines[2].index("K size") + 3]  # ends inside the KV line
    log = parse_engine_log(cut)
    rank = log.ranks(SglangRankLog)[0]
    assert rank.target_load is not None and rank.target_load.mem_usage.text == "0.98"
    assert rank.kv_cache_dtype == "torch.bfloat16"
    assert [(a.tokens, a.k_size) for a in rank.kv_allocations] == [(20480, None)]
    assert rank.memory_pool_end_avail == () and rank.scheduler_summaries == ()
    assert {"memory_pool_end", "scheduler_summary"} <= set(log_missing(log))


def test_foreign_text_gives_no_engine() -> None:
    prose = (CONFIGS / "SOURCES.md").read_text()  # 15 KB of Markdown tables about model configs
    noise = "".join(random.Random(7).choice("abc XYZ 0123456789.,=:[]()#\n") for _ in range(20000))
    for text in (prose, noise, ""):
        log = parse_engine_log(text)
        assert (log.engine, log.ranks(SglangRankLog), log.ranks(VllmRankLog), log.lines_parsed) == (None, (), (), 0)
        assert (log.recognised_lines("sglang"), log.recognised_lines("vllm"), log.startup_failures) == (0, 0, ())
        assert log_missing(log) == ("engine",)


def test_binary_bytes_do_not_crash(tmp_path: Path) -> None:
    garbage = bytes(random.Random(3).randrange(256) for _ in range(50000))
    path = tmp_path / "engine.log"
    path.write_bytes(
        garbage + b"\n[2025-01-23 19:35:15 TP0] Load weight begin. avail mem=78.81 GB\n" + garbage
    )
    log = read_engine_log(path)
    assert log.rank_record(SglangRankLog, RankKey(tp=0)).target_load.avail_before.text == "78.81"


def test_missing_and_unreadable_files_are_input_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file: "):
        read_engine_log(tmp_path / "absent.log")
    with pytest.raises(InputError, match="is a directory"):
        read_engine_log(tmp_path)


# --- server arguments ---------------------------------------------------------------------------

SERVER_ARGS = (
    "[2025-01-23 19:35:10] server_args=ServerArgs(model_path='meta-llama/Llama-3.1-8B-Instruct', "
    "tokenizer_path='meta-llama/Llama-3.1-8B-Instruct', chat_template='a, b (c)', tp_size=2, "
    "mem_fraction_static=0.88, max_total_tokens=None, disable_radix_cache=False, enable_dp_attention=True, "
    "cuda_graph_bs=[1, 2, 4, 8], json_model_override_args='{\"a\": [1, 2]}', lora_paths={'x': 'y, z'}, "
    "kv_cache_dtype='auto', page_size=1, random_seed=-7, weight_decay=1e-05, attention_backend=flashinfer)"
)


def test_sglang_server_args() -> None:
    log = parse_engine_log(SERVER_ARGS)
    args = log.server_args
    assert args["model_path"] == log.model_path == "meta-llama/Llama-3.1-8B-Instruct"
    assert (args["tp_size"], args["mem_fraction_static"], args["max_total_tokens"]) == (2, 0.88, None)
    assert (args["disable_radix_cache"], args["enable_dp_attention"], args["random_seed"]) == (
        False,
        True,
        -7,
    )
    assert args["chat_template"] == "a, b (c)" and args["json_model_override_args"] == '{"a": [1, 2]}'
    assert args["cuda_graph_bs"] == "[1, 2, 4, 8]" and args["lora_paths"] == "{'x': 'y, z'}"
    assert (args["weight_decay"], args["attention_backend"], args["page_size"]) == (1e-05, "flashinfer", 1)
    assert log.engine == "sglang"


def test_truncated_server_args_keep_what_was_printed() -> None:
    args = parse_call_args(SERVER_ARGS[: SERVER_ARGS.index("cuda_graph_bs") + 20], SERVER_ARGS.index("(") + 1)
    assert args["tp_size"] == 2 and args["cuda_graph_bs"] == "[1, 2,"


def test_vllm_non_default_args() -> None:
    line = (
        "(APIServer pid=1) INFO 07-06 10:50:00 [utils.py:233] non-default args: {'model_tag': 'Qwen/Qwen3-8B', "
        "'model': 'Qwen/Qwen3-8B', 'max_model_len': 32768, 'gpu_memory_utilization': 0.92, "
        "'tensor_parallel_size': 2, 'enable_prefix_caching': False, 'compilation_config': {'level': 3, "
        "'cudagraph_capture_sizes': [1, 2]}, 'mode': <CompilationMode.VLLM_COMPILE: 3>, 'kv_cache_dtype': 'fp8'}"
    )
    log = parse_engine_log(line)
    args = log.server_args
    assert (log.engine, log.model_path) == ("vllm", "Qwen/Qwen3-8B")
    assert (args["max_model_len"], args["gpu_memory_utilization"], args["tensor_parallel_size"]) == (
        32768,
        0.92,
        2,
    )
    assert args["enable_prefix_caching"] is False and args["kv_cache_dtype"] == "fp8"
    assert args["compilation_config"] == "{'level': 3, 'cudagraph_capture_sizes': [1, 2]}"
    assert args["mode"] == "<CompilationMode.VLLM_COMPILE: 3>"
    assert parse_dict_args("{'a': 1, 'b': 'x") == {"a": 1, "b": "'x"}


def test_launch_command_and_model_from_it() -> None:
    log = read_engine_log(CASES / "sglang" / "C09" / "engine.log")
    assert log.launch_command is not None and log.launch_command.startswith("python -m sglang.launch_server")
    assert log.model_path == "deepseek-ai/DeepSeek-V3.2-Exp"
