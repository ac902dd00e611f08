"""The positions SGLang's rope module builds its cos/sin cache for, by the config's rope type (docs/engines/sglang.md
§20.1): `get_rope` picks the class by type (0.5.23 layers/rotary_embedding/factory.py:201-430; 0.5.9
layers/rotary_embedding.py get_rope) and each class's `_compute_cos_sin_cache` counts its rows.

- `linear`: max positions × factor (LinearScalingRotaryEmbedding: 0.4.3 get_rope :1079, 0.5.9 :482, 0.5.23
  base.py:649-661);
- `dynamic`: max positions × factor (DynamicNTKScalingRotaryEmbedding: 0.5.9 :536, 0.5.23 rope_variant.py:880-887);
  with `alpha` (HunYuan's DynamicNTKAlphaRotaryEmbedding, :682-688) the max positions, which kvtop does not tell
  apart: such configs state factor 1.0;
- `yarn`, `deepseek_yarn` (DeepSeek's classes rename `yarn`): the block's original_max_position_embeddings (else the
  max positions) × factor, as get_rope passes `original_max_position` (factory.py:311-400) to YaRNScalingRotaryEmbedding
  (yarn.py:171-174), YaRNScalingMRotaryEmbedding (mrope.py:510-513) and DeepseekScalingRotaryEmbedding
  (rope_variant.py:406-409); 0.5.9 :660, :2784, :1078 alike;
- any other (`default`, `llama3`, a default mrope): the max positions (base.py:253-260).

`torch.arange` over a float end counts ceil(end) rows. Read at 0.5.9 and 0.5.23.
"""

from __future__ import annotations

import math

from kvtop.domain.model import ModelSpec

SCALED = frozenset({"linear", "dynamic"})  # max positions × factor
YARN = frozenset({"yarn", "deepseek_yarn"})  # original positions × factor
CLASSES = {"linear": "LinearScalingRotaryEmbedding", "dynamic": "DynamicNTKScalingRotaryEmbedding",
           "yarn": "YaRNScalingRotaryEmbedding", "deepseek_yarn": "DeepseekScalingRotaryEmbedding"}  # fmt: skip


def rope_cache_rows(model: ModelSpec) -> int:
    """The rows of the cache SGLang builds for `model`'s rope (module docstring)."""
    positions, factor = model.max_position_embeddings, model.rope_factor
    if model.rope_type in SCALED and factor > 1:
        return math.ceil(positions * factor)
    if model.rope_type in YARN:
        return math.ceil((model.rope_original_positions or positions) * factor)
    return positions


def rows_why(model: ModelSpec) -> str:
    """Why the cache is not the config's positions long, where it is not; else ''."""
    rows = rope_cache_rows(model)
    if rows == model.max_position_embeddings:
        return ""
    base = model.rope_original_positions if model.rope_type in YARN and model.rope_original_positions else None
    told = f"original_max_position_embeddings {base:,}" if base else f"the config's {model.max_position_embeddings:,} positions"
    return f"{CLASSES[model.rope_type]}: {told} × its factor {model.rope_factor:g} = {rows:,} rows"
