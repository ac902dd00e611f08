"""GLM-4V-9B's EVA2-CLIP vision tower and GLU projector (THUDM/glm-4v-9b, GLM4VForCausalLM: a ChatGLM config with a
`vision_config`), counted as vLLM 0.33.0 builds and shards them (models/glm4v.py EVA2CLIPModel; the language model is
the chatglm entry's). SGLang 0.5.23 registers no GLM4VForCausalLM.

vLLM reads the section as an argparse Namespace (`Namespace(**config.vision_config)`), with no defaults: every
field below must be stated (a missing one stops its build, as it stops kvtop's reading).
- patch_embedding: a biased Conv2d in_channels × patch² → width, `cls_embedding` (width) and the position table
  (nn.Embedding num_positions × width): whole;
- `num_hidden_layers` blocks: input_layernorm and post_attention_layernorm, LayerNorms (weight, bias): whole;
  query_key_value (QKVParallelLinear width → 3 × width, biased: split with its bias, `num_heads` divided by TP,
  asserting), dense (RowParallelLinear, biased: the bias whole), fc1 (ColumnParallelLinear width →
  intermediate_size, biased: split) and fc2 (RowParallelLinear back, biased: the bias whole);
- conv: a biased Conv2d width → the language model's hidden_size, kernel 2, stride 2: whole;
- linear_proj (EVA2CLIPGLU, sized by the outer ChatGLM fields): linear_proj ReplicatedLinear hidden → hidden
  (whole), norm1 LayerNorm (whole), merged_proj MergedColumnParallelLinear hidden → 2 × ffn_hidden_size and
  dense_4h_to_h RowParallelLinear back, no biases: split;
- boi and eoi: one hidden-wide vector each, whole.
Checked against vLLM 0.33.0's meta build of recon--THUDM--glm-4v-9b (tests/domain/test_towers_eva2clip.py).
"""

from __future__ import annotations

from kvtop.domain.config_types import ConfigSection, Dim, Heads, Hidden, Intermediate, Layers, Positions
from kvtop.domain.tower_spec import TowerSpec

SOURCE = "vLLM 0.33.0 models/glm4v.py (EVA2CLIPModel, EVA2CLIPGLU)"
CONFIG_CLASS = "GLM-4V vision_config (EVA2-CLIP, read as a Namespace)"


class Eva2ClipVisionFields(ConfigSection):
    """The `vision_config` fields vLLM 0.33.0 glm4v.py reads to size the tower (no defaults: all required)."""

    hidden_size: Hidden
    num_hidden_layers: Layers
    num_heads: Heads
    intermediate_size: Intermediate
    num_positions: Positions
    patch_size: Dim
    in_channels: Dim


class Eva2ClipOuterFields(ConfigSection):
    """The ChatGLM fields that size the GLU projector (ChatGLMConfig's ffn_hidden_size)."""

    ffn_hidden_size: Intermediate


def eva2clip(vision: Eva2ClipVisionFields, outer: Eva2ClipOuterFields, text_hidden: int) -> TowerSpec:
    """The EVA2-CLIP tower's and GLU projector's parameters, whole and split over TP."""
    width, mlp, depth = vision.hidden_size, vision.intermediate_size, vision.num_hidden_layers
    whole = vision.in_channels * vision.patch_size**2 * width + width + width  # patch conv and bias, cls
    whole += vision.num_positions * width  # the position table
    whole += depth * (4 * width + 2 * width)  # two LayerNorms, dense's and fc2's biases a block
    split = depth * (3 * width * width + 3 * width + width * width + width * mlp + mlp + mlp * width)
    whole += width * text_hidden * 4 + text_hidden  # conv (kernel 2 × 2) and its bias
    whole += text_hidden * text_hidden + 2 * text_hidden + 2 * text_hidden  # linear_proj, norm1; boi, eoi
    split += text_hidden * 2 * outer.ffn_hidden_size + outer.ffn_hidden_size * text_hidden
    return TowerSpec(params=whole + split, tp_split_params=split, config_class=CONFIG_CLASS, source=SOURCE,
                     divided_heads=(vision.num_heads,))  # fmt: skip
