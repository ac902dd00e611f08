"""Step-3-VL's vision encoder, downsamplers and projector (`Step3VLForConditionalGeneration`), as vLLM 0.33.0 and
SGLang 0.5.23 build and shard them (models/step3_vl.py in both; the language model is the step3_text entry's).

A CLIP-style ViT: a class embedding, a biased Conv2d patch, a learned position table of grid² + 1 rows (nn.Embedding,
whole), `num_hidden_layers` blocks of two LayerNorms, a biased qkv (QKVParallelLinear) and output projection
(RowParallelLinear), fc1 / fc2 with biases (Column/RowParallelLinear); no pre- or post-norm. Then `vit_downsampler`
(Conv2d width → output_hidden_size, kernel 2), `vit_downsampler2` (Conv2d → 2 × output_hidden_size, kernel 3) and
`vit_large_projector` (nn.Linear → the outer hidden_size, biased where projector_bias), whole on every rank.
SGLang's Step3VisionAttention holds an `out_proj` beside its VisionAttention's own `proj` (a second output projection
a block, built and never loaded): `TowerSpec.second_out_proj_*`, held where the engine's `TowerSplit.second_out_proj`
names this tower.
"""

from __future__ import annotations

from kvtop.domain.config_types import ConfigSection, Dim, Flag, Heads, Hidden, Layers
from kvtop.domain.tower_spec import TowerSpec

SOURCE = (
    "vLLM 0.33.0 transformers_utils/configs/step3_vl.py (Step3VisionEncoderConfig), models/step3_vl.py; "
    "SGLang 0.5.23 models/step3_vl.py"
)
CONFIG_CLASS = "Step3VisionEncoderConfig"


class Step3VisionFields(ConfigSection):
    """Step3VisionEncoderConfig's fields and class defaults (vLLM's and SGLang's alike)."""

    hidden_size: Hidden = 1792
    intermediate_size: Hidden = 3072
    output_hidden_size: Hidden = 4096
    num_hidden_layers: Layers = 63
    num_attention_heads: Heads = 16
    num_channels: Dim = 3
    patch_size: Dim = 14
    image_size: Dim = 728


class Step3VLOuterFields(ConfigSection):
    """Step3VLConfig's projector fields (its class defaults)."""

    hidden_size: Hidden = 7168
    projector_bias: Flag = True


def step3_vl(vision: Step3VisionFields, outer: Step3VLOuterFields) -> TowerSpec:
    """The encoder's, downsamplers' and projector's parameters, whole and split over TP (see the module docstring)."""
    width, mlp, out = vision.hidden_size, vision.intermediate_size, vision.output_hidden_size
    positions = (vision.image_size // vision.patch_size) ** 2 + 1
    whole = width + vision.num_channels * vision.patch_size**2 * width + width + positions * width
    blocks = vision.num_hidden_layers
    whole += blocks * (2 * 2 * width + width + width)  # two LayerNorms, the row-parallel biases
    whole += width * out * 2 * 2 + out + out * 2 * out * 3 * 3 + 2 * out  # the two downsamplers
    whole += 2 * out * outer.hidden_size + (outer.hidden_size if outer.projector_bias else 0)
    split = blocks * (width * 3 * width + 3 * width + width * width + width * mlp + mlp + mlp * width)
    return TowerSpec(params=whole + split, tp_split_params=split, config_class=CONFIG_CLASS, source=SOURCE,
                     second_out_proj_split_params=blocks * width * width,
                     second_out_proj_whole_params=blocks * width)  # fmt: skip
