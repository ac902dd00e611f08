"""Ling-3-VL's vision tower and projector (BailingMoeV3VLForConditionalGeneration, outer model_type
bailing_moe_v3_vl), counted as both engines build it where they agree.

The ViT is Qwen3-VL-MoE's (the `qwen` kind: patch Conv3d, position table, `depth` blocks), but its patch merger
keeps only the norm, and the wrapper adds its own projector `linear_proj`:
- vLLM 0.33.0 models/bailing_moe_v3_vl.py: BailingMoeV3VisionTransformer forces deepstack_visual_indexes to [] and
  replaces the merger by BailingMoeV3VisionPatchMerger (one LayerNorm over the width: weight and bias, whole)
  whatever the config says; BailingMoeV3VLProjector: linear_fc1 ColumnParallelLinear(width × merge², text hidden,
  bias) and linear_fc2 RowParallelLinear(text hidden, text hidden, bias), split over TP.
- SGLang 0.5.23 models/bailing_mm_v3.py: Qwen3VLMoeVisionModel (qwen3_vl.py), whose merger keeps only its
  LayerNorm where vision_config.disable_merger_proj is true (Qwen3VLMoeVisionPatchMerger), one merger per
  deepstack_visual_indexes entry (BailingMoeV3VLConfig defaults it to []); `linear_proj` an nn.Sequential of
  nn.Linear(width × merge² where disable_merger_proj, else out_hidden_size → text hidden) and nn.Linear(text
  hidden, text hidden), both biased, whole on every rank (TowerSplit.projector_whole).
The engines build the same modules only where disable_merger_proj is true and no deepstack index is stated;
otherwise SGLang builds merger MLPs (and deepstack mergers) vLLM does not, so the tower is not read (its note stays).
"""

from __future__ import annotations

from pydantic import Field

from kvtop.domain.config_types import ConfigSection, Flag, LayerIndices
from kvtop.domain.tower_spec import TowerSpec

SOURCE = "vLLM 0.33.0 models/bailing_moe_v3_vl.py; SGLang 0.5.23 models/bailing_mm_v3.py, models/qwen3_vl.py"


class BailingVisionFields(ConfigSection):
    """The vision section's switches the two engines read apart (SGLang's Qwen3VLMoeVisionConfig defaults:
    disable_merger_proj False; BailingMoeV3VLConfig's deepstack_visual_indexes [])."""

    disable_merger_proj: Flag = False
    deepstack_visual_indexes: LayerIndices = Field(default_factory=list)


def engines_agree(fields: BailingVisionFields) -> bool:
    """Whether vLLM and SGLang build the same tower: no merger MLP and no deepstack merger in SGLang's build."""
    return fields.disable_merger_proj and not fields.deepstack_visual_indexes


def bailing_v3_vl(qwen: TowerSpec, width: int, merge: int, out: int, text_hidden: int) -> TowerSpec:
    """`qwen` (the Qwen3 ViT read with one merger MLP of `width` × `merge`² → the same → `out`) without that
    merger's MLP, with the wrapper's linear_proj: fc1 (merged → text hidden) and fc2's weight split, fc2's bias
    whole; the projector is whole on an engine that builds it nn.Linear (`projector_params`)."""
    merged = width * merge**2
    merger_split, merger_whole = merged * merged + merged + merged * out, out  # linear_fc1 (+ bias), fc2; fc2 bias
    projector = merged * text_hidden + text_hidden + text_hidden * text_hidden
    split = qwen.tp_split_params - merger_split + projector
    params = qwen.params - merger_split - merger_whole + projector + text_hidden
    return qwen.model_copy(update={"params": params, "tp_split_params": split, "projector_params": projector,
                                   "config_class": "BailingMoeV3VisionConfig", "source": SOURCE})  # fmt: skip
