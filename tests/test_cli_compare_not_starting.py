"""`kvtop plan --compare`'s same-budget rows say why one holds the budget yet 0 tokens: the engine would not start.

Qwen3-32B on one H100 (context 40,960): SGLang's budget per rank (its own row's, about 4.4 GB); vLLM given it by
`--kv-cache-memory-bytes` refuses to start, since one request at its max model length needs
ceil(40,960 ÷ 64) = 640 blocks of 64 tokens × 262,144 B (64 layers × 8 KV heads × 128 × 2 (K, V) × 2 B)
= 16 MiB each, 10 GiB, more than the budget (vLLM's `_check_enough_kv_cache_memory`, v1/core/kv_cache_utils.py).
The row showed a bare 0; now it says so, with what is short.
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from kvtop.units import fmt_both_or_binary
from tests.conftest import CONFIGS

QWEN32 = str(CONFIGS / "Qwen--Qwen3-32B.json")
BASE = ["plan", "--model", QWEN32, "--compare", "all", "--no-calibration-store"]
ONE_REQUEST = 640 * 64 * 262_144  # 10 GiB: one request at 40,960 tokens in vLLM's 64-token blocks


def test_a_row_that_does_not_start_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*BASE, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    target = data["target_kv_budget_bytes"]
    sglang = next(row for row in data["engines"] if row["engine"] == "sglang")
    assert target == sglang["kv_budget_bytes"] and 0 < target < ONE_REQUEST  # the reference's own budget, below 10 GiB
    vllm = next(same for same in data["same_budget"] if same["engine"] == "vllm")
    assert vllm["token_capacity"] == 0 and vllm["fits"] is False and vllm["not_starting"] == "context"
    assert vllm["shortfall_bytes"] == ONE_REQUEST - target  # vLLM's check: one request's 640 blocks less the budget
    blocks = target // (64 * 262_144)  # the whole blocks the budget holds
    assert 0 < vllm["starts_at_context"] <= blocks * 64 < 40_960
    others = [same for same in data["same_budget"] if same["engine"] != "vllm"]
    assert others and all(same["fits"] and same["shortfall_bytes"] == 0 for same in others)

    assert main(BASE) == 0
    line = next(row for row in capsys.readouterr().out.splitlines() if row.startswith("  vLLM ") and "--kv-cache" in row)
    assert f"(does not start at this context: {fmt_both_or_binary(ONE_REQUEST - target)} short per rank; a context of" in line
    assert "or less starts)" in line


def test_a_row_that_fails_on_something_else_names_no_context(capsys: pytest.CaptureFixture[str]) -> None:
    """Falcon-Mamba-7B on one H100, vLLM's budget given to SGLang: even --mem-fraction-static 1 falls short, and at 1
    SGLang keeps no reserve for its request-to-token pool, so it fails at start (`whole_fraction_note`), whatever the
    context: the row says it does not start and what is short, never that a shorter context starts."""
    base = ["plan", "--model", str(CONFIGS / "tiiuae--falcon-mamba-7b.json"), "--gpu", "H100", "--compare",
            "vllm,sglang", "--no-calibration-store"]  # fmt: skip
    assert main([*base, "--json"]) == 0
    (sglang,) = json.loads(capsys.readouterr().out)["same_budget"]
    assert sglang["fits"] is False and sglang["not_starting"] == "other" and sglang["starts_at_context"] is None
    assert sglang["shortfall_bytes"] > 0
    assert main(base) == 0
    *_, line = [row for row in capsys.readouterr().out.splitlines() if row.startswith("  SGLang ")]  # same budget
    assert f"(does not start: {fmt_both_or_binary(sglang['shortfall_bytes'])} short per rank)" in line
    assert "context" not in line
