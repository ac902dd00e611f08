"""The pre-norm projectors of llava-onevision's subclasses, in place of LlavaOnevisionMultiModalProjector: a
pre_norm LayerNorm over the vision width (weight, bias), linear_1 vision width → k × text width and linear_2 k × text
width → text width, both nn.Linear with biases, whole on every rank. Each class keeps llava-onevision's SigLIP tower
and image_newline (its model is a LlavaOnevisionForConditionalGeneration whose __init__ replaces the projector):

- Bee-8B (vLLM 0.33.0 models/bee.py BeeMultiModalProjector: k = 4; the registry sweep's default config's meta build,
  multi_modal_projector 172,012,032 B at TP 1 and TP 2), over llava-onevision's config (model_type llava_onevision);
- R-4B (vLLM 0.33.0 models/rvl.py RVLMultiModalProjector: k = 1; the composed config's meta build, 43,012,608 B at
  TP 1 and TP 2), over its own model_type `rvl` whose fields are llava-onevision's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvtop.domain.tower_spec import TowerSpec

BEE_CLASS = "BeeForConditionalGeneration"
ONEVISION = "llava_onevision"

# class -> (the outer model_type its checkpoints carry, the width factor k, the engine source)
PRE_NORM_PROJECTORS: Mapping[str, tuple[str, int, str]] = {
    BEE_CLASS: (ONEVISION, 4, "vLLM 0.33.0 models/bee.py BeeMultiModalProjector"),
    "RForConditionalGeneration": ("rvl", 1, "vLLM 0.33.0 models/rvl.py RVLMultiModalProjector"),
}


def pre_norm_projector(outer: Mapping[str, Any]) -> tuple[int, str] | None:
    """(k, source) where the config names a pre-norm-projector class over its own outer model_type; else None."""
    for name in outer.get("architectures") or ():
        if (found := PRE_NORM_PROJECTORS.get(name)) is not None and outer.get("model_type") == found[0]:
            return found[1], found[2]
    return None


def bee_projector(spec: TowerSpec, width: int, text_hidden: int, llava_projector: int, k: int = 4,
                  source: str = PRE_NORM_PROJECTORS[BEE_CLASS][2]) -> TowerSpec:  # fmt: skip
    """`spec` (llava-onevision's tower, whose whole projector held `llava_projector` parameters) with the pre-norm
    projector of width factor `k` (Bee's 4, R-4B's 1)."""
    wide = k * text_hidden
    bee = 2 * width + width * wide + wide + wide * text_hidden + text_hidden
    delta = bee - llava_projector
    return spec.model_copy(update={"params": spec.params + delta, "transformers_params": spec.transformers_params + delta,
                                   "source": f"{spec.source}; {source}"})  # fmt: skip
