"""A disaggregated TensorRT-LLM worker's cache transceiver buffers are named in the plan, sized per buffer, not charged
(trtllm/transceiver_buffers.py, docs/engines/trtllm.md §8).

The launch is a real one's (tests/data/calibration/trtllm.jsonl, ddpslab-disagg-t1-qwen3-4b-l4-trtllm-121;
ddps-lab/disaggregation-TensorRT-LLM's T1 ctx worker YAML): Qwen3-4B on a 24 GB card, 1.2.1, fraction 0.85,
`cache_transceiver_config: {backend: NIXL, max_tokens_in_buffer: 8192}`. One transfer buffer by
cacheTransBuffer.cpp's arithmetic, done by hand: Qwen3-4B's KV per token is 36 layers × 8 KV heads × 128 × 2 (K, V)
× 2 B = 147,456 B; its window (max_seq_len 40,960, whole blocks of 32) is above 8,192, so (8,192 + 32) × 147,456 =
1,212,678,144 B (1.13 GiB), which costs the pool 0.85 × that ÷ 147,456 = 6,990 tokens.
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from kvtop.domain.engines.trtllm.transceiver_buffers import transfer_buffer_bytes
from tests.data_paths import CONFIGS

QWEN3_4B = CONFIGS / "heldout" / "wave3" / "Qwen--Qwen3-4B.json"
FLAGS = ["--backend", "pytorch", "--tp_size", "1", "--max_batch_size", "256", "--max_num_tokens", "8192",
         "--kv_cache_config.free_gpu_memory_fraction", "0.85", "--kv_cache_config.enable_block_reuse", "false"]  # fmt: skip
TRANSCEIVER = ["--cache_transceiver_config.backend", "NIXL", "--cache_transceiver_config.max_tokens_in_buffer", "8192"]


def _plan(capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, object]:
    assert main(["plan", "--json", "--no-calibration-store", "--model", str(QWEN3_4B), "--engine", "trtllm",
                 "--engine-version", "1.2.1", "--gpu", "L4", "--", *FLAGS, *extra]) == 0  # fmt: skip
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def test_one_buffer_by_hand() -> None:
    assert transfer_buffer_bytes(8_192, 40_960, 32, 147_456) == 1_212_678_144
    # a window below max_tokens_in_buffer bounds it, rounded up to whole blocks (4,001 -> 126 × 32 = 4,032), one block added
    assert transfer_buffer_bytes(8_192, 4_001, 32, 1_000) == (4_032 + 32) * 1_000


def test_the_worker_names_its_buffers_and_is_not_charged(capsys: pytest.CaptureFixture[str]) -> None:
    worker, plain = _plan(capsys, *TRANSCEIVER), _plan(capsys)
    assert worker["token_capacity"] == plain["token_capacity"]  # named, not charged
    notes = " ".join(str(n) for n in worker["notes"])  # type: ignore[attr-defined]
    assert "cache_transceiver_config (backend NIXL)" in notes and "not modelled" in notes
    assert "1.13 GiB each at max_tokens_in_buffer 8,192" in notes and "6,990 tokens" in notes
    assert "cache_transceiver_config" not in " ".join(str(n) for n in plain["notes"])  # type: ignore[attr-defined]
