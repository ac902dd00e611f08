"""How many copies of the logits (seqs × vocab × 4 B) FlashInfer's top-k/top-p sampler holds in the V1 runner's
dummy sampler run, by release: what a peak fitted on the native path's copies keeps where the profile takes
FlashInfer's path (`calibration_activation._sampler_path_error`, `sampler_path.py`).

`_dummy_sampler_run` hands the model-dtype logits `compute_logits` returned (kept by the runner) to the sampler, which
casts them to float32 (`logits.to(torch.float32)`: v1/sample/sampler.py:39 at v0.8.5.post1 and v0.9.0, :87 at v0.10.2,
:86 at v0.11.0, :90 at v0.15.1, :97 at v0.30.0; none for a float32 model: `sampler_peak.logits_and_cast_copies`) and samples with top-k and top-p set. What
FlashInfer's path adds beside those two is the era's (`FLASHINFER_EXTRA_ERAS`). V0's FlashInfer sampler
(`VLLM_USE_FLASHINFER_SAMPLER=1` before v0.8.0, or a V0 start after) was not read: `None`. Read through v0.30.0;
v0.34.0's wheel has no V1 runner, and its V2 runner's `_dummy_sampler_run` samples a second time with
`SamplingParams.for_sampler_warmup()` (top-k 50, top-p 0.9: v1/worker/gpu/model_runner.py:1039-1062,
v1/worker/gpu/sample/sampler.py:304-340), which takes FlashInfer's path: counted apart, in `v2_profile.py`.
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.engines.vllm.sampler_peak import logits_and_cast_copies
from kvtop.domain.model import ModelSpec

# float32 copies of the logits FlashInfer's path makes beside the model-dtype logits and their float32 cast
FLASHINFER_EXTRA_ERAS: Eras[float | None] = Eras((
    Era("", None, "V0's FlashInfer sampler: not read"),
    Era("0.8.0", 1.0, "v1/sample/ops/topk_topp_sampler.py:95-109 at v0.8.5.post1 (taken only with FlashInfer < 0.2.3, "
                      ":34-48): forward_cuda softmaxes the float32 logits into probs (1 copy) and "
                      "`top_k_top_p_sampling_from_probs` samples them with a 32 × seqs uniform buffer (:262-313); "
                      "a failed rejection round's renorm (top_k_renorm_prob, :45-51) is not counted"),
    Era("0.9.0", 2.0, "flashinfer_sample → flashinfer.sampling.top_k_top_p_sampling_from_logits (topk_topp_sampler.py "
                      ":256-292 at v0.9.0, :218-254 at v0.10.2, :256-292 at v0.11.0, :335-381 at v0.15.1, :489-526 "
                      "at v0.30.0): with the default filter_apply_order 'top_k_first' and a per-request top-k tensor, "
                      "FlashInfer masks a float32 copy (`top_k_mask_logits`: torch.empty_like) and softmaxes it "
                      "(torch.softmax), both held while top_p_sampling_from_probs samples: 2 copies (flashinfer "
                      "sampling.py:810-811 at 0.2.3, :980-981 at 0.3.0/0.3.1, :1128-1129 at 0.6.1, :1547-1548 at "
                      "0.6.18.post1; 0.6.18's radix fast path takes an int top-k only)"),
))  # fmt: skip


def flashinfer_copies(version: ResolvedVersion, model: ModelSpec, v0: bool) -> float | None:
    """The copies of seqs × vocab × 4 B FlashInfer's path holds at once in the V1 runner's profile (3.5 in a 16-bit
    model from v0.9.0, 3 in a float32 one; 2.5 at v0.8.x), or None where it was not read (V0's sampler)."""
    extra = None if v0 else FLASHINFER_EXTRA_ERAS.at(version)
    return None if extra is None else logits_and_cast_copies(model) + extra
