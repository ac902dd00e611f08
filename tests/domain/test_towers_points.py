"""POINTS-1.5's Qwen2-VL ViT and its second patch merger (kvtop.domain.architectures.towers_points).

Oracle: SGLang 0.5.23's meta build of the composed POINTSV15ChatModel.json (tests/data/engine_diff/registry/configs;
SOURCES.md: the fields of WePOINTS--POINTS-1-5-Qwen-2-5-7B-Chat's file), kept as its registry rows
(sglang-0.5.23.json): vision_encoder 1,351,518,208 B and vision_projector 89,151,488 B at TP 1, 677,516,288 B and
44,581,888 B at TP 2.
"""

from __future__ import annotations

import json

import pytest

from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.engines.sglang.architectures import TOWER_SPLIT
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.data_paths import DATA

NAME = "default--POINTSV15ChatModel"
CONFIG = DATA / "engine_diff" / "registry" / "configs" / "POINTSV15ChatModel.json"
ENGINE = {1: {"vision_encoder": 1_351_518_208, "vision_projector": 89_151_488},
          2: {"vision_encoder": 677_516_288, "vision_projector": 44_581_888}}  # fmt: skip
BF16 = 2
W, MLP, DEPTH, TEXT = 1280, 5120, 32, 3584  # embed_dim, embed_dim × mlp_ratio 4, depth; llm_config.hidden_size
MERGED = W * 4  # spatial_merge_size 2: 2² patches a token
MERGER = 2 * W + MERGED * MERGED + MERGED + MERGED * TEXT + TEXT  # ln_q, fc1 and fc2 with biases
MERGER_WHOLE = 2 * W + TEXT  # ln_q and the row-parallel fc2's bias


def test_the_engines_bytes_are_the_towers_arithmetic() -> None:
    """Qwen2VisionTransformer (SGLang 0.5.23 qwen2_vl.py:289-334): Conv3d patch 3·2·14² → 1280 without bias (:198),
    32 blocks (Qwen2VisionBlock :142-155: two LayerNorms, qkv 1280 → 3·1280 and proj with biases, fc1 / fc2 1280 ↔
    5120 with biases, :107-114) and its merger (:223-224); the vision_projector is a second
    Qwen2VisionPatchMerger(d_model 3584, context_dim 1280) (points_v15_chat.py:98-100): 44,575,744 parameters."""
    block = 4 * W + 3 * W * W + 3 * W + W * W + W + 2 * W * MLP + MLP + W
    vit = 3 * 2 * 14 * 14 * W + DEPTH * block + MERGER
    assert MERGER == 44_575_744
    assert (BF16 * vit, BF16 * MERGER) == tuple(ENGINE[1].values())
    assert ENGINE[2]["vision_projector"] == BF16 * (MERGER - MERGER_WHOLE) // 2 + BF16 * MERGER_WHOLE


@pytest.mark.parametrize("tp", [1, 2])
def test_tower_bytes_equal_sglangs_meta_build(tp: int) -> None:
    row = row_of("sglang", "0.5.23", NAME, tp)
    parts = row["stages"][0]["param_bytes"]
    assert {key: parts[key] for key in ENGINE[tp]} == ENGINE[tp]
    model = model_from_config(json.loads(CONFIG.read_text()), source=NAME)
    assert not any("vision" in note for note in model.not_modelled)
    book = weights_book(model, ParallelLayout(tp=tp), range(0, 28), first_stage=True, last_stage=True,
                        tower_split=TOWER_SPLIT)  # fmt: skip
    (vision,) = [r for r in book.rows if r.component == "vision"]
    assert int(vision.bytes) == sum(ENGINE[tp].values()) == {1: 1_440_669_696, 2: 722_098_176}[tp]
