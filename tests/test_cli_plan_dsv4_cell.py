"""`kvtop plan` of DeepSeek-V4 on SGLang shows the cell its capacity is solved with, and nothing else per token.

The engine's figure: SGLang 0.5.23's `DSV4PoolConfigurator.bytes_per_full_token` for DeepSeek-V4-Pro, 10,115.25 B
(its arithmetic as tests/domain/test_deepseek_v4.py spells it; the harness records its whole bytes, 10,115, as
`cell_size` in the registry rows of tests/data/engine_diff/registry/sglang-0.5.23.json at TP 1 and 2: the cell
holds one 512-wide KV head replicated on every rank, so TP 8 holds the same). The c128 state rings its 257 request
slots fix: ceil((257 × 128 + 129) / 128) × 128 rows × 2 × 512 × 4 B × 30 ratio-128 layers = 4,209,508,352 B.
Before this, the table and JSON said 41,135 B per token (the book's raw full and SWA rows added).
"""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main
from tests.conftest import CONFIGS, DATA

PRO = str(CONFIGS / "heldout" / "deepseek-ai--DeepSeek-V4-Pro.json")
REGISTRY = DATA / "engine_diff" / "registry" / "sglang-0.5.23.json"
ARGS = ("--model", PRO, "--gpu", "H200", "--engine-version", "0.5.23", "--no-calibration-store",
        "--cmd", "python -m sglang.launch_server --model-path x --tp 8")  # fmt: skip
ENGINE_CELL, C128_STATES = 10_115.25, 4_209_508_352


def test_the_registry_rows_hold_the_engines_cell() -> None:
    rows = json.loads(REGISTRY.read_text())["rows"]
    cells = {r["tp"]: r["cell_size"] for r in rows if r["config"] == "deepseek-ai--DeepSeek-V4-Pro"}
    assert cells == {1: int(ENGINE_CELL), 2: int(ENGINE_CELL)}


def test_json_and_every_rank_carry_the_cell_the_capacity_divides_by(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["plan", "--json", *ARGS]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["kv_cell"]["bytes_per_token"] == ENGINE_CELL and out["kv_cell"]["unit"] == "per full token"
    assert out["kv_cell"]["fixed_bytes"] == C128_STATES
    assert out["kv_bytes_per_token_exact"] == ENGINE_CELL
    assert {r["kv_bytes_per_token"] for r in out["ranks"]} == {out["kv_bytes_per_token"]} == {10_116}
    assert out["tokens_per_gib"] == (1 << 30) / ENGINE_CELL
    # calculate_pool_sizes: the budget less the fixed rings, over the cell, to the 256-token page
    assert out["token_capacity"] == int((out["kv_budget_bytes"] - C128_STATES) / ENGINE_CELL) // 256 * 256 > 0


def test_the_table_names_the_cell_and_its_fixed_states(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", *ARGS]) == 0
    text = capsys.readouterr().out
    assert "KV per full token per rank — ranks 0–7: 10,115.25 B" in text
    assert (
        "4.21 GB (3.92 GiB) fixed before any token: c128 compress states: 257 request slots × 128 rows"
        in text
    )
    assert "41,135" not in text
    assert f"Exchange rate       {(1 << 30) / ENGINE_CELL:,.0f} tokens per GiB" in text
