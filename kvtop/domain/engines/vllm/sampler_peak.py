"""What vLLM's profiled sampler holds at its peak, counted from its code where the release's path is known
(docs/engines/vllm.md §12; below 8 rows and the kernel buffer's rows, §24).

From v0.17.0 the native top-k/top-p path masks the float32 logits in place with the Triton kernel of vllm#33538
(`apply_top_k_top_p_triton`, topk_topp_triton.py) instead of sorting them (values and int64 indices): llm-d-planner's
sweep shows the profiled peak falling by 60 % between v0.16.0 and v0.17.0, which dates it (docs/calibration.md; the
PR's own first release is not read). While
`_dummy_sampler_run` (gpu_model_runner.py) samples `max_num_seqs` rows, what it holds is then, read at v0.33.0:

- the logits `compute_logits` returns, in the model's dtype (kept by `_dummy_sampler_run` for the call's length);
- the sampler's float32 copy (`logits.to(torch.float32)`, sampler.py; none where the model is float32 already);
- the probabilities (`logits.softmax(dim=-1, dtype=torch.float32)`, TopKTopPSampler.forward_native);
- the exponential noise `random_sample` draws beside them (`empty_exponential_noise_like`: float32);
- the Triton kernel's per-program buffer (`apply_top_k_top_p_triton`: `logits.new_empty((size, vocab))`, float32,
  min(SMs, seqs) programs, its rows rounded up to a power of two and capped at the SMs (`size =
  min(next_power_of_2(NUM_PROGRAMS), num_sm)`, topk_topp_triton.py:999 at v0.17.0, :1686 at v0.30.0); cached in
  `_TRITON_BUFFER_CACHE`, so held from the call on): SMs × vocab × 4 B at the dummy run's seqs (0.075 GiB for a 152K
  vocabulary on an H100's 132 SMs; a GPU whose SMs kvtop does not know (`gpus.GPU_SMS`) has it left out);
- below 8 rows from v0.17.0 to v0.29.x (`HAS_TRITON and logits.shape[0] >= 8`, topk_topp_sampler.py:251 at v0.17.0,
  :356 at v0.25.1, :360 at v0.29.0) the torch sort instead of the kernel (`apply_top_k_top_p_pytorch`, the same at
  v0.17.0, v0.25.1 and v0.29.0): the sorted float32 values and their int64 indices, the top-k boolean mask, the sorted
  probabilities (`softmax`, float32) and the top-p boolean mask, 4.5 copies held together, freed before the
  probabilities and noise (`TORCH_TOPK_TOPP_COPIES`; torch's own sort scratch not counted). From v0.30.0 the kernel takes every
  row count (`if HAS_TRITON:`, topk_topp_sampler.py:374 at v0.30.0; the dummy's top-k is active, so not its
  split top-p pipeline, topk_topp_triton.py:1673);
- and, held by `profile_run` across the call, the forward's output over `max_num_batched_tokens` (`hidden_states`)
  and the random rows `_dummy_sampler_run` feeds the LM head (`torch.rand_like`: max_num_seqs × hidden);
- in an unquantized MoE model, the fused experts' workspaces, which the process-wide `WorkspaceManager`
  (v1/worker/workspace.py, read at v0.13.0 and v0.33.0) keeps at its high-water mark after the forward:
  TritonExperts.workspace_shapes' (M, topk, max(I, K)) and (M, topk, max(2I, K)) in the model's dtype, the output
  sharing the first (I: the expert's intermediate on the rank, whole under EP, K: hidden; M: the tokens, in chunks of
  VLLM_FUSED_MOE_CHUNK_SIZE = 16,384 from v0.12.0 to v0.17.x, one chunk from v0.18.0), each rounded to 256 B: the bytes are
  `moe_workspace.experts_workspace_bytes`'s, the one count of them. Qwen3-30B-A3B at 8,192 tokens: 0.50 GiB, and its v0.19.0 start
  printed 2.68 GiB against 2.14 counted without them; Mixtral-8x7B at TP 2: 0.66 GiB, 1.21 printed against
  0.51.

In a 16-bit model that is (3.5 × seqs + SMs) × vocab × 4 B with the hidden states beside it: the v0.19.0 starts of
llm-d-planner grow by 3.5 of those copies between Llama-3.1-8B's vocabulary (1.89 GiB) and Qwen2.5-7B's (2.21) at 1,024
seqs, as the count says, and Qwen2.5-72B printed the same 2.29 GiB at TP 2 and TP 4 (the sampler's rows are whole-vocab
on every rank). On SM 8.0 at 0.19.x the count holds at `vllm serve`'s A100 defaults (2,048 tokens, 256 seqs) for a
152K vocabulary too: Qwen3-8B's 0.19.1 A100-40GB start leaves under one more copy beside it
(tests/engines/vllm/test_sampler_peak_sm80.py), so the ≈ 0.6 GiB more that the 0.19.x A100-40GB Llama-3.1-8B and A10G
Qwen2.5-14B-AWQ starts leave is not the sampler's; a cold torch.compile is the size of it (compile_cache.py, not
modelled): hpml-team13's A100-40GB Llama-3.1-8B launch at 0.19.0 kept 19.42 GiB of KV cold against 19.92 warm.
Not counted: a multimodal model's encoder cache (the encoder's outputs, kept through the forward and the sampler), and a
quantized MoE's workspaces (its experts' kernels are chosen by the checkpoint and the GPU: gpt-oss's MXFP4 at TP 2
printed 2.87 GiB against 2.73 counted), save MXFP4's Marlin experts from v0.17.0, which keep the manager's buffers as
the unquantized ones do (marlin_kept.py).
"""

from __future__ import annotations

from collections.abc import Mapping

from kvtop.domain.architectures.config_dtype import FLOAT32_BYTES
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.engines.vllm.marlin_kept import marlin_kept_bytes
from kvtop.domain.engines.vllm.moe_workspace import CHUNK_ERAS, experts_workspace_bytes, unquantized_experts
from kvtop.domain.engines.vllm.sampler_path import profiled_sampler_path
from kvtop.domain.gpus import sm_count
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec

# Where the sampler's native path is counted: from v0.17.0 (vllm#33538's Triton top-k/top-p); before it the sort-based
# path's copies (about 9.7 in the logs) are left to the fits. Read in the v0.16.0 and v0.17.0 wheels (session 68).
COUNTED_ERAS: Eras[bool] = Eras((
    Era("", False, "the sort-based apply_top_k_top_p (values, int64 indices, softmax, scatter; v1/sample/ops/"
                   "topk_topp_sampler.py:243 at v0.16.0, no topk_topp_triton.py): not counted"),
    Era("0.17.0", True, "vllm#33538: apply_top_k_top_p takes apply_top_k_top_p_triton from 8 rows (v1/sample/ops/"
                        "topk_topp_sampler.py:17, :245-255 at v0.17.0; topk_topp_triton.py:947, its buffer :1000), "
                        "masking the float32 logits in place"),
))  # fmt: skip

# The fewest rows the Triton top-k/top-p kernel takes; fewer are sorted by torch (`apply_top_k_top_p_pytorch`).
TRITON_FROM_ROWS_ERAS: Eras[int] = Eras((
    Era("", 8, "`if HAS_TRITON and logits.shape[0] >= 8` (v1/sample/ops/topk_topp_sampler.py:251 at v0.17.0, :356 at "
               "v0.25.1, :360 at v0.29.0)"),
    Era("0.30.0", 1, "`if HAS_TRITON: return apply_top_k_top_p_triton(...)` at every row count (v1/sample/ops/"
                     "topk_topp_sampler.py:374 at v0.30.0)"),
))  # fmt: skip

# What `apply_top_k_top_p_pytorch` holds at once, in copies of seqs × vocab × 4 B: the sorted float32 values (1), their
# int64 indices (2), the top-k boolean mask (0.25), the sorted probabilities (1) and the top-p boolean mask (0.25)
# (v1/sample/ops/topk_topp_sampler.py:279-299 at v0.17.0).
TORCH_TOPK_TOPP_COPIES = 1.0 + 2.0 + 0.25 + 1.0 + 0.25


def logits_and_cast_copies(model: ModelSpec) -> float:
    """Copies of seqs × vocab × 4 B every V1 top-k/top-p path holds under its own: the model-dtype logits
    `_dummy_sampler_run` keeps and the sampler's float32 copy (`logits.to(torch.float32)`, sampler.py; none where the
    model is float32 already)."""
    cast = 0.0 if model.dtype_bytes == FLOAT32_BYTES else 1.0
    return model.dtype_bytes / FLOAT32_BYTES + cast


def logits_copies(model: ModelSpec) -> float:
    """Copies of seqs × vocab × 4 B the native sampler holds at once: the logits and their float32 copy
    (`logits_and_cast_copies`), the probabilities and the exponential noise."""
    return logits_and_cast_copies(model) + 2.0


def moe_workspace_bytes(model: ModelSpec, layout: ParallelLayout, tokens: int, chunk: int | None) -> int:
    """The fused experts' workspaces the WorkspaceManager keeps after the forward (`moe_workspace.py`, `chunk` its
    CHUNK_ERAS); 0 for a dense model or a quantized MoE, whose experts' workspace is not counted here."""
    return experts_workspace_bytes(model, layout, tokens, chunk) if unquantized_experts(model) else 0


def triton_buffer_bytes(model: ModelSpec, gpu_name: str | None, seqs: int) -> int:
    """The top-k/top-p kernel's cached buffer: one float32 vocab row per program, min(SMs, seqs) programs rounded up to
    a power of two and capped at the SMs; 0 on a GPU whose SMs kvtop does not know."""
    sms = sm_count(gpu_name)
    if sms is None:
        return 0
    programs = min(sms, seqs)
    return min(1 << max(programs - 1, 0).bit_length(), sms) * model.vocab_size * FLOAT32_BYTES


def takes_kernel(version: ResolvedVersion, seqs: int) -> bool:
    """Whether `seqs` rows take the Triton kernel at `version` (`TRITON_FROM_ROWS_ERAS`), not the torch sort."""
    return seqs >= TRITON_FROM_ROWS_ERAS.at(version)


def sampler_copies(model: ModelSpec, version: ResolvedVersion, seqs: int) -> float:
    """Copies of seqs × vocab × 4 B the native sampler holds at its peak: the Triton path's (`logits_copies`), or below
    the era's rows the torch sort's, whose copies are freed before the probabilities and the noise are drawn (the
    larger of the two moments)."""
    if takes_kernel(version, seqs):
        return logits_copies(model)
    return max(logits_and_cast_copies(model) + TORCH_TOPK_TOPP_COPIES, logits_copies(model))


def sampler_copies_bytes(model: ModelSpec, version: ResolvedVersion, gpu_name: str | None, seqs: int) -> int:
    """The native sampler's logits copies at their peak (`sampler_copies`) and, on the kernel's path, its buffer."""
    copies = round(sampler_copies(model, version, seqs) * seqs * model.vocab_size * FLOAT32_BYTES)
    return copies + (triton_buffer_bytes(model, gpu_name, seqs) if takes_kernel(version, seqs) else 0)


def counted_sampler_bytes(
    model: ModelSpec,
    layout: ParallelLayout,
    version: ResolvedVersion,
    gpu_name: str | None,
    tokens: int,
    seqs: int,
    flags: Mapping[str, object] | None = None,
    image: str | None = None,
    settings: LaunchSettings | None = None,
) -> int | None:
    """What the profile holds while the sampler runs, as the code counts it (bytes); None where the release, the
    GPU or the launch (`flags`, the container `image`; `settings`: its runner, `runner_eras.runs_v2`) leaves the profile's path to the install or to FlashInfer
    (`profiled_sampler_path`: from v0.21.0 the profile warms the native path whatever the serving one), or before
    v0.17.0."""
    if not COUNTED_ERAS.at(version) or profiled_sampler_path(version, gpu_name, model, flags, image, settings)[0] != "native":
        return None
    hidden = (tokens + seqs) * model.hidden_size * model.dtype_bytes
    chunk = CHUNK_ERAS.at(version)
    workspace = moe_workspace_bytes(model, layout, tokens, chunk)
    # an MXFP4 MoE's Marlin experts keep the same manager's buffers from v0.17.0 (marlin_kept.py)
    marlin = marlin_kept_bytes(model, layout, version, gpu_name, settings, tokens if chunk is None else min(tokens, chunk))
    return sampler_copies_bytes(model, version, gpu_name, seqs) + hidden + workspace + marlin
