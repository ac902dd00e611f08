"""Which model classes an engine's Transformers backend accepts, as the transformers of its own wheel says.

Run with the python of an environment that has the engine's wheel installed (read-only: no bytecode written):
`PYTHONDONTWRITEBYTECODE=1 <venv>/bin/python benchmarks/engine_registries/transformers_backend.py`. Prints JSON:
the transformers version, every generative class it names (`generative`), and every generative class (causal LM and image/audio-text-to-text auto mappings)
with `is_backend_compatible()` (SGLang's test: `_supports_attention_backend`) and vLLM's wider test
(`is_backend_compatible() or _can_set_attn_implementation()`, vLLM ≥ 0.2x registry `_try_resolve_transformers`).
"""

from __future__ import annotations

import json
import sys

import transformers
from transformers.models.auto import modeling_auto


def main() -> None:
    names: set[str] = set()
    for mapping in (
        "MODEL_FOR_CAUSAL_LM_MAPPING_NAMES",
        "MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES",
        "MODEL_FOR_VISION_2_SEQ_MAPPING_NAMES",
        "MODEL_FOR_MULTIMODAL_LM_MAPPING_NAMES",
    ):
        for value in getattr(modeling_auto, mapping, {}).values():
            names.update(value if isinstance(value, (list, tuple)) else [value])
    compatible, settable, failed = [], [], []
    for name in sorted(names):
        try:
            cls = getattr(transformers, name)
        except Exception:  # a class whose module does not import here
            failed.append(name)
            continue
        ok = bool(getattr(cls, "is_backend_compatible", lambda: False)())
        can_set = getattr(cls, "_can_set_attn_implementation", None)
        try:
            settable_ok = bool(can_set()) if can_set is not None else False
        except Exception:
            settable_ok = False
        if ok:
            compatible.append(name)
        if ok or settable_ok:
            settable.append(name)
    json.dump(
        {
            "transformers": transformers.__version__,
            "generative": sorted(names),
            "backend_compatible": compatible,
            "backend_compatible_or_settable": settable,
            "not_importable": failed,
        },
        sys.stdout,
        indent=0,
    )


if __name__ == "__main__":
    main()
