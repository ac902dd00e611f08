"""What SGLang holds on the GPU at `Load weight end` beside the parameters (the calibration's weights term adds
it to the book, as vLLM's `engines/vllm/weights_held.py` does; docs/engines/sglang.md §20.1).

The rotary embedding's cos/sin cache (`RotaryEmbedding.__init__`, srt/layers/rotary_embedding/base.py, read at
0.5.23): `_compute_cos_sin_cache` builds max_position_embeddings × rotary_dim float32 values and, on CUDA, keeps
them in float32 ("NOTE(ByronHsu): cache needs to be in FP32 for numerical stability": only other platforms cast
it to the model dtype), a non-persistent buffer built on the GPU with the model, whatever the TP; `get_rope`
shares one module per distinct rope (factory.py `_ROPE_DICT`). A forward later casts it to the activations'
dtype (`_match_cos_sin_cache_dtype`), after the load's measure. Read as one cache of the full head (or the MLA
rope part) over the positions its rope type builds (rope_rows.py: a `linear` or `dynamic` rope's the config's × factor,
a YaRN one's original_max_position_embeddings × factor); a partial rotary factor or a second rope are not in ModelSpec, but
Gemma-3's by era (`GEMMA3_ROPE_CACHES`): no cache before 0.5.10 (Gemma3RotaryEmbedding computes cos/sin each
forward), then one default rope per layer type (2 × positions × head × 4 B; config.json's linear factor 8 unread).
The length is those rows, not `--context-length` (`ModelConfig._derive_context_length` overrides
`max_position_embeddings` for a draft model only); the growth after the measure (`reserve_rope_cache_for_long_sequences`,
srt/utils/common.py: to the context + 256 rows) is 256 rows at most at a context up to the one SGLang derives; a
longer one is refused, or planned where the launch allows it with the growth past the cache's own rows charged to the
KV budget, not to this term (rope_growth.py, from 0.5.6).

Judged against the weights SGLang printed (`mem usage`, or free before less after the load;
tests/data/calibration/sglang.jsonl): Llama-3.1-8B-Instruct on an H100 (2025-03) book −1.01 % → −0.60 %, on an
80 GB GPU (0.4.1.post7) −0.88 % → −0.46 %, Qwen2.5-7B's geometry on an RTX 3090 −1.42 % → −0.99 %.

What the caching allocator reserves beyond the tensors' bytes (`allocator_rounding`): SGLang's `mem usage` is free
memory before less after the load, each read after `torch.cuda.empty_cache()`, so the segments PyTorch opened for the
parameters count, not their bytes (kvtop.domain.torch_segments; docs/engines/sglang.md §20.2): Qwen2.5-32B at TP 4
holds 226 MiB a rank more than its tensors.

MLA's w_kc and w_vc (`mla_split.py`): DeepSeek's classes copy kv_b_proj's two halves at the load and keep kv_b_proj.

Ministral3's first layer stack (`layers_twice.py`, from 0.5.7): models/ministral3.py builds the decoder layers twice and
the first stack's linear weights stay, cyclic garbage, until the CUDA graph capture's gc.collect() (Devstral-Small-2 AWQ
at TP 2: 5.38 GiB a rank); its two attention classes ask get_rope for two rope modules, both kept (a second cache).

A block-FP8 checkpoint on SM 8.0–8.8 from 0.5.1 (`weights_fp8_marlin.py`): weight-only FP8 Marlin holds the block
scales as group scales in the model's dtype (Qwen3-32B-FP8 on an A100: +0.45 GiB, and 61 MiB more of rounding).

Grok's per-layer scaled rope (models/grok.py, read in 0.5.1, 0.5.2rc2, 0.5.6.post2 and 0.5.23; 0.5.0rc2 has no
`get_rope_scaling`): `Grok1Attention.__init__` builds the shared `get_rope` module (the cache above), then, where
`get_rope_scaling(config)` finds a top-level `rope_type`, replaces it with its own `ScalingRotaryEmbedding`,
constructed directly, not through `get_rope`, so nothing shares it: one per layer of
`range(config.num_hidden_layers)`, every layer on every rank. Its `_compute_cos_sin_cache` spans
`torch.arange(original_max_position_embeddings × scaling_factor)` positions × rotary_dim (halved under
`rope_rotate_half_dims`), float32 on CUDA as above; the shared module stays alive in `_ROPE_DICT`. xAI's Grok-2
(original 8,192 × 16.0 = 131,072 positions, head 128): 64 × 131,072 × 128 × 4 B = 4 GiB a rank
(tests/data/calibration/sglang.jsonl's Grok-2 start at TP 8: book 31.71 GiB + 4.00 = 35.71 against 36.73 logged).
"""

from __future__ import annotations

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.sglang.layers_twice import first_stack, second_rope
from kvtop.domain.engines.sglang.mla_split import split_copies, split_tensors
from kvtop.domain.engines.sglang.mxfp4_held import mxfp4_held, swizzled_scale_tensors
from kvtop.domain.engines.sglang.rope_rows import (
    LONGROPE_BYTES,
    longrope_original,
    longrope_rows,
    rope_cache_rows,
    rows_why,
)
from kvtop.domain.engines.sglang.weights_fp8_marlin import marlin_block_scales, marlin_scale_tensors
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.model import ModelSpec
from kvtop.domain.rope_cache import rope_cache_bytes
from kvtop.domain.torch_segments import reserved_bytes
from kvtop.domain.weights import WeightsBook, weights_book
from kvtop.domain.wording import mib

ROPE_CACHE_BYTES = 4  # float32 on CUDA
GROK_CLASSES = frozenset({"Grok1ForCausalLM", "Grok1ModelForCausalLM"})  # grok.py (the second subclasses the first)
LAYER_ROPE_ERAS: Eras[bool] = Eras((
    Era("", False, "no ScalingRotaryEmbedding in models/grok.py before 0.5.1 (0.5.0rc2 read)"),
    Era("0.5.1", True, "models/grok.py Grok1Attention: a ScalingRotaryEmbedding per layer (read in 0.5.1, 0.5.2rc2, "
                       "0.5.6.post2, 0.5.23)"),
))  # fmt: skip

# Gemma-3's text stack (models/gemma3_causal.py; gemma3_mm.py builds it): the cos/sin caches it holds by era.
GEMMA3_CLASSES = frozenset({"Gemma3ForCausalLM", "Gemma3ForConditionalGeneration"})
GEMMA3_ROPE_CACHES: Eras[int] = Eras((
    Era("", 0, "models/gemma3_causal.py (0.4.4.post2 :476-483, 0.4.6.post5 :485-492, 0.5.1 :491-498, 0.5.9 :450-457): no get_rope; the model's "
               "two Gemma3RotaryEmbedding modules hold inv_freq only and compute cos/sin each forward"),
    Era("0.5.10rc0", 2, "models/gemma3_causal.py Gemma3Attention: get_rope(max_position=config.max_position_embeddings, "
                        "rope_scaling={'rope_type': 'default'}) on both layer types, the sliding base beside the global "
                        "one; factory.py keys a module by base (0.5.10rc0 :204, 0.5.10 :188-211, 0.5.23 :194-225; "
                        "factory.py:158-167)"),
))  # fmt: skip


def held_beside(inputs: CalibrationInputs) -> tuple[int, str] | None:
    """(bytes, why) SGLang holds on each rank beside the book's count; None where it adds nothing kvtop models."""
    ropes = (rope_cache(inputs), layer_ropes(inputs), second_rope(inputs, ROPE_CACHE_BYTES))
    caches = [part for part in ropes if part is not None]
    split = split_copies(inputs)
    parts = [*caches, split] if split is not None else caches
    marlin = marlin_block_scales(inputs)
    if marlin is not None:
        parts.append(marlin)
    twice = first_stack(inputs, stage_book)  # Ministral3's first layer stack (its tensors' rounding not counted)
    if twice is not None:
        parts.append(twice)
    mxfp4 = mxfp4_held(inputs)  # gpt-oss's MXFP4 experts on triton_kernels (mxfp4_held.py)
    if mxfp4 is not None:
        parts.append(mxfp4)
    # each tensor apart for the allocator's rounding: a cache one, the MLA split two a layer, Marlin's group scales
    # one a module (made after the load), the swizzled MXFP4 scales two a MoE layer
    beside = [*(size for size, _ in caches), *split_tensors(inputs), *marlin_scale_tensors(inputs),
              *swizzled_scale_tensors(inputs)]
    rounding = allocator_rounding(inputs, beside)
    if rounding is not None:
        parts.append(rounding)
    if not parts:
        return None
    return sum(size for size, _ in parts), "; ".join(why for _, why in parts)


def allocator_rounding(inputs: CalibrationInputs, beside: list[int]) -> tuple[int, str] | None:
    """What PyTorch's caching allocator reserves for the rank's tensors (the book's, in its order, then the buffers
    `beside` it) beyond their bytes (`torch_segments.reserved_bytes`): SGLang measures the load as the free memory
    before less after it, each read after `torch.cuda.empty_cache()` (`get_available_gpu_memory`, srt/utils.py
    174-191 at 0.4.3.post4; srt/utils/common.py at 0.5.23), so a segment's unused tail counts as held. None where
    the book does not list the rank's tensors (a file loaded as stored) or for a pipeline stage (its book is
    another's); a vision tower's tensors are not listed, so their rounding is not counted."""
    model = inputs.model
    if model is None or inputs.layout.pp > 1:
        return None
    book = stage_book(inputs)
    if book.tensor_bytes is None:
        return None
    tensors = (*book.tensor_bytes, *beside)
    rounding = reserved_bytes(tensors) - sum(tensors)
    if rounding <= 0:
        return None
    return rounding, (
        f"PyTorch's caching allocator's rounding of the rank's {len(tensors):,} tensors ({mib(rounding)}: "
        "a tensor of 10 MiB or more gets a segment rounded up to 2 MiB, one of 1–10 MiB shares 20 MiB ones; "
        "SGLang's `mem usage` is free memory before less after the load, c10/cuda/CUDACachingAllocator.cpp)"
    )


def stage_book(inputs: CalibrationInputs) -> WeightsBook:
    """The book the ledger holds for a one-stage launch (`weights_book` remembers it): SGLang's tower split and
    stage parts."""
    from kvtop.domain.engines.registry import engine_rules  # the package's rules: imported when first asked

    assert inputs.model is not None
    rules = engine_rules("sglang")
    model, layers = inputs.model, range(inputs.model.num_layers)
    return weights_book(
        model, inputs.layout, layers, first_stage=True, last_stage=True,
        tower_split=rules.architectures.TOWER_SPLIT.for_launch(inputs.settings.flags, inputs.version.text,
                                                                 inputs.layout.attn_dp),
        parts=rules.stage_parts(model, 0, 1, inputs.version),
    )  # fmt: skip


def rope_cache(inputs: CalibrationInputs) -> tuple[int, str] | None:
    """The rotary embedding's cos/sin cache, whole on every rank (kvtop.domain.rope_cache): float32 over the rows its
    rope type builds (rope_rows.py), Phi-3's longrope buffers in the model dtype; Gemma-3's classes by era (none, then
    one per layer type)."""
    return rope_cache_of(inputs.model, inputs.version) if inputs.model is not None else None


def cache_rows(model: ModelSpec) -> int:
    """The rows each of `model`'s rope caches holds: its rope type's (rope_rows.py), but Gemma-3's default ropes'
    the config's positions (its linear factor unread)."""
    return model.max_position_embeddings if model.architecture in GEMMA3_CLASSES else rope_cache_rows(model)


def rope_cache_of(model: ModelSpec, version: ResolvedVersion) -> tuple[int, str] | None:
    """`rope_cache` for a model and release."""
    source = "float32 on CUDA, srt/layers/rotary_embedding/base.py"
    if model.architecture in GEMMA3_CLASSES:
        caches = GEMMA3_ROPE_CACHES.at(version)
        found = rope_cache_bytes(model, ROPE_CACHE_BYTES, source) if caches else None
        if found is None:
            return None
        return caches * found[0], (f"{caches} × {found[1]}: models/gemma3_causal.py's sliding and global layers each "
                                   "ask get_rope for a default rope, of two bases (two modules; config.json's linear "
                                   "factor is not read)")  # fmt: skip
    if (longrope := longrope_rows(model, version)) is not None:  # Phi-3's three buffers, model dtype (rope_rows.py)
        source = (f"Phi3LongRoPEScaledRotaryEmbedding's short, long and concatenated caches: 2 × ({longrope_original(model):,}"
                  f" + {model.max_position_embeddings:,}) rows in the model dtype, srt/layers/rotary_embedding/rope_variant.py")
        wide = model.model_copy(update={"max_position_embeddings": longrope})
        return rope_cache_bytes(wide, LONGROPE_BYTES, source)
    # the rows the rope type builds (rope_rows.rope_cache_rows: a linear or dynamic rope's positions × factor, a YaRN
    # one's original_max_position_embeddings × factor), where they are not the config's positions (rows_why): more or
    # fewer, whichever the factor and the original give; where they are, the cache and its source stay the positions'
    if why := rows_why(model):
        source += f"; {why}"
        model = model.model_copy(update={"max_position_embeddings": rope_cache_rows(model)})
    return rope_cache_bytes(model, ROPE_CACHE_BYTES, source)


def layer_ropes(inputs: CalibrationInputs) -> tuple[int, str] | None:
    """Grok's own scaled rope on each layer (a config with a top-level rope_type): layers × positions × rotary
    width × 4 B, whole on every rank."""
    model = inputs.model
    if model is None or model.architecture not in GROK_CLASSES or not model.top_level_rope:
        return None
    if not LAYER_ROPE_ERAS.at(inputs.version):
        return None
    positions, width = model.top_level_rope
    size = model.num_layers * positions * width * ROPE_CACHE_BYTES
    return size, (
        f"Grok's scaled rope on each of its {model.num_layers} layers ({positions:,} positions × {width} × "
        f"{ROPE_CACHE_BYTES} B, on every rank: models/grok.py ScalingRotaryEmbedding, not shared through get_rope)"
    )
