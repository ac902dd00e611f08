"""Moondream3's vision encoder and projection, counted as vLLM 0.33.0 models/moondream3.py builds and shards them
(the moondream3 entry's tower; its section is the config's `config`, whose `vision` dict vLLM's
Moondream3VisionConfig reads, its defaults where absent: vLLM 0.33.0 transformers_utils/configs/moondream3.py).

Moondream3VisionEncoder: `patch_emb` (nn.Linear patch² × 3 → enc_dim, biased), `pos_emb` ((crop_size ÷ patch)² ×
enc_dim), enc_n_layers blocks of two LayerNorms, qkv_proj (QKVParallelLinear) and out_proj (Row), fc1 (Column) and
fc2 (Row), all biased, and `post_ln`: split but the embeddings, norms and row-parallel biases. Moondream3VisionProjection:
fc1 (Column, 2 × enc_dim → proj_inner_dim, biased) and fc2 (Row, → the text width, its bias whole). Moondream3Config's
defaults: vision 825,974,496 B and vision_proj 71,323,648 B at TP 1, 414,694,512 B and 35,663,872 B a rank at TP 2
(meta-built). SGLang 0.5.23 registers no Moondream3 class.
"""

from __future__ import annotations

from kvtop.domain.config_types import ConfigSection, Dim, Hidden, Intermediate, Layers
from kvtop.domain.tower_spec import TowerSpec


class Moondream3VisionFields(ConfigSection):
    """Moondream3VisionConfig's fields (vLLM 0.33.0's class defaults where absent)."""

    enc_dim: Hidden = 1152
    enc_patch_size: Dim = 14
    enc_n_layers: Layers = 27
    enc_ff_dim: Intermediate = 4304
    proj_inner_dim: Intermediate = 8192
    crop_size: Dim = 378


def moondream3(vision: Moondream3VisionFields, text_hidden: int, config_class: str, source: str) -> TowerSpec:
    """The vision encoder and projection (whole model): those split over TP and the rest."""
    width, mlp, depth = vision.enc_dim, vision.enc_ff_dim, vision.enc_n_layers
    positions = (vision.crop_size // vision.enc_patch_size) ** 2
    whole = (
        vision.enc_patch_size**2 * 3 * width + width + positions * width + 2 * width
    )  # patch, table, post_ln
    whole += depth * (2 * 2 * width + width + width)  # two LayerNorms, out_proj's and fc2's biases
    split = depth * (3 * width * width + 3 * width + width * width + width * mlp + mlp + mlp * width)
    inner = vision.proj_inner_dim
    split += 2 * width * inner + inner + inner * text_hidden
    whole += text_hidden
    return TowerSpec(params=whole + split, tp_split_params=split, config_class=config_class, source=source)
