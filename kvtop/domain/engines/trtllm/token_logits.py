"""How far a v0.8 trtllm-build engine's runtime form is known to hold: its error by the vocabulary it was read at (§18).

What. The v0.8 form charges max_num_tokens × vocab × 4 B for the C++ runtime (`calibration.token_logits_estimate`).
It was read off two Triton starts of one Llama-3-8B engine family (vocab 128,256; TensorRT's process-wide count grew
4,030 MiB at 8,192 tokens and 5,946 MiB at 12,288 around the execution context, 0.8 % and 1.1 % from the form). What
in those engines grows with the vocabulary is not read (no 0.8 tree at hand): v0.8's `DecoderModelForCausalLM`
gathers the last tokens before the LM head, so the activation need not hold [tokens, vocab] at all. So the form's
error is its logs' 10 % only at the vocabulary the logs measured; at another vocabulary the per-token rate is
assumed, and the error reaches the one count TensorRT must hold for the build's packed tokens whatever the
vocabulary: the widest layer's live tensors, the MLP's three [tokens, intermediate] and the residual (§18 "before
v0.8", `engine_build.packed_tokens_mlp_bytes`, as `calibration.packed_tokens_estimate` charges).

Why. Issue #1400's SmoothQuant Llama-2-7B engine (vocab 32,000, 4,096 tokens) is charged 0.49 GiB by the form,
±0.05; the packed tokens' MLP holds 0.28 GiB. The 10 % measured at vocab 128,256 is no measurement at 32,000.
"""

from __future__ import annotations

from kvtop.domain.engines.trtllm.engine_build import packed_tokens_mlp_bytes
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.wording import gib

# v0.8 (§18): the two Triton logs of Llama-3-8B miss max_num_tokens × vocab × 4 B by 0.8 % and 1.1 %; the
# error allowed is wider (two logs of one model on one GPU)
TOKEN_LOGITS_RELATIVE_ERROR = 0.10
# the vocabulary of both logs the form was read off (Meta-Llama-3-8B-Instruct, files 29429054722 and 69112122406)
TOKEN_LOGITS_READ_VOCAB = 128_256


def token_logits_error(model: ModelSpec, layout: ParallelLayout, value: int, tokens: int) -> tuple[int, str]:
    """The form's error in bytes and its wording: 10 % of `value` at the vocabulary it was read at; elsewhere at
    least the distance to the packed tokens' MLP count (what TensorRT holds for `tokens` whatever the vocabulary)."""
    measured = round(value * TOKEN_LOGITS_RELATIVE_ERROR)
    if model.vocab_size == TOKEN_LOGITS_READ_VOCAB:
        return measured, "two v0.8 Triton logs within 1.1 %"
    floor = packed_tokens_mlp_bytes(model, layout, tokens)
    error = max(measured, abs(value - floor))
    return error, (f"two v0.8 Triton logs within 1.1 %, at vocab {TOKEN_LOGITS_READ_VOCAB:,}; at vocab "
                   f"{model.vocab_size:,} the error reaches the packed tokens' MLP, {gib(floor)}, §18")  # fmt: skip
