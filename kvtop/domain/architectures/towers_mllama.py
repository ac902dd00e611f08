"""Llama-3.2-Vision's (Mllama's) vision model and projector, counted as SGLang 0.5.23 builds and shards them
(srt/models/mllama.py; vLLM 0.33.0 no longer registers the class: its verdict stays vLLM's refusal).

`MllamaVisionModel`: a patch embedding (`ColumnParallelConv2dPatch`: an unfold, then a column-parallel linear
channels × patch² → width, no bias), a class embedding (width), the gated positional embedding
(`MllamaPrecomputedPositionEmbedding`: a gate, a (image ÷ patch)² + 1 rows × width table and a tile table of
max_aspect_ratio_id + 1 rows × tiles × positions × width), the pre- and post-tile embeddings
(`MllamaPrecomputedAspectRatioEmbedding`: max_aspect_ratio_id + 1 rows × tiles × width and a gate each), two
LayerNorms (pre, post), then `num_hidden_layers` local and `num_global_layers` global encoder layers
(`MllamaVisionEncoderLayer`: two LayerNorms, VisionAttention's qkv and proj with biases — QKVParallelLinear and
RowParallelLinear —, fc1 / fc2 with biases — Column / RowParallelLinear —, and on the global layers two gates).
max_aspect_ratio_id is len(supported_aspect_ratios) (transformers configuration_mllama.py). The projector
`multi_modal_projector` is a biased ReplicatedLinear vision_output_dim → the text model's hidden size: whole.
Split over TP: the patch linear, qkv with its bias, proj, fc1 with its bias, fc2; a row-parallel bias, the norms,
the embeddings and the gates are whole on every rank.
"""

from __future__ import annotations

from pydantic import Field

from kvtop.domain.config_types import ConfigSection, Dim, Hidden, Intermediate, Layers
from kvtop.domain.tower_spec import TowerSpec

CONFIG_CLASS = "MllamaVisionConfig"
SOURCE = "transformers models/mllama (MllamaVisionConfig); SGLang 0.5.23 srt/models/mllama.py"
_ASPECT_RATIOS = [[1, 1], [1, 2], [1, 3], [1, 4], [2, 1], [2, 2], [3, 1], [4, 1]]  # fmt: skip


class MllamaVisionFields(ConfigSection):
    """MllamaVisionConfig's fields and class defaults (transformers models/mllama/configuration_mllama.py)."""

    hidden_size: Hidden = 1280
    intermediate_size: Intermediate = 5120
    num_hidden_layers: Layers = 32
    num_global_layers: Layers = 8
    num_channels: Dim = 3
    image_size: Dim = 448
    patch_size: Dim = 14
    max_num_tiles: Dim = 4
    vision_output_dim: Hidden = 7680
    supported_aspect_ratios: list[list[Dim]] = Field(default_factory=lambda: _ASPECT_RATIOS, max_length=4096)


def mllama_vision(vision: MllamaVisionFields, text_hidden: int) -> TowerSpec:
    """The vision model's and projector's parameters, whole and split over TP (see the module docstring)."""
    width, mlp, tiles = vision.hidden_size, vision.intermediate_size, vision.max_num_tiles
    positions = (vision.image_size // vision.patch_size) ** 2 + 1
    aspect_rows = len(vision.supported_aspect_ratios) + 1  # max_aspect_ratio_id + 1
    patch = vision.num_channels * vision.patch_size**2 * width  # split, no bias
    whole = width  # class_embedding
    whole += 1 + positions * width + aspect_rows * tiles * positions * width  # gate, table, tile table
    whole += 2 * (aspect_rows * tiles * width + 1)  # pre- and post-tile embeddings and their gates
    whole += 2 * 2 * width  # layernorm_pre, layernorm_post
    layers = vision.num_hidden_layers + vision.num_global_layers
    # per layer two LayerNorms and proj's and fc2's biases; two gates per global layer
    whole += layers * (2 * 2 * width + width + width) + 2 * vision.num_global_layers
    split = patch + layers * (width * 3 * width + 3 * width + width * width + width * mlp + mlp + mlp * width)
    whole += vision.vision_output_dim * text_hidden + text_hidden  # multi_modal_projector, replicated
    return TowerSpec(params=whole + split, tp_split_params=split, config_class=CONFIG_CLASS, source=SOURCE)
