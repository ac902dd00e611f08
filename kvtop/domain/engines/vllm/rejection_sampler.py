"""What vLLM's profile adds for the rejection sampler when speculative decoding is on (docs/engines/vllm.md §12).

Read at v0.17.1 (v1/worker/gpu_model_runner.py `_dummy_sampler_run`, v1/sample/rejection_sampler.py, sampler.py):
with a `speculative_config` (any method, n-gram included), the dummy sampler run goes on after the plain sampler and
calls the rejection sampler with one draft token per request: `torch.randn(num_tokens + num_reqs, vocab)` in the
logits' (model's) dtype. `RejectionSampler.forward` then holds, at once, in units of seqs × vocab × 4 B:

- the random logits, 2 rows a request in the model's dtype (2 d, d = dtype bytes ÷ 4);
- `bonus_logits = logits[bonus_logits_indices]` (d), kept for the call;
- the bonus sampler's output: `logprobs_mode_override="raw_logits"` with `max_num_logprobs=-1` returns the float32
  logits (`logits.to(torch.float32)`, a clone where the model is float32): 1;
- `raw_target_logits` in float32 (1) and its clone `target_logits` (1: the logprobs mode is not a processed one);
- in `rejection_sample`: `target_probs` (softmax, float32: 1), and `sample_recovered_tokens`' exponential `q` and
  its `reciprocal()` (float32, one row a request: 2).

That is 3 d + 6 copies; the plain sampler before it held d + cast + 2 (`sampler_peak.logits_copies`, its float32
copy `cast` absent in a float32 model), so the profile's peak grows by 2 d + 4 − cast: 4 copies in a 16-bit model.
The bonus sampler's own peak (3 d + 3 + cast) stays below it, and the top-k/top-p step masks in place with the
Triton kernel whose buffer is already held (`apply_top_k_top_p_triton`). The count binds only where the release's
sampler path is counted (`sampler_peak.counted_sampler_bytes`: the native path from v0.17.0). Qwen2.5-3B-Instruct on
a T4 at v0.17.1 (256 seqs, 151,936 vocabulary): 0.58 GiB, against the ≈ 0.66 GiB its n-gram (k 5) and draft-model
(k 3) starts left unexplained (search-index id 58099879597); the dummy run's one draft token a request makes it
independent of k, as those two starts are.

Read again at v0.18.0, v0.20.0, v0.26.0 and v0.33.0 (session 58): the V1 runner's `_dummy_sampler_run` makes the same
call (one draft token a request, `torch.randn(num_tokens + num_reqs, vocab)` in the logits' dtype, the dummy
metadata neither all-greedy nor all-random), and `RejectionSampler.forward`, `rejection_sample` and
`sample_recovered_tokens` hold the same tensors at vLLM's defaults; v0.33.0 computes `target_probs` before the greedy
kernel rather than after it (held across the same calls) and runs a second, all-greedy call (it returns before
`target_probs`: less). Not counted, as no default sets them: `draft_sample_method="probabilistic"` (its dummy
`draft_probs`, one float32 row a request, by v0.26.0; not at v0.20.0), `use_fp64_gumbel` (float64 `q` and its
reciprocal, v0.26.0 on) and the FLy rejection method (v0.33.0). The V2 model runner (v1/worker/gpu/model_runner.py,
read at v0.26.0 and v0.33.0) runs no rejection sampler in its `_dummy_sampler_run`: its count is `v2_profile.py`'s.
"""

from __future__ import annotations

from kvtop.domain.architectures.config_dtype import FLOAT32_BYTES
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.model import ModelSpec

COUNTED_ERAS: Eras[bool] = Eras((
    Era("", False, "not read before v0.17.0 (the sampler's path is left to the fits there)"),
    Era("0.17.0", True, "v1/worker/gpu_model_runner.py `_dummy_sampler_run` + v1/sample/rejection_sampler.py, read "
        "at v0.17.1, v0.18.0, v0.20.0, v0.26.0 and v0.33.0: the same tensors at the defaults"),
))  # fmt: skip


def rejection_extra_copies(model: ModelSpec) -> float:
    """Copies of seqs × vocab × 4 B the rejection sampler's dummy run holds beyond the plain sampler's: 2 d + 4 −
    cast (d the model dtype's bytes ÷ 4; cast 0 in a float32 model, which has no float32 copy to make)."""
    model_dtype = model.dtype_bytes / FLOAT32_BYTES
    cast = 0.0 if model.dtype_bytes == FLOAT32_BYTES else 1.0
    return 2 * model_dtype + 4 - cast


def rejection_extra_bytes(model: ModelSpec, version: ResolvedVersion, seqs: int, speculative: bool) -> int:
    """What the profile's peak grows by when a speculative method is set (bytes): 0 without one or outside the read
    releases."""
    if not speculative or not COUNTED_ERAS.at(version):
        return 0
    return round(rejection_extra_copies(model) * seqs * model.vocab_size * FLOAT32_BYTES)
