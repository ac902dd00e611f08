"""Pixtral's vision encoder and adapter as a Mistral-format checkpoint states them (`params.json`'s
`vision_encoder`, read by kvtop.domain.mistral_params), built as vLLM 0.33.0 models/pixtral.py
`PixtralForConditionalGeneration` builds them for `--config-format mistral`.

VisionTransformer: `patch_conv` (Conv2d, no bias) and `ln_pre` (RMSNorm), whole; `num_hidden_layers` blocks of
q/k/v/o (QKVParallelLinear, RowParallelLinear, no bias) and gate/up/down (MergedColumnParallelLinear,
RowParallelLinear, no bias) split over TP (`divide(num_attention_heads, tp)` asserts the heads divide), and their
two RMSNorms, whole. Around it, every module whole (ReplicatedLinear, RMSNorm): `pre_mm_projector_norm` where
`add_pre_mm_projector_layer_norm`, the `patch_merger` (width × merge² → width, no bias) where `mm_projector_id`
is "patch_merge", and the `vision_language_adapter` (w_in width → text, w_out text → text, biased where
`adapter_bias`, PixtralForConditionalGeneration's default true). Rotary positions: no position table.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvtop.domain.architectures.towers_fields import Tower
from kvtop.domain.config_types import ConfigSection, Dim, Flag, Name
from kvtop.domain.errors import InputError
from kvtop.domain.tower_spec import TowerSpec

PATCH_MERGE = "patch_merge"  # vLLM pixtral.py PATCH_MERGE
SOURCE = (
    "vLLM 0.33.0 models/pixtral.py (VisionEncoderArgs, VisionTransformer, PatchMerger, VisionLanguageAdapter)"
)
# VisionEncoderArgs has no defaults for the encoder's sizes: the file states each (else vLLM cannot build it)
REQUIRED = ("hidden_size", "intermediate_size", "depth", "num_attention_heads", "in_channels", "patch_size")
# the outer model_type vLLM's _remap_mistral_vision_args writes ("pixtral"), with the section it reads
TOWER = Tower("VisionEncoderArgs", SOURCE, kind="pixtral_mistral_format")


class MistralVisionFields(ConfigSection):
    """pixtral.py `VisionEncoderArgs`' switches around the encoder (its defaults where the file leaves one out)."""

    adapter_bias: Flag = True
    spatial_merge_size: Dim = 1
    add_pre_mm_projector_layer_norm: Flag = False
    mm_projector_id: Name = ""


def pixtral_mistral_format(
    values: Mapping[str, Any], switches: MistralVisionFields, text_hidden: int, config_class: str, source: str
) -> TowerSpec:
    """The encoder's blocks split over TP, everything else whole (see the module docstring)."""
    for key in REQUIRED:
        if key not in values:
            raise InputError("must be stated (vLLM's VisionEncoderArgs has no default)",
                             field=f"params.json vision_encoder.{key}", source=source)  # fmt: skip
    width, mlp, depth, heads = (
        values["hidden_size"],
        values["intermediate_size"],
        values["depth"],
        values["num_attention_heads"],
    )
    split = depth * (4 * width * width + 3 * width * mlp)
    whole = values["in_channels"] * values["patch_size"] ** 2 * width + width + depth * 2 * width
    if switches.add_pre_mm_projector_layer_norm:
        whole += width
    if switches.mm_projector_id == PATCH_MERGE:
        whole += width * switches.spatial_merge_size**2 * width
    adapter = (
        width * text_hidden + text_hidden * text_hidden + (2 * text_hidden if switches.adapter_bias else 0)
    )
    return TowerSpec(params=whole + adapter + split, tp_split_params=split, config_class=config_class, source=source,
                     divided_heads=(heads,), replicated_params=0)  # fmt: skip
