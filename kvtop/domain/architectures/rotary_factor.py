"""The partial rotary factor: the share of a head the rope turns, which sizes the cos/sin cache the engines build
(`rope_cache.py`).

Read from the language model's section as the engines' configs see it: a top-level `partial_rotary_factor` (or the
legacy `rotary_pct` / `rotary_emb_fraction`: vLLM 0.19.1 transformers_utils/config.py:385 `patch_rope_parameters`
reads those three names and writes the first found into `rope_parameters`), else one inside a flat `rope_parameters` /
`rope_scaling` block (Qwen3.5's config.json), else the family's config class default: transformers 5.22.2
`kwargs.setdefault("partial_rotary_factor", …)` in models/qwen3_next/configuration_qwen3_next.py:128 (0.25),
qwen3_5/configuration_qwen3_5.py:111 (0.25), qwen3_5_moe/configuration_qwen3_5_moe.py:123 (0.25),
phi/configuration_phi.py:88 (0.5), glm4_moe/configuration_glm4_moe.py:123 (0.5), glm4/configuration_glm4.py:77 (0.5),
stablelm/configuration_stablelm.py:68 (0.25), persimmon/configuration_persimmon.py:62 (0.5),
nemotron/configuration_nemotron.py:77 (0.5). A factor nested by layer type (Gemma-4's `full_attention` block, whose
Gemma4RotaryEmbedding keeps the whole head anyway; MiMo-V2's, Laguna's per-type pairs) is not read: 1.0.
"""

from __future__ import annotations

from typing import Any

# the config class's default factor, by kvtop's family model_type (the sources above)
FAMILY_DEFAULTS: dict[str, float] = {
    "qwen3_next": 0.25, "qwen3_5_text": 0.25, "qwen3_5_moe_text": 0.25, "phi": 0.5, "glm4_moe": 0.5, "glm4": 0.5,
    "stablelm": 0.25, "persimmon": 0.5, "nemotron": 0.5,
}  # fmt: skip
TOP_LEVEL_NAMES = ("partial_rotary_factor", "rotary_pct", "rotary_emb_fraction")


def partial_rotary_factor(section: dict[str, Any], family: str) -> float:
    """The factor in (0, 1] the section states or its family defaults to; 1.0 (the whole head) otherwise."""
    for name in TOP_LEVEL_NAMES:
        if (stated := _factor(section.get(name))) is not None:
            return stated
    for key in ("rope_parameters", "rope_scaling"):
        block = section.get(key)
        if isinstance(block, dict) and (stated := _factor(block.get("partial_rotary_factor"))) is not None:
            return stated
    return FAMILY_DEFAULTS.get(family, 1.0)


def _factor(value: Any) -> float | None:
    """A stated factor in (0, 1], else None (absent, null, or out of range: the engines refuse those)."""
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 < value <= 1:
        return float(value)
    return None
