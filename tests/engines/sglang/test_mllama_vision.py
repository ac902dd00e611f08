"""Llama-3.2-Vision's (Mllama's) vision model and projector as SGLang 0.5.23 builds them on the meta device (#26).

Expected figures: the engine's own (tests/data/engine_diff/registry/sglang-0.5.23.json, the rows of
default--MllamaForConditionalGeneration: `named_parameters()` bytes of vision_model and multi_modal_projector at
TP 1 and 2) and SGLang's mllama.py arithmetic by hand below; never kvtop's own figures.
"""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.engine_diff.registry_judge import kvtop_answer
from benchmarks.engine_diff.registry_sweep import row_of

CONFIG = "default--MllamaForConditionalGeneration"
BF16 = 2
# the config's vision_config (MllamaVisionConfig's defaults): width 1,280, MLP 5,120, 32 local + 8 global layers,
# 3 channels, patch 14, image 448 (32² + 1 = 1,025 positions), 4 tiles, 8 aspect ratios (9 embedding rows)
W, MLP, LAYERS, POSITIONS, ROWS, TILES = 1280, 5120, 32 + 8, 1025, 9, 4
PATCH = 3 * 14 * 14 * W  # ColumnParallelConv2dPatch's linear, no bias: split
# per layer, split: qkv (W × 3W and its 3W bias), proj (W × W), fc1 (W × MLP and its bias), fc2 (MLP × W)
SPLIT_LAYER = W * 3 * W + 3 * W + W * W + W * MLP + MLP + MLP * W
# whole: class embedding; gate + position table + tile table; two aspect-ratio embeddings and gates; two
# LayerNorms; per layer two LayerNorms and proj's and fc2's biases; the 8 global layers' two gates each
WHOLE = W + 1 + POSITIONS * W + ROWS * TILES * POSITIONS * W + 2 * (ROWS * TILES * W + 1) + 2 * 2 * W
WHOLE += LAYERS * (2 * 2 * W + W + W) + 2 * 8
PROJECTOR = 7680 * 4096 + 4096  # ReplicatedLinear(vision_output_dim → text hidden, bias): whole


def _row(tp: int) -> dict[str, Any]:
    return row_of("sglang", "0.5.23", CONFIG, tp)


@pytest.mark.parametrize("tp", [1, 2])
def test_vision_model_and_projector_are_booked_as_the_engine_builds_them(tp: int) -> None:
    """vision_model 1,672,985,638 B at TP 1 and 885,442,598 B at TP 2, multi_modal_projector 62,922,752 B at
    either: the hand arithmetic above; kvtop's stage weights are the meta build's whole total."""
    bytes_ = _row(tp)["stages"][0]["param_bytes"]
    assert bytes_["vision_model"] == (WHOLE + (PATCH + LAYERS * SPLIT_LAYER) // tp) * BF16
    assert bytes_["vision_model"] == {1: 1_672_985_638, 2: 885_442_598}[tp]
    assert bytes_["multi_modal_projector"] == PROJECTOR * BF16 == 62_922_752
    plan = kvtop_answer("sglang", "0.5.23", _row(tp))
    assert plan["status"] == "ok" and plan["not_modelled"] == []
    assert [stage["weights_bytes"] for stage in plan["stages"]] == [sum(bytes_.values())]
