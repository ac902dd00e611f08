"""The positions SGLang's rope module builds its cos/sin cache for, by the config's rope type (docs/engines/sglang.md
§20.1): `get_rope` picks the class by type (0.5.23 layers/rotary_embedding/factory.py:201-430; 0.5.9
layers/rotary_embedding.py get_rope) and each class's `_compute_cos_sin_cache` counts its rows.

- `linear`: max positions × factor (LinearScalingRotaryEmbedding: 0.4.3 get_rope :1079, 0.5.9 :482, 0.5.23
  base.py:649-661), a factor below 1 too: get_rope passes it unguarded (0.5.23 factory.py:278-288);
- `dynamic`: max positions × factor, below 1 too (DynamicNTKScalingRotaryEmbedding: 0.5.9 :536, 0.5.23
  rope_variant.py:880-887, factory.py:289-310 unguarded);
  with `alpha` (HunYuan's DynamicNTKAlphaRotaryEmbedding, :682-688) the max positions, which kvtop does not tell
  apart: such configs state factor 1.0;
- `yarn`, `deepseek_yarn` (DeepSeek's classes rename `yarn`): the block's original_max_position_embeddings (else the
  max positions) × factor, as get_rope passes `original_max_position` (factory.py:311-400) to YaRNScalingRotaryEmbedding
  (yarn.py:171-174), YaRNScalingMRotaryEmbedding (mrope.py:510-513) and DeepseekScalingRotaryEmbedding
  (rope_variant.py:406-409); 0.5.9 :660, :2784, :1078 alike;
- `longrope` (Phi-3's, a legacy `su` renamed by transformers' Phi3Config: 4.57.1 configuration_phi3.py:194-196):
  Phi3LongRoPEScaledRotaryEmbedding (0.5.23 factory.py:402-427, rope_variant.py:37-101; 0.4.3 rotary_embedding.py
  :548-562, 0.5.6 :676-693) keeps three buffers, each `.to(dtype)` (get_rope's dtype: the default dtype the loader sets
  to the model's, model_loader/loader.py:838): the short cache (original_max_position_embeddings rows, which models/
  llama.py:329-334 copies into the rope block), the long one (the max positions) and their concatenation, so
  2 × (original + max) rows at 2 B, not float32. From 0.4.3 (0.4.1.post4's llama.py imports vLLM's get_rope);
- any other (`default`, `llama3`, a default mrope): the max positions (base.py:253-260).

`torch.arange` over a float end counts ceil(end) rows. Read at 0.5.9 and 0.5.23.
"""

from __future__ import annotations

import math

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.model import ModelSpec

SCALED = frozenset({"linear", "dynamic"})  # max positions × factor
YARN = frozenset({"yarn", "deepseek_yarn"})  # original positions × factor
LONGROPE_TYPES = frozenset({"longrope", "su"})
LONGROPE_BYTES = 2  # the served 16-bit dtype (module docstring)
LONGROPE_ERAS: Eras[bool] = Eras((
    Era("", False, "0.4.1.post4 models/llama.py:26 imports vLLM's get_rope (its class not read here)"),
    Era("0.4.3", True, "layers/rotary_embedding.py Phi3LongRoPEScaledRotaryEmbedding: short, long and long_short "
                       "buffers in the model dtype (0.4.3 :548-562, 0.5.6 :676-693, 0.5.23 rope_variant.py:37-101)"),
))  # fmt: skip
CLASSES = {"linear": "LinearScalingRotaryEmbedding", "dynamic": "DynamicNTKScalingRotaryEmbedding",
           "yarn": "YaRNScalingRotaryEmbedding", "deepseek_yarn": "DeepseekScalingRotaryEmbedding"}  # fmt: skip


def rope_cache_rows(model: ModelSpec) -> int:
    """The rows of the cache SGLang builds for `model`'s rope (module docstring)."""
    positions, factor = model.max_position_embeddings, model.rope_factor
    if model.rope_type in SCALED:
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


def longrope_rows(model: ModelSpec, version: ResolvedVersion) -> int | None:
    """The rows of Phi3LongRoPEScaledRotaryEmbedding's three buffers together (2 × (original + max positions)), where
    the config's rope is a longrope one and the release builds SGLang's own class; else None."""
    if model.rope_type not in LONGROPE_TYPES or not LONGROPE_ERAS.at(version):
        return None
    return 2 * (longrope_original(model) + model.max_position_embeddings)


def longrope_original(model: ModelSpec) -> int:
    """The short cache's rows: the block's original_max_position_embeddings, else the max positions (factory.py)."""
    return model.rope_original_positions or model.max_position_embeddings
