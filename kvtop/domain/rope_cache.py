"""The rotary embedding's cos/sin cache an engine builds beside the checkpoint's weights: max positions × rotary
dim values, whole on every rank whatever the TP, one per distinct rope (both vLLM's and SGLang's `get_rope`
share a module per rope). The checkpoint holds no such tensor, the load's measure counts it, so each engine's
calibration adds it to the weights book with the width its code keeps it in (vLLM: the model's dtype, SGLang on
CUDA: float32) and the file that says so.

Read as one cache of the full head (or the MLA or DeepSeek-V4 latent's rope part) over the config's positions, and one
more for each other head size the model's layers have (`ModelSpec.layer_geometry`): `get_rope` keys its module by the
head size, so a layer of another head builds its own cache. Gemma-4's global layers (global_head_dim 512, beside the
sliding layers' 256) build `Gemma4RotaryEmbedding`, whose cache is the whole head wide whatever its partial rotary
factor (vLLM 0.19.0 model_executor/models/gemma4.py:365 `get_rope(self.head_dim, …)`,
rotary_embedding/gemma4_rope.py:47-54 `super().__init__(head_size, head_size, …)`; SGLang 0.5.23
srt/models/gemma4_causal.py:417, rotary_embedding/rope_variant.py:921-923 the same): 262,144 positions × 512 × 2 B =
256 MiB on every vLLM rank, which Gemma-4-26B-A4B's 'Model loading took 48.5 GiB' holds (the book with one cache:
48.22). A partial rotary factor of another rope, a second rope of the same head size (Gemma-3's local one) and
Phi-3's long/short pair are not in ModelSpec (tens of MiB at most).
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
    widths = (rotary, *other_head_sizes(model))
    size = model.max_position_embeddings * sum(widths) * width_bytes
    shown = str(rotary) if len(widths) == 1 else f"({' + '.join(str(width) for width in widths)})"
    return size, (
        f"the rope's cos/sin cache ({model.max_position_embeddings:,} positions × {shown} × {width_bytes} B, "
        f"on every rank: {source})"
    )


def other_head_sizes(model: ModelSpec) -> tuple[int, ...]:
    """The head sizes of the model's attention layers beyond its own (`layer_geometry`), each building its own rope:
    Gemma-4's global layers (512 beside 256); () for a model whose layers share one head size, or a latent one."""
    if model.mla is not None or model.compressed is not None or not model.layer_geometry:
        return ()
    sizes = {geometry.head_dim for geometry in model.layer_geometry if geometry.head_dim > 0}
    return tuple(sorted(sizes - {model.head_dim}))
