"""A size flag's bounds said in the unit typed (session 62's operator pass).

`--kv-cache-memory-bytes 1000TiB` read 'must be at most 1,099,511,627,776 (got 1,099,511,627,776,000)': bytes with no
unit after the operator wrote TiB. kvtop's bound on a byte count is 2^40 B = 1 TiB (launch_vocabulary.MAX_COUNT);
1000 TiB = 1000 × 2^40 B; 2,000,000 GB = 2 × 10^15 B and 2^40 B = 1,099.51 GB (1,099,511,627,776 ÷ 10^9).
"""

from __future__ import annotations

import pytest

from kvtop.domain.errors import InputError
from kvtop.domain.launch import parse_flags


@pytest.mark.parametrize(
    ("engine", "flag", "typed", "said"),
    [
        ("vllm", "--kv-cache-memory-bytes", "1000TiB", "must be at most 1 TiB (got 1,000 TiB)"),
        ("vllm", "--kv-cache-memory-bytes", "1.5TiB", "must be at most 1 TiB (got 1.50 TiB)"),
        ("vllm", "--kv-cache-memory-bytes", "2000000GB", "must be at most 1,099.51 GB (got 2,000,000 GB)"),
        # typed as a byte count: said in bytes, with their unit
        ("vllm", "--kv-cache-memory-bytes", str(1000 << 40), "must be at most 1,099,511,627,776 B (got 1,099,511,627,776,000 B)"),
        # TensorRT-LLM's byte cap: a count of bytes only (no unit taken), said in B
        ("trtllm", "--kv_cache_config.max_gpu_total_bytes", str(10**17),
         "must be at most 1,099,511,627,776 B (got 100,000,000,000,000,000 B)"),
    ],
)  # fmt: skip
def test_a_size_above_its_bound_is_said_in_the_unit_typed(engine: str, flag: str, typed: str, said: str) -> None:
    with pytest.raises(InputError) as refused:
        parse_flags(engine, [flag, typed], strict=True)
    assert refused.value.field == flag
    assert str(refused.value).endswith(said), str(refused.value)


def test_a_size_at_its_bound_is_taken() -> None:
    assert parse_flags("vllm", ["--kv-cache-memory-bytes", "1TiB"], strict=True).kv_cache_memory_bytes == 1 << 40


def test_a_count_that_is_no_size_keeps_its_plain_bound() -> None:
    with pytest.raises(InputError, match=r"must be at most 1,099,511,627,776 \(got 1,099,511,627,777\)"):
        parse_flags("vllm", ["--max-num-batched-tokens", str((1 << 40) + 1)], strict=True)
