"""The rotary embedding's cos/sin cache an engine builds beside the checkpoint's weights: max positions × rotary
dim values, whole on every rank whatever the TP, one per distinct rope (both vLLM's and SGLang's `get_rope`
share a module per rope). The checkpoint holds no such tensor, the load's measure counts it, so each engine's
calibration adds it to the weights book with the width its code keeps it in (vLLM: the model's dtype, SGLang on
CUDA: float32) and the file that says so.

Read as one cache of the full head (or the MLA or DeepSeek-V4 latent's rope part) over the config's positions: a partial rotary factor,
a second rope (Gemma-3's local one) and Phi-3's long/short pair are not in ModelSpec (tens of MiB at most).
"""

from __future__ import annotations

from kvtop.domain.architectures.positions import alibi_positions
from kvtop.domain.model import ModelSpec


def rope_cache_bytes(model: ModelSpec, width_bytes: int, source: str) -> tuple[int, str] | None:
    """(bytes, why) of the cos/sin cache at `width_bytes` a value, whole on every rank, its why naming `source`
    (the engine file that builds it); None for a model without rotary positions (a learned table, ALiBi's biases:
    `architectures/positions.py`, or no attention: Mamba's mixers build no rope)."""
    if model.body.learned_positions or model.max_position_embeddings <= 0 or model.attention_free or alibi_positions(model):
        return None
    if model.mla is not None:
        rotary = model.mla.qk_rope_head_dim
    elif model.compressed is not None:  # DeepSeek-V4: the rope part of its latent (rope_head_dim), not the latent
        rotary = model.compressed.rope_head_dim
    else:
        rotary = model.head_dim
    size = model.max_position_embeddings * rotary * width_bytes
    return size, (
        f"the rope's cos/sin cache ({model.max_position_embeddings:,} positions × {rotary} × {width_bytes} B, "
        f"on every rank: {source})"
    )
