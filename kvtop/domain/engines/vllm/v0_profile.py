"""What V0's profiling run holds at its peak: the larger of its forward and its sampler (docs/engines/vllm.md §2).

V0's `profile_run` (vllm/worker/model_runner.py; through `_dummy_run` in 0.7.x) calls `execute_model` once: the forward
over `max_num_batched_tokens`, then `compute_logits` on the `max_num_seqs` sampled rows, then the sampler. The
forward's intermediates are locals of the model's forward, freed before the sampler; only the hidden states live
through it (read in the wheels of 0.6.4, 0.7.1 and 0.7.3, session 42h2). So the torch peak is the larger of:

- the forward at its MLP: the gate-up output, the activation's output and the down projection's output
  (`mlp_transient_gib`), beside the decoder layer's residual and the normed input the MLP was given (tokens × hidden
  × 2 B each): tokens × (3 × intermediate ÷ TP + 3 × hidden) × 2 B for a dense model. Llama-3.1-8B on an RTX 3090 at
  v0.6.4 (vllm#10517) printed 2.07 GiB at 20,000 tokens and 2.99 at 29,000; the count is 2.06 and 2.99;
- the sampler: the sort-based `_apply_top_k_top_p` (layers/sampler.py; `_dummy_run` sets top-k and top-p) holds the
  model-dtype logits, their float32 copy, the sorted values and int64 indices, the sorted probabilities, their
  cumulative sum, two masks and the re-scattered logits at once: 8 copies of seqs × vocab × 4 B, beside the forward's
  hidden states. The logs print about 10 (the fit's part: `vllm.activation.v0`); the count decides only which
  side a launch's peak is on.

A fused MoE's forward is not counted so: besides its experts' caches (`mlp_transient_gib`) V0 0.7.x holds the shared
experts' output, the FP8 block-quantized activations and the MLA prefill's tensors, not read. DeepSeek-R1 at TP 8 on
H200 (v0.7.3, 32,000 tokens, 1,024 seqs; search-index id 20903468563) printed 6.37 GiB where the count gives 4.68 and
the sampler 8 copies 3.94: its peak is assumed (± 2 GiB, as an unfitted peak is) and its log fits neither side.
"""

from __future__ import annotations

from kvtop.domain.calibration.features import logits_gib, mlp_transient_gib
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.vllm.profile_run import batch_limits, engine_era
from kvtop.domain.model import MlpKind
from kvtop.domain.wording import GIB

V0_SAMPLER_COPIES = 8  # layers/sampler.py `_apply_top_k_top_p` at its scatter, with the model-dtype logits (above)
HELD_HIDDEN = 2  # the decoder layer's residual and normed input, held across its MLP
MOE_FORWARD_ERROR = 2 * GIB  # a V0 fused MoE's forward, not counted: as wide as an unfitted peak's assumption


def v0_forward_bytes(inputs: CalibrationInputs, tokens: int | None = None) -> int | None:
    """The V0 forward's peak as counted (above); None outside V0 or without the model."""
    model = inputs.model
    if model is None or engine_era(inputs) != "v0":
        return None
    tokens = batch_limits(inputs)[0] if tokens is None else tokens
    return round(mlp_transient_gib(model, inputs.layout, tokens) * GIB) + HELD_HIDDEN * tokens * model.hidden_size * 2


def v0_sampler_bytes(inputs: CalibrationInputs) -> int | None:
    """The V0 sampler's peak as the code counts it: 8 copies of seqs × vocab × 4 B and the forward's hidden states."""
    model = inputs.model
    if model is None or engine_era(inputs) != "v0":
        return None
    tokens, seqs, _ = batch_limits(inputs)
    return round(V0_SAMPLER_COPIES * logits_gib(seqs, model) * GIB) + tokens * model.hidden_size * 2


def v0_forward_bound(inputs: CalibrationInputs) -> bool:
    """Whether a V0 launch's profile peaks in its forward, by the code's counts."""
    forward, sampler = v0_forward_bytes(inputs), v0_sampler_bytes(inputs)
    return forward is not None and sampler is not None and forward > sampler


def v0_moe_forward(inputs: CalibrationInputs) -> bool:
    """Whether a V0 launch runs a fused MoE, whose forward is not counted (above)."""
    model = inputs.model
    return model is not None and engine_era(inputs) == "v0" and model.moe is not None and MlpKind.MOE in model.layer_mlp
