"""A TensorRT-LLM log holding two starts (a restarted container's `docker logs`): the banner each start prints once
(`[TensorRT-LLM] TensorRT-LLM version: X`, as tensorrt_llm is imported) begins its budget lines anew, so the second
start's C++ budget line is not read as a second rank. trtllm-bench's MPI workers print no banner of their own (the
real TP 8 start, github.com/shaamil101-etched/trtllm-benchmarks `results/result_128_128_30000.txt`, search-index id
5028408237: one banner, eight `Memory usage …` lines): their eight lines stay eight ranks, with or without --tp_size.
"""

from __future__ import annotations

import struct

import pytest

from kvtop.domain.explain import explain
from kvtop.domain.explain_request import ExplainRequest
from kvtop.domain.launch import parse_flags
from kvtop.domain.wording import GIB
from kvtop.sources.engine_logs import parse_engine_log
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS
from tests.engines.trtllm.test_trtllm_unprefixed_ranks import FLAGS, FREE_AS_PRINTED, HEAD, _log

BYTES_PER_TOKEN_TP1 = 80 * 8 * 128 * 2  # Llama-3.1-70B, FP8 KV at TP 1: layers × KV heads × head dim × (K, V) × 1 B


def _start(free_gib: str) -> list[str]:
    """One TP 1 start: its head (banner first), its budget line, its pool as the engine would size it from that line
    (the C++ float 0.9 × free ÷ bytes a token, ceil to blocks of 64)."""
    fraction: float = struct.unpack("f", struct.pack("f", 0.9))[0]
    tokens = -(-int(fraction * round(float(free_gib) * GIB) / BYTES_PER_TOKEN_TP1) // 64) * 64
    return [*HEAD,
            f"[TensorRT-LLM][INFO] Memory usage when calculating max tokens in paged kv cache: total: 79.10 GiB, "
            f"available: {free_gib} GiB",
            f"[TensorRT-LLM][INFO] Number of blocks in KV cache primary pool: {tokens // 64}",
            "[TensorRT-LLM][INFO] Number of tokens per block: 64.",
            f"[TensorRT-LLM][INFO] [MemUsageChange] Allocated {tokens * BYTES_PER_TOKEN_TP1 / GIB:.2f} GiB for max "
            f"tokens in paged KV cache ({tokens})."]  # fmt: skip


@pytest.mark.parametrize(("first", "second"), [("60.00", "58.00"), ("58.00", "60.00")])
def test_a_second_start_is_not_a_second_rank(first: str, second: str) -> None:
    """Two TP 1 starts, 60.00 then 58.00 GiB free (and the other way): one rank, sized from the later start's line,
    not from the least of the two."""
    model = load_model(str(CONFIGS / "meta-llama--Llama-3.1-70B-Instruct.json"))
    flags = [f for f in FLAGS if f not in ("--tp_size", "8")] + ["--tp_size", "1"]
    text = "\n".join([*_start(first), *_start(second)]) + "\n"
    result = explain(ExplainRequest(log=parse_engine_log(text), model=model, settings=parse_flags("trtllm", flags)))
    assert result.logged.ranks_seen == 1
    assert result.logged.available_kv_bytes == round(float(second) * GIB)
    assert not [n for n in result.notes if "least budget over" in n or n.startswith("the next tightest rank")]
    assert result.verdict == "match"


def test_trtllm_bench_ranks_are_counted_without_tp_size() -> None:
    """The real TP 8 start's one banner and eight unprefixed budget lines, explained without --tp_size (kvtop's TP
    defaults to 1): still eight ranks, sized from the least line, 57.87 GiB."""
    model = load_model(str(CONFIGS / "meta-llama--Llama-3.1-70B-Instruct.json"))
    flags = [f for f in FLAGS if f not in ("--tp_size", "8")]
    result = explain(ExplainRequest(log=parse_engine_log(_log(FREE_AS_PRINTED)), model=model,
                                    settings=parse_flags("trtllm", flags)))  # fmt: skip
    assert result.logged.ranks_seen == 8
    assert result.logged.available_kv_bytes == round(57.87 * GIB)
