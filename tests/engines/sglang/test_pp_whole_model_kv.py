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
        # DeciLM (Nemotron-Super-49B): SGLang books all 80 layers, the 31 no-op attention ones too (its pp1 cell),
        # 8 KV heads ÷ 2 × 128 × 2 × 2 B = 2,048 B each: 163,840 B; 40 GiB ÷ 163,840 = 262,144 (the stage's 40: twice)
        ("nvidia--Llama-3_3-Nemotron-Super-49B-v1", "pp2", 80 * 4 * 128 * 2 * 2, 262_144),
        ("nvidia--Llama-3_3-Nemotron-Super-49B-v1", "pp4", 80 * 8 * 128 * 2 * 2, 131_072),  # TP 1: 40 GiB ÷ 327,680
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


@pytest.mark.parametrize(
    ("config", "variant", "cell", "tokens"),
    [
        # Nemotron-H: the attention cell holds all 6 attention layers (TP 2: 1 KV head × 128 × 2 × 2 B = 512 B
        # each), the Mamba pool each stage's own layers: (40 GiB − 1,588 slots × stage 0's 12 layers' state,
        # 12,804,096 B) ÷ 3,072 = 7,362,229; kvtop's stage cell (3 layers) gave twice that
        ("nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "pp2", 6 * 512, 7_362_229),
        ("nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "pp4", 6 * 1024, 3_681_114),  # TP 1: 2 KV heads
        ("nvidia--Nemotron-H-56B-Base-8K", "pp4", 10 * 4096, 557_582),  # stages' state layers 14, 13, 13, 14
    ],
)
def test_nemotron_h_sizes_every_attention_layer_and_its_own_mamba_layers(
    config: str, variant: str, cell: int, tokens: int
) -> None:
    row = _row(config, variant)
    assert (row["cell_size"], row["max_total_num_tokens"]) == (cell, tokens)
    plan = kvtop_plan("sglang", "0.5.23", row)
    assert (plan["cell_bytes"], plan["tokens"]) == (cell, tokens)


def test_every_stages_mamba_pool_is_the_fattest_stages() -> None:
    """Qwen3.5-35B-A3B TP1×PP4: stages of 10 layers hold 8, 7, 8, 7 linear-attention layers and 2, 3, 2, 3 full
    ones. Every stage's state pool is stage 0's (1,181 slots × 8 layers' state), so stage 1's 6,144-B cell gives
    (40 GiB − 100 MiB − 20,278,280,192) ÷ 6,144 = 3,672,938, SGLang's MIN; its own 7 layers would give 4,085,501."""
    row = _row("Qwen--Qwen3.5-35B-A3B", "pp4")
    assert row["max_total_num_tokens"] == 3_672_938
    assert kvtop_plan("sglang", "0.5.23", row)["tokens"] == 3_672_938
