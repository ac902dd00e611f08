"""Step-3.7's vision tower (PerceptionEncoder) and projector (`vit_large_projector`), counted as SGLang 0.5.23
builds and shards them (models/step3p7.py Step3p7ForConditionalGeneration over models/step3_vl_10b.py; the
language model is the step3p7 entry's). vLLM 0.33.0 does not build this class (its step_vl.py reads
`vision_config.output_dim`, which transformers' Step3p7VisionConfig lacks: "engine could not build").

SGLang reads the section through its own Step3p7VisionEncoderConfig (configs/step3p7.py: `width`, `layers`,
`mlp_ratio`, ... with its class defaults), not transformers' names (hidden_size, num_hidden_layers,
intermediate_size): where the section states one of those and it differs from what SGLang builds, kvtop keeps the
note rather than pick one engine's reading (`step3p7` returns None).
- conv1: Conv2dLayer(3, width, patch) without bias (3 channels whatever num_channels says); ln_pre (use_ln_pre)
  and ln_post (use_ln_post), LayerNorms; a learned (image ÷ patch)² (+1 with use_cls_token) × width position table
  (use_abs_posemb) and the class embedding (use_cls_token): whole;
- `layers` blocks: VisionAttention (QKVParallelLinear width → 3 × width with bias, proj RowParallelLinear with
  bias), two LayerNorms, two layer-scale gammas (ls_init_value not None), PerceptionEncoderMLP fc1
  ColumnParallelLinear width → int(width × mlp_ratio) and fc2 RowParallelLinear back, biased: split over TP but
  the row-parallel biases, norms and gammas;
- vit_downsampler1 / 2: nn.Conv2d width → 2 × width → 4 × width, kernel 3, biased: whole;
- vit_large_projector: ColumnParallelLinear(4 × width → the language model's width, bias projector_bias): split.
Checked against SGLang 0.5.23's meta build of the registry sweep's default (tests/domain/test_towers_step3p7.py).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from kvtop.domain.config_types import ConfigSection, Dim, Flag, Heads, Hidden, Layers
from kvtop.domain.tower_spec import TowerSpec

SOURCE = "SGLang 0.5.23 configs/step3p7.py, models/step3p7.py, models/step3_vl_10b.py (PerceptionEncoder)"
# Step3-VL-10B's StepVLForConditionalGeneration: the same PerceptionEncoder and vit_large_projector in both engines
# (vLLM 0.33.0 step_vl.py: QKVParallelLinear / RowParallelLinear attention, Column / Row MLP, Conv2dLayer conv1 and
# downsamplers, ColumnParallelLinear projector; SGLang 0.5.23 step3_vl_10b.py), its section read by the same fields
STEP_VL_SOURCE = "vLLM 0.33.0 step_vl.py; SGLang 0.5.23 models/step3_vl_10b.py (PerceptionEncoder)"


class Step3p7VisionFields(ConfigSection):
    """SGLang 0.5.23's Step3p7VisionEncoderConfig fields and class defaults (configs/step3p7.py)."""

    width: Hidden = 1536
    layers: Layers = 47
    heads: Heads = 16
    image_size: Dim = 728
    patch_size: Dim = 14
    mlp_ratio: float = Field(default=8960 / 1536, gt=0, le=64)
    use_cls_token: Flag = False
    use_ln_pre: Flag = True
    use_ln_post: Flag = False
    use_abs_posemb: Flag = True
    ls_init_value: float | None = 0.1


class Step3p7OuterFields(ConfigSection):
    """Step3p7Config's projector switch (SGLang configs/step3p7.py default False)."""

    projector_bias: Flag = False


def sglang_reading_differs(vision: Step3p7VisionFields, section: dict[str, Any]) -> bool:
    """The section states transformers' names with other values than SGLang's own fields build."""
    built = {"hidden_size": vision.width, "num_hidden_layers": vision.layers,
             "intermediate_size": int(vision.width * vision.mlp_ratio)}  # fmt: skip
    return any(name in section and section[name] != value for name, value in built.items())


def step3p7(
    vision: Step3p7VisionFields, outer: Step3p7OuterFields, text_hidden: int, config_class: str, source: str = SOURCE
) -> TowerSpec:
    """The PerceptionEncoder's and vit_large_projector's parameters, whole and split over TP."""
    width, mlp = vision.width, int(vision.width * vision.mlp_ratio)
    grid = vision.image_size // vision.patch_size
    whole = 3 * vision.patch_size**2 * width  # conv1, no bias
    whole += 2 * width * (int(vision.use_ln_pre) + int(vision.use_ln_post))
    whole += (grid * grid + int(vision.use_cls_token)) * width if vision.use_abs_posemb else 0
    whole += width if vision.use_cls_token else 0
    gammas = 2 * width if vision.ls_init_value is not None else 0
    block_whole = width + 2 * 2 * width + gammas + width  # proj's bias, ln_1, ln_2, the gammas, fc2's bias
    block_split = width * 3 * width + 3 * width + width * width + width * mlp + mlp + mlp * width
    whole += vision.layers * block_whole
    whole += width * 2 * width * 9 + 2 * width + 2 * width * 4 * width * 9 + 4 * width  # the two downsamplers
    projector = 4 * width * text_hidden + (text_hidden if outer.projector_bias else 0)
    split = vision.layers * block_split + projector
    return TowerSpec(params=whole + split, tp_split_params=split, config_class=config_class, source=source)
