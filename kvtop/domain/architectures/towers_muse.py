"""Muse-Glimmer's vision encoder, adapter and projection, counted as vLLM 0.33.0 and SGLang 0.5.23 build and
shard them (towers.py picks this kind from the `muse_glimmer_text` entry; the section is `vision_config`, a
MuseGlimmerVisionConfig, and the outer MuseGlimmerConfig sizes the adapter).

vLLM 0.33.0 models/muse_glimmer.py (`MuseGlimmerForCausalLM.__init__`, a tower wherever the config has a
`vision_config`):
- `vision_encoder` (MuseGlimmerVisionEncoder): `conv1_linear` nn.Linear(patch_temporal × 3 × patch_size² →
  width, no bias), `positional_embedding_vlm` a (pos_emb_height × pos_emb_width, width) nn.Parameter, `ln_pre`
  and `ln_post` LayerNorms, and `num_hidden_layers` blocks of two LayerNorms, qkv_proj (QKVParallelLinear, bias)
  and o_proj (RowParallelLinear, bias whole), and an MLP of two nn.Linear with biases (c_fc width → intermediate,
  c_proj back): whole on every rank. It refuses an `out_hidden_size` other than width × merge_size².
- `vision_adapter`: nn.Linear out_hidden_size → projector_hidden_size and projector_hidden_size → the same, no
  biases (whole); `vision_projection`: nn.Linear projector_hidden_size → the language model's width (whole);
  `perception_emb_norm` holds no weight.
SGLang 0.5.23 models/muse_glimmer.py builds the same parameters, but the block MLP (fc1 ColumnParallelLinear with
its bias, fc2 RowParallelLinear, its bias whole) and the adapter (fc1 Column, fc2 Row) split over TP:
`replicated_params`, split where the engine's TowerSplit.replicated_linears. Its adapter width is padded to a
multiple of TP × 32 where TP does not divide projector_hidden_size (configs/update_config.py): not modelled
(4096 divides by every TP the 16 vision heads allow). Parameter counts checked against both engines' meta builds
(tests/test_towers_muse.py).
"""

from __future__ import annotations

from kvtop.domain.config_types import ConfigSection, Dim, Heads, Hidden, Intermediate, Layers
from kvtop.domain.errors import InputError
from kvtop.domain.tower_spec import TowerSpec

CHANNELS = (
    3  # MuseGlimmerVisionEncoder's patch_dim: patch_temporal × 3 × patch_size² (RGB, fixed in the code)
)


class MuseVisionFields(ConfigSection):
    """MuseGlimmerVisionConfig's fields (transformers models/muse_glimmer: its class defaults where absent)."""

    hidden_size: Hidden = 1536
    intermediate_size: Intermediate = 8960
    num_hidden_layers: Layers = 50
    num_attention_heads: Heads = 16
    patch_size: Dim = 14
    patch_temporal: Dim = 2
    merge_size: Dim = 2
    pos_emb_height: Dim = 32
    pos_emb_width: Dim = 32


class MuseOuterFields(ConfigSection):
    """The outer MuseGlimmerConfig's adapter fields (its class defaults where absent)."""

    out_hidden_size: Hidden = 6144
    projector_hidden_size: Hidden = 4096


def muse_glimmer(
    vision: MuseVisionFields,
    outer: MuseOuterFields,
    text_hidden: int,
    config_class: str,
    source: str,
    where: str,
) -> TowerSpec:
    """The vision_encoder, vision_adapter and vision_projection parameters (whole model), the attention split
    over TP in both engines, the block MLPs and the adapter in `replicated_params` (split by SGLang only)."""
    width, mlp, depth = vision.hidden_size, vision.intermediate_size, vision.num_hidden_layers
    if (
        outer.out_hidden_size != width * vision.merge_size**2
    ):  # MuseGlimmerVisionEncoder raises (both engines)
        raise InputError(f"{outer.out_hidden_size} is not the pixel-shuffle output {width} × {vision.merge_size}² "
                         f"= {width * vision.merge_size**2} that the vision encoder makes",
                         field="out_hidden_size", source=where)  # fmt: skip
    attention_split = 3 * width * width + 3 * width + width * width  # qkv with its bias, o_proj's weight
    block_mlp = width * mlp + mlp + mlp * width  # c_fc / fc1 with its bias, c_proj / fc2's weight
    block_whole = 2 * 2 * width + width + width  # two LayerNorms, o_proj's and the MLP's second bias
    patch = vision.patch_temporal * CHANNELS * vision.patch_size**2 * width
    encoder_whole = (
        patch + vision.pos_emb_height * vision.pos_emb_width * width + 2 * 2 * width
    )  # ln_pre, ln_post
    adapter = outer.out_hidden_size * outer.projector_hidden_size + outer.projector_hidden_size**2
    projection = outer.projector_hidden_size * text_hidden
    split = depth * attention_split
    replicated = depth * block_mlp + adapter
    whole = encoder_whole + depth * block_whole + projection
    return TowerSpec(params=whole + split + replicated, tp_split_params=split, config_class=config_class,
                     source=source, replicated_params=replicated)  # fmt: skip
