"""GLM-4.1V's / GLM-4.5V's vision transformer and patch merger (Glm4vVisionConfig), counted as vLLM 0.33.0 and
SGLang 0.5.23 build and shard them (towers.py picks this kind from the glm4v_text and glm4v_moe_text entries).

vLLM 0.33.0 glm4_1v.py `Glm4vVisionTransformer` (Glm4vMoeForConditionalGeneration reuses it):
- `patch_embed`: a Conv3d in_channels × temporal_patch_size × patch² → width, with bias (whole);
- `embeddings.position_embedding`: an nn.Embedding of (image_size ÷ patch_size)² rows (whole);
- `depth` blocks: two RMSNorms (weight), qkv (QKVParallelLinear) and proj (RowParallelLinear), no biases, and a
  gated MLP whose width is `out_hidden_size` (gate_up MergedColumnParallelLinear, down RowParallelLinear, no
  biases): split over TP;
- `post_conv_layernorm` and `post_layernorm` (RMSNorm), `downsample` a Conv2d width → out_hidden_size over
  spatial_merge_size² with bias (whole);
- `merger` (Glm4vPatchMerger): proj out → out (ColumnParallelLinear), a LayerNorm (weight, bias), gate_up
  out → 2 × intermediate_size and down back (Merged/RowParallelLinear), no biases: split but the LayerNorm.
Meta-built (`registry_sweep.py --params default--Glm4vForConditionalGeneration`): 1,784,996,864 B at TP 1,
920,445,952 B a rank at TP 2. SGLang 0.5.23 glm4v.py builds the same parameters but the merger's proj as a
ReplicatedLinear (whole: `projector_params`, whole where TowerSplit.projector_whole) and its LayerNorm in
float32 (srt/layers/layernorm.py LayerNorm: `float32_norm_params`, TowerSplit.float32_norms); the position
table is an nn.Embedding, whole in both: 1,785,013,248 B at TP 1, 937,239,552 B a rank at TP 2.
The blocks' attention (qkv and proj, `head_split_params`, block class Glm4vVisionTransformer) divides by each
engine's rule (kvtop.domain.tower_blocks): vLLM asserts num_heads divides by TP, SGLang pads the heads with zero
dummy heads to a multiple of TP (one head: depth × 4 × head_dim × width, `head_params`). zai-org/GLM-4.5V (12
heads) at TP 8: vLLM refuses ("12 is not divisible by 8"), SGLang's visual 311,829,504 B a rank.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvtop.domain.tower_spec import TowerSpec

BLOCK_CLASS = "Glm4vVisionTransformer"  # the engines' rules for its attention: TowerSplit.blocks


def glm4v_vision(values: Mapping[str, Any], config_class: str, source: str) -> TowerSpec:
    """The visual's parameters (whole model): those split over TP and the rest."""
    width, mlp, depth = values["hidden_size"], values["out_hidden_size"], values["depth"]
    out, context, merge = values["out_hidden_size"], values["intermediate_size"], values["spatial_merge_size"]
    positions = (values["image_size"] // values["patch_size"]) ** 2
    whole = values["in_channels"] * values["temporal_patch_size"] * values["patch_size"] ** 2 * width + width
    whole += (
        positions * width + depth * 2 * width + 2 * width
    )  # the table; block, post-conv and post RMSNorms
    whole += width * out * merge * merge + out + 2 * out  # downsample with its bias; the merger's LayerNorm
    attention = depth * (3 * width * width + width * width)  # qkv and proj, no biases
    split = depth * (2 * width * mlp + mlp * width)
    split += out * out + 2 * out * context + context * out
    heads = values["num_heads"]
    return TowerSpec(params=whole + split + attention, tp_split_params=split, config_class=config_class,
                     source=source, projector_params=out * out, float32_norm_params=2 * out,
                     head_split_params=attention, heads=heads, block_class=BLOCK_CLASS,
                     head_params=depth * 4 * (width // heads) * width)  # fmt: skip
