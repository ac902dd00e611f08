"""The V2 model runner's persistent sampler state, which vLLM's budget charges from v0.27.0 (docs/engines/vllm.md §2).

What it is. The V2 runner (v1/worker/gpu/model_runner.py `load_model`, :351-378 at v0.27.1, :397 at v0.28.0, :436 at
v0.29.0, :460-474 at v0.30.0) builds its `Sampler` on the last pipeline stage only (`if self.is_last_pp_rank and not
self.is_pooling_model`), right after the weights load and outside the "Model loading took" figure. The sampler keeps
three tensors of vocabulary width on the GPU for every request slot (read at v0.27.0, v0.27.1, v0.28.0, v0.29.0 and
v0.30.0):

    output_bin_counts   max_num_seqs × vocab × 4 B            (int32; v1/worker/gpu/sample/penalties.py:40)
    prompt_bin_mask     max_num_seqs × ceil(vocab / 32) × 4 B (int32; penalties.py:32)
    grammar_bitmask     max_num_seqs × ceil(vocab / 32) × 4 B (int32; structured_outputs.py:17 at v0.27.1, :51 at
                                                               v0.28.0: max_num_logits = max_num_seqs × the decode
                                                               query length, 1 without speculative decoding)

(the code's own note on the first: "This tensor is rarely used but can be very large, taking up GBs of GPU memory").
Qwen3-32B at 1,024 seqs: 1,024 × 151,936 × 4 = 622,329,856 B + 2 × 1,024 × 4,748 × 4 = 38,895,616 B = 0.616 GiB.

Why from v0.27.0. Before v0.27.0 `memory_profiling` charges the weights, the torch peak above the profile's start
and non-torch growth (utils/mem_utils.py:311 at v0.26.0): a torch tensor made after the load and before the profile is
in none of them, so the V2 runner's state (there from v0.24.0: penalties.py:40) is not charged. From v0.27.0 the
budget takes `total_consumed`, the free memory the process took since the init snapshot (mem_utils.py:317-326 at
v0.27.0 and v0.27.1, :312-321 at v0.30.0), which holds it. The smaller per-slot tensors (allowed and stop token ids,
logit bias; a few MiB) are not counted: this is a floor.

Where kvtop takes it. In the non-torch term (what Version B's `total_consumed` holds beside the weights), where V2
runs (`runner_eras.runs_v2`) from v0.27.0; a pipeline's last stage holds it and kvtop charges every stage the last stage's
figure (v2_profile.py: one figure, the largest).
"""

from __future__ import annotations

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.versions import Era, Eras
from kvtop.domain.engines.vllm.profile_run import batch_limits
from kvtop.domain.engines.vllm.runner_eras import runs_v2
from kvtop.domain.rounding import ceil_div
from kvtop.domain.wording import gib

INT32_BYTES = 4
BITMASK_WORD_BITS = 32  # one int32 word holds 32 tokens of a bitmask (`cdiv(vocab_size, 32)`)

# whether the budget charges torch tensors made between the load and the profile (Version B's `total_consumed`)
STATE_CHARGED: Eras[bool] = Eras((
    Era("", False, "utils/mem_utils.py:311 at v0.26.0: weights + torch peak increase + non-torch increase"),
    Era("0.27.0", True, "utils/mem_utils.py:317-326 at v0.27.0: non_kv = total_consumed + transient peak headroom"),
))  # fmt: skip


def sampler_state_bytes(seqs: int, vocab: int) -> int:
    """The V2 sampler's vocabulary-wide GPU state for `seqs` request slots: the output token counts (int32 a token)
    and two bitmasks (the prompt's tokens, the grammar's), one bit a token in int32 words."""
    words = ceil_div(vocab, BITMASK_WORD_BITS)
    return seqs * vocab * INT32_BYTES + 2 * seqs * words * INT32_BYTES


def v2_sampler_state(inputs: CalibrationInputs) -> tuple[int, str] | None:
    """(bytes, why) of the V2 sampler's state the release's budget charges; None where V2 does not run, the release
    does not charge it (before v0.27.0) or the model is not known."""
    model = inputs.model
    if model is None or not model.vocab_size or not runs_v2(inputs.version, model, inputs.settings):
        return None
    if not STATE_CHARGED.at(inputs.version):
        return None
    seqs = batch_limits(inputs)[1]
    size = sampler_state_bytes(seqs, model.vocab_size)
    return size, (f"{gib(size)} of the V2 sampler's state on the last stage ({seqs:,} seqs × vocab "
                  f"{model.vocab_size:,}: token counts and two bitmasks, v1/worker/gpu/sample/penalties.py:32-40), "
                  "which the budget's total_consumed holds from v0.27.0 (utils/mem_utils.py:317-326)")
