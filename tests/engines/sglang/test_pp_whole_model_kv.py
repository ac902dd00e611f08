"""SGLang 0.5.23 sizes every PP stage's KV for the whole model where the top-level class has no stage range (S13).

Expected figures are the engine's own runs under PP (tests/data/engine_diff/sglang-0.5.23.flags.json, each
stage run in its own process by benchmarks/engine_diff): every stage's layer range is the whole model, so the
cell is the whole model's and the tokens the rest 40 GiB over it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.engine_diff.cases import config_path
from benchmarks.engine_diff.kvtop_side import kvtop_plan
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.sources.hub import load_model
from tests.data_paths import DATA

FLAG_ROWS = DATA / "engine_diff" / "sglang-0.5.23.flags.json"


def _row(config: str, variant: str) -> dict[str, Any]:
    rows = json.loads(FLAG_ROWS.read_text())["results"]
    return next(r for r in rows if r["config"] == config and r.get("variant") == variant)


@pytest.mark.parametrize(
    ("config", "variant", "cell", "tokens"),
    [
        # 28 layers × 4 KV heads ÷ 2 (TP 2) × 128 × 2 (K, V) × 2 B = 28,672 B: every layer, not the stage's 14
        ("Qwen--Qwen2.5-VL-7B-Instruct", "pp2", 28 * 2 * 128 * 2 * 2, 1_494_308),
        ("Qwen--Qwen2.5-VL-7B-Instruct", "pp4", 28 * 4 * 128 * 2 * 2, 747_154),  # TP 1: 4 heads
        # 62 layers × 8 KV heads ÷ 2 × 128 × 2 × 2 B = 126,976 B
        ("MiniMaxAI--MiniMax-M2.5", "pp2", 62 * 4 * 128 * 2 * 2, 338_250),
        ("mistralai--Mistral-Small-3.1-24B-Instruct-2503", "pp2", 40 * 4 * 128 * 2 * 2, 523_008),
        ("google--gemma-4-26B-A4B", "pp4", 184_320, 232_448),
    ],
)
def test_every_stage_sizes_kv_for_the_whole_model(config: str, variant: str, cell: int, tokens: int) -> None:
    row = _row(config, variant)
    assert {tuple(stage["layers"]) for stage in row["stages"]} == {(0, row["stages"][0]["layers"][1])}
    assert (row["cell_size"], row["max_total_num_tokens"]) == (cell, tokens)
    plan = kvtop_plan("sglang", "0.5.23", row)
    assert (plan["cell_bytes"], plan["tokens"]) == (cell, tokens)
    assert plan["max_running_requests"] == row["max_running_requests"]


def _ranks_full_layers(version: str) -> tuple[list[int], tuple[str, ...]]:
    model = load_model(str(config_path("Qwen--Qwen2.5-VL-7B-Instruct")))
    settings = parse_flags("sglang", ["--tp", "2", "--pp", "2"]).model_copy(
        update={"engine_version": version}
    )
    ledger = predict(model, settings, gpu_total_bytes=81559 << 20, gpu_name="H100")
    return [rank.kv.pool("full").layers for rank in ledger.ranks], ledger.engine.notes


def test_the_plan_says_every_stage_sizes_the_whole_model() -> None:
    layers, notes = _ranks_full_layers("0.5.23")
    assert layers == [28] * 4  # every rank of both stages: all 28 layers
    assert any("sizes KV for all 28 layers" in note for note in notes)
    layers, notes = _ranks_full_layers("0.5.6.post2")  # not checked before 0.5.23: the stage's 14
    assert layers == [14] * 4 and not any("sizes KV for all" in note for note in notes)
