"""`kvtop plan --compare`'s same-budget rows say why one holds the budget yet 0 tokens: the engine would not start.

Qwen3-32B on one H100 (context 40,960): SGLang's budget is 4,566,820,044 B per rank; vLLM given it by
`--kv-cache-memory-bytes` refuses to start, since one request at its max model length needs
ceil(40,960 ÷ 64) = 640 blocks of 64 tokens × 262,144 B (64 layers × 8 KV heads × 128 × 2 (K, V) × 2 B)
= 16 MiB each, 10 GiB, more than the budget (vLLM's `_check_enough_kv_cache_memory`, v1/core/kv_cache_utils.py).
The row showed a bare 0; now it says so, with what is short.
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from tests.conftest import CONFIGS

QWEN32 = str(CONFIGS / "Qwen--Qwen3-32B.json")
BASE = ["plan", "--model", QWEN32, "--compare", "all", "--no-calibration-store"]
ONE_REQUEST = 640 * 64 * 262_144  # 10 GiB: one request at 40,960 tokens in vLLM's 64-token blocks


def test_a_row_that_does_not_start_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*BASE, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    target = data["target_kv_budget_bytes"]
    assert target == 4_566_820_044
    vllm = next(same for same in data["same_budget"] if same["engine"] == "vllm")
    assert vllm["token_capacity"] == 0 and vllm["fits"] is False
    assert vllm["shortfall_bytes"] == ONE_REQUEST - target == 6_170_598_196
    blocks = target // (64 * 262_144)  # 272 blocks fit the budget
    assert 0 < vllm["starts_at_context"] <= blocks * 64 == 17_408
    others = [same for same in data["same_budget"] if same["engine"] != "vllm"]
    assert others and all(same["fits"] and same["shortfall_bytes"] == 0 for same in others)

    assert main(BASE) == 0
    line = next(row for row in capsys.readouterr().out.splitlines() if row.startswith("  vLLM ") and "--kv-cache" in row)
    assert "(does not start at this context: 6.17 GB (5.75 GiB) short per rank; a context of" in line
    assert "or less starts)" in line
