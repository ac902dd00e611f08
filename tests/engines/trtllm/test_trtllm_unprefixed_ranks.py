"""`kvtop explain` of a TP 8 trtllm-bench start whose MPI workers print without a rank prefix (TensorRT-LLM 0.16.0).

The lines are the real start's (github.com/shaamil101-etched/trtllm-benchmarks `results/result_128_128_30000.txt` at
aeec9f29, search-index id 5028408237; the repository's 63 runs print the same eight free figures): Llama-3.1-70B FP8
with FP8 KV at TP 8 on 80 GB cards. One rank had 57.87 GiB free, the seven others 61.38–61.64. The C++ runtime
MIN-reduces the tokens over ranks (docs/engines/trtllm.md §4.2, §5), so every pool is the least rank's:
`Allocated 52.08 GiB for max tokens in paged KV cache (2730752)`. Without prefixes all eight lines land in one record;
explain read the first one printed (right in this log by chance, wrong when the least rank prints later).
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

# the start's budget lines in the order it printed them, then its pool (the log's own text)
FREE_AS_PRINTED = ("57.87", "61.38", "61.39", "61.40", "61.64", "61.41", "61.39", "61.39")
HEAD = (
    "[TensorRT-LLM] TensorRT-LLM version: 0.16.0",
    "[TensorRT-LLM][INFO] [MemUsageChange] Allocated 1013.01 MiB for execution context memory.",
    "[TensorRT-LLM][INFO] [MemUsageChange] Allocated 1.63 GB GPU memory for runtime buffers.",
    "[TensorRT-LLM][INFO] [MemUsageChange] Allocated 3.30 GB GPU memory for decoder.",
)
POOL = (
    "[TensorRT-LLM][INFO] Number of blocks in KV cache primary pool: 42668",
    "[TensorRT-LLM][INFO] Number of tokens per block: 64.",
    "[TensorRT-LLM][INFO] [MemUsageChange] Allocated 52.08 GiB for max tokens in paged KV cache (2730752).",
)
FLAGS = ["--tp_size", "8", "--backend", "tensorrt", "--qformat", "fp8", "--kv_cache_dtype", "fp8",
         "--tokens_per_block", "64"]  # fmt: skip


def _log(free: tuple[str, ...]) -> str:
    budget = [f"[TensorRT-LLM][INFO] Memory usage when calculating max tokens in paged kv cache: total: 79.10 GiB, "
              f"available: {gib} GiB" for gib in free]  # fmt: skip
    return "\n".join((*HEAD, *budget, *(POOL * len(free)))) + "\n"


@pytest.mark.parametrize("free", [FREE_AS_PRINTED, FREE_AS_PRINTED[::-1]], ids=["as printed", "least printed last"])
def test_the_least_unprefixed_budget_line_sizes_the_pool(free: tuple[str, ...]) -> None:
    """80 layers × 8 KV heads ÷ TP 8 × 128 × 2 (K, V) × 1 B (FP8) = 20,480 B a token. The least line, 57.87 GiB
    (printed 57.865–57.875), × the C++ float 0.9 (0.899999976) ÷ 20,480 B gives max tokens 2,730,413–2,730,885, ceil
    to blocks of 64: 42,663–42,671 blocks, the logged 42,668 × 64 = 2,730,752 inside; 61.38 GiB (the next least)
    would give about 2,896,300 tokens."""
    model = load_model(str(CONFIGS / "meta-llama--Llama-3.1-70B-Instruct.json"))
    result = explain(ExplainRequest(log=parse_engine_log(_log(free)), model=model,
                                    settings=parse_flags("trtllm", FLAGS)))  # fmt: skip
    assert result.logged.available_kv_bytes == round(57.87 * GIB)
    assert result.logged.ranks_seen == 8
    assert result.verdict == "match"
    fraction: float = struct.unpack("f", struct.pack("f", 0.9))[0]
    low, high = (int(fraction * gib * GIB / 20_480) for gib in (57.865, 57.875))
    assert (low, high) == (2_730_413, 2_730_885)
    assert -(-low // 64) * 64 <= 2_730_752 <= -(-high // 64) * 64
    assert result.ledger is not None and abs(result.ledger.token_capacity - 2_730_752) <= 64
    assert len(result.pool_checks) == 1  # the same `Allocated …` line of eight ranks is checked once


@pytest.mark.parametrize("free", [FREE_AS_PRINTED, FREE_AS_PRINTED[::-1]], ids=["as printed", "least printed last"])
def test_explain_says_what_the_tightest_rank_cost(free: tuple[str, ...]) -> None:
    """Had the tightest rank (57.87 GiB) held as much as the next tightest (61.38 GiB, 3.51 GiB more), the MIN would
    fall on 61.38: 0.899999976 × 61.38 GiB ÷ 20,480 B = 2,896,271 max tokens against 0.899999976 × 57.87 GiB ÷ 20,480 B
    = 2,730,649, 165,622 tokens more on every rank. Not the most free rank's 61.64 GiB (2,908,540, 177,891 more):
    six other ranks would still be tighter than it."""
    fraction: float = struct.unpack("f", struct.pack("f", 0.9))[0]
    next_tightest, tightest = (int(fraction * round(gib * GIB) / 20_480) for gib in (61.38, 57.87))
    assert (next_tightest, tightest) == (2_896_271, 2_730_649)
    model = load_model(str(CONFIGS / "meta-llama--Llama-3.1-70B-Instruct.json"))
    result = explain(ExplainRequest(log=parse_engine_log(_log(free)), model=model,
                                    settings=parse_flags("trtllm", FLAGS)))  # fmt: skip
    said = [note for note in result.notes if note.startswith("the next tightest rank")]
    assert said and "had 61.38 GiB, 3.51 GiB more than the tightest, the most 61.64 GiB" in said[0]
    assert f"about {next_tightest - tightest:,} tokens more" in said[0]
    assert "§5/§21" in said[0]


def test_no_spread_is_said_where_every_rank_had_the_same() -> None:
    """Eight unprefixed lines all at 57.87 GiB: the pool is the same whichever rank sized it, nothing to say."""
    model = load_model(str(CONFIGS / "meta-llama--Llama-3.1-70B-Instruct.json"))
    result = explain(ExplainRequest(log=parse_engine_log(_log(("57.87",) * 8)), model=model,
                                    settings=parse_flags("trtllm", FLAGS)))  # fmt: skip
    assert result.logged.ranks_seen == 8
    assert not [note for note in result.notes if note.startswith("the next tightest rank")]
