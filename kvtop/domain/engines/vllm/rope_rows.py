"""The rows vLLM's rope module builds its cos/sin cache for, by the config's own rope type: `get_rope` picks the class
by type (v0.11.0 model_executor/layers/rotary_embedding/__init__.py:80-198, v0.34.0 :167-334) and each class's
`_compute_cos_sin_cache` counts its rows (read at v0.11.0, v0.34.0; the dynamic change at v0.20.1, v0.21.0, v0.22.0):

- `linear`: the positions × factor (linear_scaling_rope.py:90, both), whatever the factor: get_rope passes it through
  unguarded (v0.8.5 rotary_embedding.py:1541-1546, v0.24.0 __init__.py:176-186), so a factor below 1 builds fewer rows
  than the positions (v0.8.5 :415-416, v0.24.0 linear_scaling_rope.py:90-91);
- `yarn`, `deepseek_yarn`: the block's original_max_position_embeddings × factor, as get_rope passes
  `original_max_position` (v0.11.0 __init__.py:146-186, v0.34.0 :243-306) to YaRNScalingRotaryEmbedding
  (yarn_scaling_rope.py v0.11.0:62, v0.34.0:78-79) and DeepseekScalingRotaryEmbedding (deepseek_scaling_rope.py
  v0.11.0:82, v0.34.0:105-106), whatever the factor: neither get_rope nor the classes guard it, so a factor of 1 or
  below builds original × factor rows too (read at v0.8.5 rotary_embedding.py:576, v0.11.0, v0.31.0 __init__.py:240-276,
  v0.34.0), fewer than the positions where the original is below them;
- `dynamic` (with a factor): the positions × factor through v0.21.0, a factor below 1 too (dynamic_ntk_scaling_rope.py
  v0.11.0:55-61, v0.21.0:62; v0.8.5 rotary_embedding.py:468-474, get_rope :1547-1551 unguarded), the positions from
  v0.22.0 (v0.22.0 :67, v0.34.0 :67);
- `longrope`: the original positions and the positions, one after the other (Phi3LongRoPEScaledRotaryEmbedding's
  short and long caches concatenated: phi3_long_rope_scaled_rope.py v0.11.0:63-71, v0.34.0:82-92);
- `llama3` and any other: the positions (RotaryEmbedding's: base.py v0.11.0:66, v0.34.0:97).

The linear and YaRN rows are SGLang's too (sglang/rope_rows.py); the dynamic and longrope rows are vLLM's own.
`torch.arange` over a float end counts ceil(end) rows.
"""

from __future__ import annotations

import math

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion, era_for
from kvtop.domain.model import ModelSpec

YARN = frozenset({"yarn", "deepseek_yarn"})
LONGROPE = "longrope"
# vLLM renames a legacy "su" rope to longrope before building it (patch_rope_scaling / patch_rope_parameters)
LONGROPE_TYPES = frozenset({LONGROPE, "su"})
# whether DynamicNTKScalingRotaryEmbedding's cache is the positions × factor long
DYNAMIC_SCALED_ERAS: Eras[bool] = Eras((
    Era("", True, "dynamic_ntk_scaling_rope.py: t = arange(max_position_embeddings × scaling_factor) (v0.11.0:55-61, "
                  "v0.21.0:62)"),
    Era("0.22.0", False, "dynamic_ntk_scaling_rope.py: t = arange(max_position_embeddings) (v0.22.0:67, v0.34.0:67)"),
))  # fmt: skip
CLASSES = {"linear": "LinearScalingRotaryEmbedding", "dynamic": "DynamicNTKScalingRotaryEmbedding",
           "yarn": "YaRNScalingRotaryEmbedding", "deepseek_yarn": "DeepseekScalingRotaryEmbedding",
           LONGROPE: "Phi3LongRoPEScaledRotaryEmbedding"}  # fmt: skip


def config_rope_rows(model: ModelSpec, version: ResolvedVersion) -> tuple[int, str] | None:
    """(cache rows, why) where the config's own rope builds a cache other than its positions long, else None."""
    positions, factor, kind = model.max_position_embeddings, model.rope_factor, model.rope_type
    original = model.rope_original_positions
    scaled = kind == "linear" or kind == "dynamic" and era_for(DYNAMIC_SCALED_ERAS, version).value
    if scaled:
        rows, told = math.ceil(positions * factor), f"{positions:,} positions × factor {factor:g}"
    elif kind in YARN:
        base = original or positions
        rows, told = math.ceil(base * factor), f"original_max_position_embeddings {base:,} × factor {factor:g}"
    elif kind in LONGROPE_TYPES and original:
        rows, told = original + positions, f"its short cache's {original:,} rows + its long cache's {positions:,}"
    else:
        return None
    built = LONGROPE if kind in LONGROPE_TYPES else kind
    return (rows, f"config's {kind} rope: {told} ({CLASSES[built]})") if rows != positions else None
