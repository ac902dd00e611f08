"""Bee's projector: Bee-8B (vLLM 0.33.0 models/bee.py BeeForConditionalGeneration, a
LlavaOnevisionForConditionalGeneration over llava-onevision's config) keeps llava-onevision's SigLIP tower and
image_newline but builds its own BeeMultiModalProjector in place of LlavaOnevisionMultiModalProjector: a pre_norm
LayerNorm over the vision width (weight, bias), linear_1 vision width → 4 × text width and linear_2 4 × text width →
text width, both nn.Linear with biases, whole on every rank (vLLM 0.33.0's meta build of the registry sweep's
default: multi_modal_projector 172,012,032 B at TP 1 and TP 2).
"""

from __future__ import annotations

from kvtop.domain.tower_spec import TowerSpec

BEE_CLASS = "BeeForConditionalGeneration"


def bee_projector(spec: TowerSpec, width: int, text_hidden: int, llava_projector: int) -> TowerSpec:
    """`spec` (llava-onevision's tower, whose whole projector held `llava_projector` parameters) with Bee's."""
    wide = 4 * text_hidden
    bee = 2 * width + width * wide + wide + wide * text_hidden + text_hidden
    delta = bee - llava_projector
    return spec.model_copy(update={"params": spec.params + delta, "transformers_params": spec.transformers_params + delta,
                                   "source": f"{spec.source}; vLLM 0.33.0 models/bee.py BeeMultiModalProjector"})  # fmt: skip
