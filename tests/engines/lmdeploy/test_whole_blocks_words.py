"""LMDeploy's plan says why the KV pool is less than the object cache it is cut from (session 69's operator pass).

`kvtop plan` for LMDeploy printed "object cache … 13.93 GiB" and "KV pool 13.92 GiB" with nothing between them, which
an operator read as a leak. TurboMind allocates whole blocks (`max_block_count = cache bytes / block bytes`, integer
division): the blocks row now says the pool is the cache less what does not fill one more block.

Expected figures from the config and TurboMind's arithmetic: Qwen3-32B (tests/data/configs) has 64 layers × 8 KV
heads × 128 head_dim × 2 (K, V) × 2 B = 262,144 B a token; 64-token blocks are 16,777,216 B; the blocks are the
object cache's bytes // 16,777,216 and the rest is what no block holds.
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from tests.conftest import CONFIGS

QWEN3_32B = CONFIGS / "Qwen--Qwen3-32B.json"
BLOCK = 64 * 64 * 8 * 128 * 2 * 2  # 16,777,216 B
ARGS = ["plan", "--engine", "lmdeploy", "--model", str(QWEN3_32B), "--gpu", "H100"]


def test_the_blocks_row_says_the_pool_is_the_cache_in_whole_blocks(capsys: pytest.CaptureFixture[str],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setenv("KVTOP_NO_CALIBRATION_STORE", "1")
    assert main([*ARGS, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    cache = next(step["bytes"] for step in out["steps"] if step["label"].startswith("object cache"))
    blocks, left = divmod(cache, BLOCK)
    assert (out["num_blocks"], out["kv_pool_bytes"]) == (blocks, blocks * BLOCK) == (891, 14_948_499_456)
    said = (f"whole blocks only: 891 × 16,777,216 B = {blocks * BLOCK / 2**30:.2f} GiB, the KV pool's blocks: the "
            f"object cache less the {left / 2**20:.1f} MiB that do not fill one more block")  # fmt: skip
    assert said.endswith("= 13.92 GiB, the KV pool's blocks: the object cache less the 6.3 MiB that do not fill one more block")
    assert next(s["note"] for s in out["steps"] if s["label"] == "blocks (max_block_count)") == said
    assert main(ARGS) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "the KV pool's blocks: the object cache less the 6.3 MiB" in text and "KV pool 14.95 GB (13.92 GiB)" in text


def test_a_linear_state_is_said_beside_the_object_cache(capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """Qwen3-Next on TurboMind: the blocks are cut from the object cache less the linear state (the step before), so
    the note says both; it said "the object cache less the 0.7 MiB" beside a 51.28 GiB cache and 14.43 GiB of blocks.
    Expected from the config: 48 layers, every 4th full attention (12), 2 KV heads over TP 2 (1 a rank) × 256
    head_dim × 2 (K, V) × 2 B = 12,288 B a token; 64-token blocks are 786,432 B."""
    monkeypatch.setenv("KVTOP_NO_CALIBRATION_STORE", "1")
    block = 12 * 1 * 256 * 2 * 2 * 64
    args = ["plan", "--engine", "lmdeploy", "--backend", "turbomind", "--gpu", "H200", "--tp", "2", "--json",
            "--model", str(CONFIGS / "Qwen--Qwen3-Next-80B-A3B-Thinking.json")]  # fmt: skip
    assert main(args) == 0
    steps = json.loads(capsys.readouterr().out)["steps"]
    cache = next(step["bytes"] for step in steps if step["label"].startswith("object cache"))
    state = -next(step["bytes"] for step in steps if step["label"].startswith("− linear state"))
    blocks, left = divmod(cache - state, block)
    note = next(s["note"] for s in steps if s["label"] == "blocks (max_block_count)")
    assert note.startswith(f"whole blocks only: {blocks:,} × 786,432 B = ")
    assert note.endswith(f"the object cache less the linear state less the {left / 2**20:.1f} MiB that do not fill "
                         "one more block")  # fmt: skip
