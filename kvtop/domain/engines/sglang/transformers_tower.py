"""The vision tower of a class SGLang serves through its Transformers backend: transformers' own classes, whole.

SGLang 0.5.23 has no class of its own for LlavaNextForConditionalGeneration, LlavaOnevisionForConditionalGeneration
or (transformers' format) InternVLForConditionalGeneration: `resolve_transformers_arch` hands them to
srt/models/transformers.py (`TransformersMultiModalForCausalLM`), which builds transformers' model as it is and
replaces its nn.Linear by the TP plan it finds (`_get_model_tp_plan`: the model's, else each child's
`base_model_tp_plan`: the language model's), every linear the plan does not match "replicate"
(`recursive_replace`). So the vision tower and projector hold transformers' parameters, whole on every rank: every
layer (no cut at `vision_feature_layer`), the post-LayerNorm, SigLIP's pooling head where `vision_use_head`
(TowerSpec.transformers_params). Meta-built by engine-diff's registry sweep (sglang 0.5.23, `--params`):
llava-v1.6-mistral-7b's model.vision_tower + multi_modal_projector + image_newline 648,982,528 B at TP 1 and at
TP 2 (24 CLIP layers and post_layernorm where vLLM's llava_next.py builds 23 and none); LlavaOnevisionConfig's
defaults 838,511,680 B; InternVL3-1B (transformers format) 616,990,208 B. The classes are the registry's own
(`transformers_backend` of the release: architectures.py); towers whose kind does not count transformers' classes
(TowerSpec.transformers_params 0) keep the tower book's count (docs/engines/sglang.md §20, docs/engines/
architectures.md §5). 0.5.6.post2's backend is text-only (`TransformersForCausalLM`: AutoModel of the outer config,
the outer config's `base_model_tp_plan` or "does not support tensor parallel yet!" at TP > 1, as its meta build of
llava-v1.6-mistral-7b at TP 2 said): not checked, the book's count stands there.
"""

from __future__ import annotations

from kvtop.domain.engines.sglang.architectures import TABLE
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.layout import StageParts
from kvtop.domain.model import ModelSpec

TRANSFORMERS_TOWER_ERAS: Eras[bool] = Eras((
    Era("", False, "not checked before 0.5.23 (0.5.6.post2: a text-only TransformersForCausalLM)"),
    Era("0.5.23", True, "srt/models/transformers.py TransformersMultiModalForCausalLM, recursive_replace"),
))  # fmt: skip


def with_transformers_tower(parts: StageParts, model: ModelSpec, version: ResolvedVersion) -> StageParts:
    """`parts` with the tower built as transformers' classes where this release serves `model`'s class through its
    Transformers backend."""
    found = TABLE.range_for(version)
    if model.tower is None or found is None or not TRANSFORMERS_TOWER_ERAS.at(version):
        return parts
    if model.architecture not in found.transformers_backend:
        return parts
    return parts.model_copy(update={"tower_as_transformers": True})
