"""POINTS-1.5's vision tower (POINTSV15ChatModel, SGLang 0.5.23 only): the Qwen2-VL ViT and a second patch merger.

SGLang 0.5.23 points_v15_chat.py builds `Qwen2VisionTransformerForNavitPOINTS(config.vision_config)` (a
Qwen2VisionTransformer: the qwen2_vl kind counts it, its own merger included) and beside it `vision_projector =
Qwen2VisionPatchMerger(d_model=llm_config.hidden_size, context_dim=1280)` (qwen2_vl.py:210-240, spatial_merge_size
2 by default): LayerNorm(1280) with its bias, ColumnParallelLinear 1280·4 → 1280·4 with its bias, RowParallelLinear
1280·4 → d_model with its bias: both linears' weights and the first's bias split over TP, the LayerNorm and the row
bias whole. Its context_dim is a constant (1280, Qwen2-VL's embed_dim), not read from the config.
SGLang's meta build of the composed POINTSV15ChatModel.json (tests/data/engine_diff/registry/SOURCES.md):
vision_encoder 1,351,518,208 B and vision_projector 89,151,488 B at TP 1; 677,516,288 B and 44,581,888 B at TP 2.
"""

from __future__ import annotations

from kvtop.domain.tower_spec import TowerSpec

CONFIG_CLASS = "Qwen2VLVisionConfig"  # SGLang 0.5.23 configs/points_v15_chat.py builds vision_config as one
SOURCE = "SGLang 0.5.23 models/points_v15_chat.py (Qwen2VisionTransformer and a second Qwen2VisionPatchMerger)"
CONTEXT_DIM, MERGE = 1280, 2  # the engine's constants (points_v15_chat.py context_dim; the merger's default)


def with_projector(qwen: TowerSpec, text_hidden: int) -> TowerSpec:
    """The Qwen2-VL ViT as the qwen2_vl kind counts it, and the vision_projector merger to `text_hidden`."""
    width = CONTEXT_DIM * MERGE * MERGE
    split = width * width + width + width * text_hidden  # fc1 with its bias, fc2's weight
    whole = 2 * CONTEXT_DIM + text_hidden  # ln_q, fc2's bias
    return qwen.model_copy(update={"params": qwen.params + split + whole,
                                   "tp_split_params": qwen.tp_split_params + split,
                                   "config_class": CONFIG_CLASS, "source": SOURCE})  # fmt: skip
