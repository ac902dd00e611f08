"""What SGLang holds on the GPU at `Load weight end` beside the parameters (the calibration's weights term adds
it to the book, as vLLM's `engines/vllm/weights_held.py` does; docs/engines/sglang.md §20.1).

The rotary embedding's cos/sin cache (`RotaryEmbedding.__init__`, srt/layers/rotary_embedding/base.py, read at
0.5.23): `_compute_cos_sin_cache` builds max_position_embeddings × rotary_dim float32 values and, on CUDA, keeps
them in float32 ("NOTE(ByronHsu): cache needs to be in FP32 for numerical stability": only other platforms cast
it to the model dtype), a non-persistent buffer built on the GPU with the model, whatever the TP; `get_rope`
shares one module per distinct rope (factory.py `_ROPE_DICT`). A forward later casts it to the activations'
dtype (`_match_cos_sin_cache_dtype`), after the load's measure. Read as one cache of the full head (or the MLA
rope part) over the config's positions, as vLLM's: a YaRN cache spans original positions × factor, a partial
rotary factor or a second rope are not in ModelSpec. The length is the config's positions, not `--context-length`
(`ModelConfig._derive_context_length` overrides `max_position_embeddings` for a draft model only); the
growth after the measure (`reserve_rope_cache_for_long_sequences`, srt/utils/common.py: to the context + 256 rows)
is 256 rows at a context up to the config's, and a longer one is refused (refusals.py).

Judged against the weights SGLang printed (`mem usage`, or free before less after the load;
tests/data/calibration/sglang.jsonl): Llama-3.1-8B-Instruct on an H100 (2025-03) book −1.01 % → −0.60 %, on an
80 GB GPU (0.4.1.post7) −0.88 % → −0.46 %, Qwen2.5-7B's geometry on an RTX 3090 −1.42 % → −0.99 %.
"""

from __future__ import annotations

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.rope_cache import rope_cache_bytes

ROPE_CACHE_BYTES = 4  # float32 on CUDA


def held_beside(inputs: CalibrationInputs) -> tuple[int, str] | None:
    """(bytes, why) SGLang holds on each rank beside the book's count; None where it adds nothing kvtop models."""
    return rope_cache(inputs)


def rope_cache(inputs: CalibrationInputs) -> tuple[int, str] | None:
    """The rotary embedding's float32 cos/sin cache, whole on every rank (kvtop.domain.rope_cache)."""
    if inputs.model is None:
        return None
    return rope_cache_bytes(inputs.model, ROPE_CACHE_BYTES, "float32 on CUDA, srt/layers/rotary_embedding/base.py")
