"""What vLLM's loader holds of a model's weights beside the weights book's count (the book counts the
checkpoint's tensors; the calibration's weights term adds this, docs/calibration.md).

MXFP4 experts on Hopper (`Mxfp4MoEMethod`, Triton backend: vLLM's default on SM90 without
VLLM_USE_FLASHINFER_MOE_MXFP4_BF16 / VLLM_MXFP4_USE_MARLIN; `quantization/mxfp4.py`, read at main
007d500, gpt-oss support from v0.10.1):

- `create_weights` pads the intermediate size per partition to a multiple of 64: parameters the class builds,
  so the book's rows (weights_built.py), not held here;
- `process_weights_after_loading` converts the expert biases to float32 and swizzles the weights and
  scales into new tensors (`_swizzle_mxfp4`); the checkpoint's weights are deleted, its scales stay
  registered on the layer: the scales are held twice.

Judged against the weights vLLM printed (llm-d-planner's H100 runs): gpt-oss-20b TP 1 (v0.11.0) book
−4.85 % → −0.6 %, gpt-oss-120b −5.61 % → −0.3 %, gpt-oss-20b TP 2 (v0.19.0) −8.55 % → −2.9 %.

MXFP4 experts on Ampere and Ada (SM 8.x: the Triton kernels need SM 9.0, so the Marlin backend): the
padded sizes are the book's rows (weights_built.py); `prepare_moe_fp4_layer_for_marlin` repacks weights and
scales in place of the checkpoint's, so nothing is held beside. gpt-oss-20b on an A100 (v0.19.0, myoceane.fr)
printed 13.72 GiB: the book 12.82, with the padding 13.67.

Blackwell's FlashInfer backends (padding to 256, shuffled copies) are not modelled: the book's count
stands, with the term's error.

The rotary embedding's cos/sin cache (`RotaryEmbedding.__init__`, rotary_embedding/base.py: a buffer of
max_position_embeddings × rotary_dim, cast to the model's dtype, on every rank whatever the TP; `get_rope`
shares one per distinct rope). The load's measure counts it, the checkpoint does not: Llama-4-Scout's 10,485,760
positions × 128 × 2 B = 2.5 GiB a rank (vLLM 0.19.0 at TP 4 printed 53.12 GiB, the book 50.60); Llama-3.1-8B's
131,072 × 128 × 2 B = 32 MiB (14.99 GiB printed, the book 14.96). Read as one cache of the full head (or the
MLA rope part): a partial rotary factor, a second rope (Gemma-3's local one) and Phi-3's long/short pair are
not in ModelSpec, and each is tens of MiB at most at their position counts.
"""

from __future__ import annotations

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.vllm.weights_built import MXFP4_BLOCK, mxfp4_experts
from kvtop.domain.model import MlpKind

# models whose vLLM code builds the rope in float32 whatever the model's dtype (gpt_oss.py OAIAttention:
# get_rope(..., dtype=torch.float32))
FLOAT32_ROPE = frozenset({"GptOssForCausalLM"})


def held_beside(inputs: CalibrationInputs) -> tuple[int, str] | None:
    """(bytes, why) vLLM holds on the largest rank beside the book's count; None where it adds nothing
    kvtop models."""
    parts = [part for part in (rope_cache(inputs), _mxfp4(inputs)) if part is not None]
    if not parts:
        return None
    return sum(size for size, _ in parts), "; ".join(why for _, why in parts)


def rope_cache(inputs: CalibrationInputs) -> tuple[int, str] | None:
    """The rotary embedding's cos/sin cache: max positions × rotary dim × the cache's dtype, whole on every
    rank; None for a model without rotary positions (a learned position table)."""
    model = inputs.model
    if model is None or model.body.learned_positions or model.max_position_embeddings <= 0:
        return None
    rotary = model.mla.qk_rope_head_dim if model.mla is not None else model.head_dim
    width = 4 if model.architecture in FLOAT32_ROPE else model.dtype_bytes
    size = model.max_position_embeddings * rotary * width
    return size, (
        f"the rope's cos/sin cache ({model.max_position_embeddings:,} positions × {rotary} × {width} B, on every rank: "
        "rotary_embedding/base.py)"
    )


def _mxfp4(inputs: CalibrationInputs) -> tuple[int, str] | None:
    """vLLM's MXFP4 experts on Hopper (Triton): what they hold after load beside the parameters they build (the
    padded width is the book's row: weights_built.py); Marlin repacks in place, so nothing beside."""
    model = inputs.model
    if model is None or model.moe is None:
        return None
    built = mxfp4_experts(model, inputs.layout, inputs.gpu_name, inputs.version)
    if built is None or built.backend != "triton":
        return None
    moe, layout, hidden, experts, padded = model.moe, inputs.layout, built.hidden, built.experts, built.padded
    elements = experts * 3 * hidden  # gate and up (2 × intermediate rows) and down, per unit of intermediate
    scales_again = elements * padded / MXFP4_BLOCK  # the checkpoint's scales, kept beside the swizzled copy
    biases = 0.0
    if moe.expert_bias:  # float32 in place of the built 16-bit biases (w13's split as its rows, w2's over EP only)
        book_biases = moe.num_routed_experts * model.dtype_bytes * (
            2 * moe.expert_intermediate_size / layout.moe_shards + hidden / layout.ep
        )
        padded_biases = experts * 2 * (padded - built.width) * model.dtype_bytes  # weights_built's bias rows
        biases = experts * (2 * padded + hidden) * 4 - book_biases - padded_biases
    layers = sum(1 for kind in model.layer_mlp if kind is MlpKind.MOE) // layout.pp or 1
    extra = round(layers * (scales_again + biases))
    return extra, (
        "vLLM's MXFP4 experts on Hopper: the checkpoint's scales kept beside the swizzled copy, float32 biases "
        "(quantization/mxfp4.py, Triton backend)"
    )
