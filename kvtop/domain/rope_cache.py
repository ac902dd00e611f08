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
48.22). A second rope of the same head size (Gemma-3's local one) and Phi-3's long/short pair are not in ModelSpec
(tens of MiB at most).

The cache is the rotary part of the head wide, not the head: head × the config's partial rotary factor
(`ModelSpec.partial_rotary_factor`, architectures/rotary_factor.py). vLLM from the rope_parameters refactor:
get_rope takes the factor from rope_parameters, `rotary_dim = int(head_size * partial_rotary_factor)` (0.17.1 and
0.19.1 layers/rotary_embedding/__init__.py get_rope, 0.27.1 :69-72), the legacy top-level names patched in by
`patch_rope_parameters`; before it get_rope cut the rotary_dim a class passed by the factor it passed (0.6.4
layers/rotary_embedding.py:967-968) or the class cut it itself (0.6.4 models/phi.py:99-111). Not checked by release:
which vLLM release's llama.py first passed Phi-3's factor (Phi-4-mini; 0.6.4 llama.py:164 keeps the whole head). SGLang: factory.py get_rope `if partial_rotary_factor < 1.0:
rotary_dim = int(rotary_dim * partial_rotary_factor)` (0.5.11 :94-95), the classes passing the config's factor
(0.5.11 models/qwen3_next.py:618-631, qwen3_5.py:693-710) or cutting it themselves (0.5.23 models/phi.py,
stablelm.py, glm4.py). Qwen3.5-9B (262,144 positions,
head 256, factor 0.25): 262,144 × 64 × 4 B = 64 MiB on SGLang, × 2 B = 32 MiB on vLLM, not 256 / 128 MiB. Gemma-4's
factor is nested by layer type and not read (its whole-head rope above); its layers of other head sizes keep the
whole head (`other_head_sizes`).
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
    else:  # the rotary part of the head: get_rope's int(head × factor) (module docstring)
        rotary = int(model.head_dim * model.partial_rotary_factor)
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
