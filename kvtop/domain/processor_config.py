"""A checkpoint's image processor sizes, read from its `preprocessor_config.json` as transformers reads them.

vLLM sizes the dummy image its encoder profile runs from the processor the checkpoint ships, not from config.json:
Qwen3-VL's `_get_vision_info` smart-resizes to the image processor's `size["shortest_edge"]` and
`size["longest_edge"]` pixels (vllm/model_executor/models/qwen3_vl.py:619-625 at v0.11.0). transformers'
`Qwen2VLImageProcessorFast.__init__` (image_processing_qwen2_vl_fast.py:94-107 at 4.57.1, the class every Qwen2-VL,
Qwen2.5-VL and Qwen3-VL preprocessor_config.json names) takes `size` and lets the legacy `min_pixels` / `max_pixels`
keys override it where the file states them. Checkpoints of one family ship different sizes (Qwen3-VL-8B-Instruct
16,777,216 px at most, Qwen3-VL-Embedding-8B 1,310,720: search-index ids 52457624213, 14957053492), so a plan reads
the file where it is given and otherwise assumes the family's published sizes (engines/vllm/encoder_dummies.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvtop.domain.errors import InputError

# the transformers classes whose `size` edges are pixel counts (image_processing_qwen2_vl.py / _fast.py): what every
# Qwen2-VL, Qwen2.5-VL and Qwen3-VL preprocessor_config.json names; other processors' edges are sides (CLIP's
# `shortest_edge` 336: image_processing_clip.py resizes the short side to it), not bounds on an area
QWEN2_VL_PROCESSORS = frozenset({"Qwen2VLImageProcessor", "Qwen2VLImageProcessorFast"})


def image_pixels(preprocessor: Mapping[str, Any], source: str) -> tuple[int, int] | None:
    """(shortest_edge, longest_edge) in pixels as the image processor takes them: `size`'s edges, each replaced by
    `min_pixels` / `max_pixels` where stated; None where the file is not a Qwen2-VL processor's (`QWEN2_VL_PROCESSORS`,
    nor the legacy keys) or states neither edge. An edge that is not a positive integer, or only one edge, is an
    InputError naming it."""
    named = str(preprocessor.get("image_processor_type", "")) in QWEN2_VL_PROCESSORS
    if not named and all(preprocessor.get(key) is None for key in ("min_pixels", "max_pixels")):
        return None  # another processor's `size` (CLIP's shortest_edge 336, Idefics3's longest_edge) is a side in px
    size = preprocessor.get("size")
    edges = dict(size) if isinstance(size, Mapping) else {}
    for legacy, edge in (("min_pixels", "shortest_edge"), ("max_pixels", "longest_edge")):
        if preprocessor.get(legacy) is not None:
            edges[edge] = preprocessor[legacy]
    found = {edge: edges.get(edge) for edge in ("shortest_edge", "longest_edge")}
    if all(value is None for value in found.values()):
        return None
    for edge, value in found.items():
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise InputError(f"the image processor's bound must be a positive integer, not {value!r}",
                             field=f"size.{edge}", source=source)  # fmt: skip
    low, high = found["shortest_edge"], found["longest_edge"]
    assert isinstance(low, int) and isinstance(high, int)
    return low, high
