"""What vLLM's V2 model runner holds at its profile's peak, per pipeline stage, counted from its code
(docs/engines/vllm.md §12).

V2's `profile_run` (v1/worker/gpu/model_runner.py, read at v0.25.0, v0.27.1, v0.29.0 and v0.32.0) runs `_dummy_run`
over `max_num_batched_tokens` (min(tokens, max_num_seqs) dummy requests), and then, on the last pipeline stage only
("Only run sampler/pooler on last PP rank (non-last ranks return None)", :723-729 at v0.27.1, :653 at v0.25.0, :872 at
v0.29.0), `_dummy_sampler_run` on one row a request: `compute_logits` (seqs × vocab in the model's dtype) and one
`Sampler.__call__` of a dummy batch whose sampling states are as `SamplingStates.__init__` leaves them (sample/
states.py:17-35: temperature 0, top-k the vocabulary, top-p 1.0, min-p 0; no penalty, logit bias or bad words). So
`_requires_logits_processing` is False and the logits are not copied to float32 (sample/sampler.py:155-158, 200-216
at v0.27.1; v0.26.0 :162-167 works in place in the model dtype, cloning for raw logprobs only). Before v0.26.0
`apply_sampling_params` copies them to a new float32 tensor whatever the states (sample/sampler.py:132 at v0.22.0,
:143 at v0.23.0, :156 at v0.24.0, :157 at v0.25.0: `V2_LOGITS_FLOAT32_COPY`), held beside the model-dtype logits
through gumbel_sample. No top-k/top-p runs (states.get_top_k_top_p gives None, FlashInfer is skipped for greedy rows: :240-246),
and `gumbel_sample` (sample/gumbel.py:215-264) allocates an int64 and a float32 per 1,024-token block of each row.
The forward's output over the batch and the sampled rows (`hidden_states[logits_indices]`) are held across.

A non-last stage's peak is therefore its forward alone; the last stage's the larger of its forward and that sampler.
The forward peaks at a decoder layer's MLP: the gate-up output and the activation's output at once (the MLP
transient `_forward_floor` counts for V1), beside the residual and the normed input the layer holds across it
(`hidden_states, residual = self.post_attention_layernorm(...)`, then `hidden_states = self.mlp(hidden_states)`:
qwen3.py:244-245, llama.py:325-326 at v0.27.1; V0's count reads the same, `v0_profile.HELD_HIDDEN`). It is the same on
every stage: each stage runs every token through its layers.

From v0.33.0 `_dummy_sampler_run` samples the same logits a second time with `SamplingParams.for_sampler_warmup()`
(temperature 0.9, top-k 50, top-p 0.9, min-p, penalties, logit bias, bad words, 5 logprobs: model_runner.py:1008-1014
at v0.33.0, :1056-1062 at v0.34.0; `sampler_path.V2_WARMUP_PASS_ERAS`). Every row then needs processing, so
`apply_sampling_params` copies the logits to a new float32 tensor (sample/sampler.py:242 at v0.33.0, :239 at v0.34.0),
which the processors, temperature and min-p change in place and `Sampler.__call__` holds to its end. The top-k/top-p
step is the serving path's (`sampler_path.v2_warmup_path`): FlashInfer's `top_k_top_p_sampling_from_logits` with a
per-row top-k tensor masks a float32 copy and softmaxes it, both held while it samples (flashinfer sampling.py:1795-1796
at 0.7.2.post1, the FlashInfer v0.33.0 pins; `FLASHINFER_MASK_COPIES`), or the native path masks the copy in place
with the Triton kernel, whose cached buffer is `sampler_peak.triton_buffer_bytes`, and `gumbel_sample` adds its block
maxima. The logprobs (`compute_topk_scores`, sample/logprob.py) take a top-5 and a per-row kernel, no vocabulary-wide
tensor. So the warm-up pass holds, beside the model-dtype logits, 1 float32 copy of seqs × vocab and FlashInfer's 2
more, or the Triton buffer and gumbel's blocks: always above the greedy pass, so the last stage's sampler is its.
The greedy pass's output is left unbound (model_runner.py:1003 at v0.33.0, :1051 at v0.34.0), so its tensors are
freed before the second pass allocates: the sampler's peak is the larger pass beside the logits, not their sum.
(v0.34.0 lets a model state replace both passes, `dummy_sampler_run`, model_runner.py:1041: DiffusionGemma's only,
model_executor/models/diffusion_gemma.py:924, not read.)
"""

from __future__ import annotations

from typing import NamedTuple

from kvtop.domain.architectures.config_dtype import FLOAT32_BYTES
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.versions import Era, Eras
from kvtop.domain.engines.vllm.profile_run import batch_limits
from kvtop.domain.engines.vllm.runner_eras import runs_v2
from kvtop.domain.engines.vllm.sampler_path import SamplerPath, stated_path, v2_warmup_path
from kvtop.domain.engines.vllm.sampler_peak import moe_workspace_bytes, triton_buffer_bytes
from kvtop.domain.engines.vllm.skip_mm_profiling import encoder_profiled
from kvtop.domain.engines.vllm.v0_profile import held_forward_bytes
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.rounding import ceil_div

GUMBEL_BLOCK = 1024  # gumbel.py: BLOCK_SIZE, one program per 1,024 vocabulary entries of a row
GUMBEL_BLOCK_BYTES = 8 + 4  # its local_argmax (int64) and local_max (float32) per row and block
# float32 copies of seqs × vocab FlashInfer's top-k-first sampler holds beside its input: the masked logits
# (`top_k_mask_logits`: torch.empty_like) and their softmax (flashinfer sampling.py:1795-1796 at 0.7.2.post1; a
# per-row top-k tensor never takes its radix fast path, `_top_k_first_fast_path_applicable`: an int top-k only)
FLASHINFER_MASK_COPIES = 2
# V2 runs from v0.22.0 (runner_eras.runs_v2), past the fused MoE's chunked releases
# (moe_workspace.CHUNK_ERAS): one chunk
V2_MOE_CHUNK: int | None = None
# Where V2's dummy sampler is counted: its one pass of the default states (v0.22.0-v0.32.x), and from v0.33.0 the
# warmup-param pass beside it; V2 runs for listed classes (`runner_eras.runs_v2`).
V2_SAMPLER_COUNTED: Eras[bool] = Eras((
    Era("", False, "the V1 runner's profile (V2 from v0.22.0: runner_eras.runs_v2)"),
    Era("0.22.0", True, "v1/worker/gpu/model_runner.py _dummy_sampler_run: one pass of the dummy batch's default "
                        "states, greedy (v0.22.0:569-580, v0.23.0:609-620, v0.24.0:633-644, v0.25.0:629-640, "
                        "v0.27.1:683-695, v0.29.0:832-843)"),
    Era("0.33.0", True, "_dummy_sampler_run's greedy pass and its warmup-param pass (SamplingParams.for_sampler_warmup, "
                        "model_runner.py:1000-1014 at v0.33.0, :1049-1062 at v0.34.0), the second the larger"),
))  # fmt: skip
# Whether the dummy sampler holds a float32 copy of the logits beside the model-dtype ones (seqs × vocab × 4 B)
V2_LOGITS_FLOAT32_COPY: Eras[bool] = Eras((
    Era("", True, "v1/worker/gpu/sample/sampler.py Sampler.apply_sampling_params: 'Copy logits to a new FP32 "
                  "tensor' whatever the states (v0.22.0 :132, v0.22.1 the same, v0.23.0 :143, v0.24.0 :156, "
                  "v0.25.0 :157, v0.25.1 :157)"),
    Era("0.26.0", False, "v0.26.0 sample/sampler.py:162-167: in place in the model dtype, a clone for raw logprobs "
                         "only; v0.27.1 :155-159 copies only when `_requires_logits_processing` (the dummy's states "
                         "ask for none)"),
))  # fmt: skip


class WarmupPass(NamedTuple):
    """What V2's warm-up pass holds beside the model-dtype logits (bytes), the path it takes and why, and how far the
    other path's count lies from it where the launch does not state the path (0 where it does)."""

    bytes: int
    path: SamplerPath
    why: str
    gap: int


def _float32_copy_bytes(model: ModelSpec, seqs: int) -> int:
    """A float32 copy of the logits: seqs × vocab × 4 B."""
    return seqs * model.vocab_size * FLOAT32_BYTES


def _gumbel_bytes(model: ModelSpec, seqs: int) -> int:
    """gumbel_sample's block maxima: an int64 and a float32 per row and 1,024-entry block (`GUMBEL_BLOCK`)."""
    return seqs * ceil_div(model.vocab_size, GUMBEL_BLOCK) * GUMBEL_BLOCK_BYTES


def warmup_pass_bytes(model: ModelSpec, seqs: int, path: SamplerPath, gpu_name: str | None) -> int:
    """What the warm-up pass holds beside the model-dtype logits on `path`: the float32 copy of seqs × vocab, and
    FlashInfer's masked copy and softmax (FLASHINFER_MASK_COPIES; "either" counts them, the larger), or the native
    path's Triton buffer (`triton_buffer_bytes`) and gumbel's block maxima."""
    copy = _float32_copy_bytes(model, seqs)
    if path != "native":
        return copy + FLASHINFER_MASK_COPIES * copy
    return copy + triton_buffer_bytes(model, gpu_name, seqs) + _gumbel_bytes(model, seqs)


def warmup_pass(inputs: CalibrationInputs, seqs: int) -> WarmupPass | None:
    """The launch's warm-up pass (`sampler_path.v2_warmup_path`: v0.33.0 on); None before it or where the model is
    not known. The gap keeps the native path where FlashInfer's is the release's and the GPU's (a start whose
    FlashInfer JIT build fails falls back) or not known, and is 0 where the launch states its
    VLLM_USE_FLASHINFER_SAMPLER or the path is native."""
    model = inputs.model
    found = v2_warmup_path(inputs.version, inputs.gpu_name, inputs.settings.flags, inputs.settings.image)
    if model is None or found is None:
        return None
    path, why = found
    held = warmup_pass_bytes(model, seqs, path, inputs.gpu_name)
    stated = stated_path(inputs.settings.flags) is not None
    gap = 0 if path == "native" or stated else held - warmup_pass_bytes(model, seqs, "native", inputs.gpu_name)
    return WarmupPass(held, path, why, gap)


class StagePeaks(NamedTuple):
    """V2's profiled peak on a stage before the last (the forward alone) and on the last (forward, then sampler)."""

    before_last: int
    last: int


def v2_counted(inputs: CalibrationInputs) -> bool:
    """Whether the launch runs V2's profile as counted here: the V2 runner in a release whose dummy sampler runs one
    default pass, a text model (a multimodal model's encoder profile runs first on the first stage, not counted; one
    served text-only runs none: text_only.py; nor one launched `--skip-mm-profiling`: skip_mm_profiling.py)."""
    model = inputs.model
    if model is None or not runs_v2(inputs.version, model, inputs.settings):
        return False
    if encoder_profiled(model, inputs.settings, inputs.version, inputs.gpu_name):
        return False
    return V2_SAMPLER_COUNTED.at(inputs.version)


def v2_sampler_bytes(model: ModelSpec, tokens: int, seqs: int, layout: ParallelLayout | None = None,
                     float32_copy: bool = False, warmup: int = 0) -> int:  # fmt: skip
    """The last stage's dummy sampler as counted above: the model-dtype logits of `seqs` rows, their float32 copy where
    the release makes one (`float32_copy`, V2_LOGITS_FLOAT32_COPY) and gumbel_sample's block maxima, or the warm-up
    pass's bytes beside the logits where larger (`warmup`, `warmup_pass_bytes`; v0.33.0 on) (at TP > 1 the
    logits' all-gather, if larger), the forward's output and sampled rows held across ((tokens + seqs) × hidden × dtype), and an unquantized
    MoE's fused-expert workspaces, which the process-wide WorkspaceManager keeps after the forward
    (`sampler_peak.moe_workspace_bytes`)."""
    layout = layout or ParallelLayout()
    logits = seqs * model.vocab_size * model.dtype_bytes
    gumbel = _gumbel_bytes(model, seqs)
    copy = _float32_copy_bytes(model, seqs) if float32_copy else 0
    # at TP > 1 compute_logits all-gathers the rank's vocab slice (LogitsProcessor._gather_logits, use_all_gather on
    # CUDA): CudaCommunicator.all_gather fills an output of the whole vocabulary and returns its movedim'd reshape, a
    # copy (device_communicators/cuda_communicator.py:355-389 at v0.27.1), so the slice, the output and the copy are
    # held at once; the gathered copy alone stays through the sampler
    gathered = 2 * logits + logits // layout.tp if layout.tp > 1 else 0
    hidden = (tokens + seqs) * model.hidden_size * model.dtype_bytes
    passes = max(logits + copy + gumbel, logits + warmup, gathered)
    return passes + hidden + moe_workspace_bytes(model, layout, tokens, V2_MOE_CHUNK)


def v2_stage_peaks(model: ModelSpec, layout: ParallelLayout, tokens: int, seqs: int,
                   float32_copy: bool = False, warmup: int = 0) -> StagePeaks:  # fmt: skip
    """(a stage before the last, the last stage): the forward (its MLP transient beside the residual and the normed
    input), and the larger of it and the sampler (`float32_copy`: the release's float32 copy of the logits; `warmup`:
    its warm-up pass's bytes beside them)."""
    forward = held_forward_bytes(model, layout, tokens)
    sampler = v2_sampler_bytes(model, tokens, seqs, layout, float32_copy, warmup)
    return StagePeaks(before_last=forward, last=max(forward, sampler))


def launch_stage_peaks(inputs: CalibrationInputs, model: ModelSpec) -> tuple[StagePeaks, WarmupPass | None]:
    """(`v2_stage_peaks` at the launch's batch limits, with its release's float32 copy and warm-up pass; that pass,
    `warmup_pass`): the one count the activation term and the graph figure's forward side read."""
    tokens, seqs, _ = batch_limits(inputs)
    warmup = warmup_pass(inputs, seqs)
    peaks = v2_stage_peaks(model, inputs.layout, tokens, seqs, V2_LOGITS_FLOAT32_COPY.at(inputs.version),
                           warmup.bytes if warmup else 0)  # fmt: skip
    return peaks, warmup
