"""FoPE's Fourier coefficients (Intern-S1-Pro): how many rotary frequencies its cos_coef and sin_coef span.

vLLM 0.33.0 layers/rotary_embedding/fope.py `FourierRotaryEmbedding`: the frequencies 1 ÷ θ^(2i ÷ rotary_dim),
i < rotary_dim ÷ 2, keeping the first `num_inv_freq` where stated, else those above 2π ÷ max_position (the
attention's max_position_embeddings); cos_coef and sin_coef are [KV heads of the rank, F, F] each, F the kept
count, one pair a model (get_rope caches the module, so every layer shares it: named_parameters lists it once).
"""

from __future__ import annotations

import math


def fope_frequencies(rotary_dim: int, theta: float, max_position: int, num_inv_freq: int | None) -> int:
    """F: the frequencies FoPE keeps (its coefficients' width)."""
    half = rotary_dim // 2
    if num_inv_freq is not None:
        return min(num_inv_freq, half)
    floor = 2.0 * math.pi / max_position
    return sum(1 for i in range(half) if theta ** (-(2 * i) / rotary_dim) > floor)
