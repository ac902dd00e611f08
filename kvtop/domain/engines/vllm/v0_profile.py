"""What V0's profiling run holds at its peak: the larger of its forward and its sampler (docs/engines/vllm.md §2).

V0's `profile_run` (vllm/worker/model_runner.py; through `_dummy_run` in 0.7.x) calls `execute_model` once: the forward
over `max_num_batched_tokens`, then `compute_logits` on the `max_num_seqs` sampled rows, then the sampler. The
forward's intermediates are locals of the model's forward, freed before the sampler; only the hidden states live
through it (read in the wheels of 0.6.4, 0.7.1 and 0.7.3, session 42h2). So the torch peak is the larger of:

- the forward at its MLP: the gate-up output, the activation's output and the down projection's output
  (`mlp_transient_gib`), beside the decoder layer's residual and the normed input the MLP was given (tokens × hidden
  × 2 B each): tokens × (3 × intermediate ÷ TP + 3 × hidden) × 2 B for a dense model. Llama-3.1-8B on an RTX 3090 at
  v0.6.4 (vllm#10517) printed 2.07 GiB at 20,000 tokens and 2.99 at 29,000; the count is 2.06 and 2.99;
- the sampler: the sort-based `_apply_top_k_top_p` (layers/sampler.py; `_dummy_run` sets top-k and top-p) peaks in
  its `logits.sort` (`sort_sampler_copies`), beside the forward's hidden states. The logs print about 9.5 copies of seqs ×
  vocab × 4 B (the fit's part: `vllm.activation.v0`), the count's: vllm#10511's H100 starts 1.26 GiB against 1.22
  counted, the V100 start at 2,048 tokens 1.40 against 1.39 (the scatter's 8 copies gave 1.04 and 1.17). The count
  decides only which side a launch's peak is on. Earlier releases sample otherwise (`SAMPLER_ERAS`): v0.2.0–v0.2.5
  un-sort by an int64 argsort (`argsort_sampler_copies`), v0.2.6–v0.4.0 sort the model-dtype logits with no float32
  copy (`dtype_sort_sampler_copies`).

A fused MoE's forward peaks at its first expert GEMM (`_fused_moe_bytes`: fused_moe.py `fused_experts_impl`, read in
the wheels of 0.6.4, 0.7.1 and 0.7.3). Its count is not the whole peak: DeepSeek-R1 at TP 8 on H200 (v0.7.3, 32,000
tokens, 1,024 seqs; search-index id 20903468563) printed 6.37 GiB where the count gives 5.30 (4.68 before the shared
experts' output and the FP8 input were read) and the sampler's 9.5 copies 5.11; the 1.07 GiB left is not read (the MLA
prefill's tensors are freed before the MLP and stay below it: about 3.1 GiB by the same reading, o_proj's out-of-place
all-reduce included), so the peak stays assumed (± 2 GiB, as an unfitted peak is) and its log fits neither side.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from kvtop.domain.calibration.features import logits_gib, mlp_transient_gib
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.terms import TermEstimate
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.engines.vllm.dp_workspace import TOPK_BYTES
from kvtop.domain.engines.vllm.moe_workspace import CHUNK_ERAS
from kvtop.domain.engines.vllm.profile_run import batch_limits, engine_era
from kvtop.domain.engines.vllm.v0_mixtral_experts import full_width_experts_bytes
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import MlpKind, ModelSpec
from kvtop.domain.rounding import ceil_div
from kvtop.domain.wording import GIB


class SamplerForm(NamedTuple):
    """How a release's sampler sorts the profile's logits, and how many rows × vocab bool masks its un-sort holds."""

    sort: Literal["argsort", "model-dtype sort", "float32 sort"]
    masks: int


SCATTER_COPIES = 8  # `_apply_top_k_top_p` at its scatter: the model-dtype logits (½), the float32 copy, the sorted values,
# their int64 indices (2), the sorted probabilities, their cumulative sum, two bool masks (¼ each), the scattered result
# V0's `logits.sort` on 128 rows or more: the model-dtype logits, the float32 copy, torch's sorted values and int64
# indices (3), its int64 reverse indices (2) and cub's alternate key and value buffers (3). V1's sort-based
# `apply_top_k_top_p` before v0.17.0 sorts the float32 logits as V0's did (v1/sample/ops/topk_topp_sampler.py:126-166 at
# v0.10.2), so the V1 count reads it too, as the most its sampler holds (`sort_sampler_copies` in
# calibration_activation.forward_bound). Not the torch fallback of v0.17.0 – v0.29.x below 8 rows
# (sampler_peak.TORCH_TOPK_TOPP_COPIES, 4.5: its held tensors, torch's sort scratch not counted)
V0_SEGMENTED_SORT_COPIES = 9.5
SEGMENTED_SORT_ROWS = 128  # SortStable.cu: from 128 rows torch sorts by cub's segmented radix sort
HELD_HIDDEN = 2  # the decoder layer's residual and normed input, held across its MLP
INT64_COPIES = 2.0  # an int64 rows × vocab tensor, in copies of rows × vocab × 4 B
BOOL_COPIES = 0.25  # a bool rows × vocab mask
# How each V0 release's top-p/top-k sorts and un-sorts the logits the profile samples (`_v0_copies`), read in the wheels
# (vllm/model_executor/layers/sampler.py; every release profiles max_num_seqs rows with SamplingParams(top_p=0.99,
# top_k=vocab - 1): worker.py before v0.2.3, model_runner.py profile_run from it, v0.2.6 :364, v0.3.0 :552).
SAMPLER_ERAS: Eras[SamplerForm] = Eras((
    Era("", SamplerForm("argsort", 2), "wheels of v0.2.0, 0.2.1, 0.2.1.post1, 0.2.2, 0.2.3, 0.2.4, 0.2.5: "
        "_apply_top_p_top_k's torch.gather(logits_sort, index=torch.argsort(logits_idx))"),
    Era("0.2.6", SamplerForm("model-dtype sort", 3), "wheels of v0.2.6, 0.2.7: _apply_top_p_top_k sorts the "
        "model-dtype logits, masks top-p, top-k and their union, logits_idx_inv = torch.empty_like(logits_idx).scatter_"),
    Era("0.3.0", SamplerForm("model-dtype sort", 2), "wheels of v0.3.0, 0.3.1, 0.3.2, 0.3.3, 0.4.0: _apply_top_k_top_p "
        "sorts the model-dtype logits ascending, masks top-k then top-p in place, the same scatter_ un-sort"),
    Era("0.4.1", SamplerForm("float32 sort", 2), "not read from v0.4.1 to v0.6.3: taken as the float32 sort read in "
        "the wheels of 0.6.4, 0.7.1 and 0.7.3 (`sort_sampler_copies`)"),
))  # fmt: skip
MOE_FORWARD_ERROR = 2 * GIB  # a V0 fused MoE's forward, counted in part only: as wide as an unfitted peak's assumption
SCALE_BYTES = 4  # per_token_group_quant_fp8's float32 scale per token and group of block_k inputs


def held_forward_bytes(model: ModelSpec, layout: ParallelLayout, tokens: int) -> int:
    """A dense forward's peak as V1 and V2 count it: the MLP transient at `tokens` (`mlp_transient_gib`) beside the
    `HELD_HIDDEN` rows of tokens × hidden × dtype the decoder layer holds across it (calibration_activation.py
    `_forward_floor`, v2_profile.py)."""
    return round(mlp_transient_gib(model, layout, tokens) * GIB) + HELD_HIDDEN * tokens * model.hidden_size * model.dtype_bytes


def v0_forward_bytes(inputs: CalibrationInputs, tokens: int | None = None) -> int | None:
    """The V0 forward's peak as counted (above); None outside V0 or without the model."""
    model = inputs.model
    if model is None or engine_era(inputs) != "v0":
        return None
    tokens = batch_limits(inputs)[0] if tokens is None else tokens
    wide = full_width_experts_bytes(model, inputs.version, tokens, inputs.layout.tp)  # Mixtral at 0.2.5 – 0.2.7's whole experts
    if wide is not None:
        return wide + HELD_HIDDEN * tokens * model.hidden_size * 2
    if v0_moe_forward(inputs):
        return fused_moe_forward_bytes(model, inputs.layout, inputs.version, tokens)
    return round(mlp_transient_gib(model, inputs.layout, tokens) * GIB) + HELD_HIDDEN * tokens * model.hidden_size * 2


def fused_moe_forward_bytes(model: ModelSpec, layout: ParallelLayout, version: ResolvedVersion, tokens: int) -> int:
    """A fused MoE's forward at `tokens` as counted for the release's fused_moe.py (`_fused_moe_bytes`, in part only),
    beside the held residual and normed input: V0's, and the opt-in V1's of v0.6.5–v0.7.3, which runs the same model
    code (v1_opt_in.py)."""
    return _fused_moe_bytes(model, layout, tokens, CHUNK_ERAS.at(version)) + HELD_HIDDEN * tokens * model.hidden_size * 2


def _fused_moe_bytes(model: ModelSpec, layout: ParallelLayout, tokens: int, chunk_cap: int | None) -> int:
    """What a V0 fused MoE layer holds beside the residual and normed input at its first expert GEMM (vllm 0.6.4-0.7.3
    fused_moe.py `fused_experts_impl`, deepseek_v2.py / qwen2_moe.py `forward`): the three expert caches (tokens ×
    experts per token × (2 × intermediate ÷ shards), × intermediate ÷ shards, × hidden, model dtype), allocated before
    the first GEMM; the shared experts' output (tokens × hidden), computed before the routed experts and held across
    them (not their MLP transient, freed by then); the router's logits (tokens × experts) and its top-k weights and
    ids; and for FP8 experts the GEMM's input quantized (`invoke_fused_moe_kernel`: `scaled_fp8_quant`, or
    `per_token_group_quant_fp8` with a float32 scale per block_k inputs for block-FP8), the larger of the first
    GEMM's (tokens × hidden) and the second's (tokens × experts per token × intermediate ÷ shards). The caches and the
    quantized input are a chunk's (`chunk_cap` tokens at most: `moe_workspace.CHUNK_ERAS`, 32,768 in V0's releases); the experts write their result into the normed
    input (`inplace=True` in every quant method's `apply`)."""
    moe = model.moe
    assert moe is not None
    shards, hidden, topk = max(layout.moe_shards, 1), model.hidden_size, moe.experts_per_token
    inner = moe.expert_intermediate_size // shards
    chunk = tokens if chunk_cap is None else min(tokens, chunk_cap)
    caches = chunk * topk * (3 * inner + hidden) * 2
    shared = tokens * hidden * 2 if moe.shared_intermediate_size else 0
    router = tokens * moe.num_routed_experts * 2 + tokens * topk * TOPK_BYTES
    experts = model.quant.routed_experts or model.quant
    quantized = 0
    if experts.method == "fp8":
        group = experts.block[1] if experts.block is not None else None
        quantized = max(_fp8_input_bytes(chunk, hidden, group), _fp8_input_bytes(chunk * topk, inner, group))
    return caches + shared + router + quantized


def _fp8_input_bytes(rows: int, width: int, group: int | None) -> int:
    """An FP8 copy of a GEMM's input (1 B per value) and, per token group, its float32 scales (one per tensor else)."""
    return rows * width + (rows * ceil_div(width, group) * SCALE_BYTES if group else 0)


def v0_sampler_bytes(inputs: CalibrationInputs) -> int | None:
    """The V0 sampler's peak as the code counts it: its copies of seqs × vocab × 4 B (`_v0_copies` by the release's
    `SAMPLER_ERAS`) and the forward's hidden states."""
    model = inputs.model
    if model is None or engine_era(inputs) != "v0":
        return None
    tokens, seqs, _ = batch_limits(inputs)
    return round(_v0_copies(inputs, seqs, model) * logits_gib(seqs, model) * GIB) + tokens * model.hidden_size * 2


def _v0_copies(inputs: CalibrationInputs, seqs: int, model: ModelSpec) -> float:
    """The release's sampler copies (`SAMPLER_ERAS`): the argsort's in v0.2.0–v0.2.5, the model-dtype sort's in
    v0.2.6–v0.4.0, the float32 sort's after."""
    form = SAMPLER_ERAS.at(inputs.version)
    if form.sort == "argsort":
        return argsort_sampler_copies(seqs, model.dtype_bytes)
    if form.sort == "model-dtype sort":
        return dtype_sort_sampler_copies(seqs, model.dtype_bytes, form.masks)
    return sort_sampler_copies(seqs)


def v0_counted_sampler(activation: TermEstimate | None, inputs: CalibrationInputs) -> TermEstimate | None:
    """The `vllm.activation.v0` fit's estimate centred on the sampler as the code counts it (`v0_sampler_bytes`), the
    fit's held-out error kept as its interval; unchanged for a fused MoE, a forward-bound launch (`_forward_floor`
    charges its forward) or where no fit gave it. The fit (a constant and seqs × vocab × 4 B) was made on logs of
    vocabularies of 128,256-152,064 only, where its constant stands in for part of the slope: at GPT-2's 50,257 it
    charged 0.75 GiB where V0.6.4.post1 printed 0.47 (dongukmoon/misc's Colab T4 and L4, peak_torch_memory 0.71 less
    0.24 of weights) and the count is 0.46; Phi-1.5 (51,200) 0.48 printed, 0.47 counted; the fit's own logs print
    within 0.04 GiB of the count (1.26 against 1.22, 1.40-1.42 against 1.39-1.41)."""
    if activation is None or activation.fit_key != "vllm.activation.v0" or activation.source != "calibrated":
        return activation
    counted = v0_sampler_bytes(inputs)
    if counted is None or inputs.model is None or v0_moe_forward(inputs) or v0_forward_bound(inputs):
        return activation
    copies = _v0_copies(inputs, batch_limits(inputs)[1], inputs.model)
    return activation.model_copy(update={
        "bytes": counted,
        "basis": f"{activation.basis}; centred on the sampler as V0's code counts it, {copies:g} "
                 "copies of seqs × vocab × 4 B and the forward's hidden states (v0_profile.py), the fit's error kept",
    })  # fmt: skip


def sort_sampler_copies(rows: int) -> float:
    """Copies of rows × vocab × 4 B at the V0 sampler's peak. From 128 rows `logits.sort` (torch's SortStable.cu
    `segmented_sort_pairs`, the int64-index version torch 2.x ran under V0; ATen/cuda/cub.cuh) allocates its int64
    reverse indices and runs cub's DeviceSegmentedRadixSort::SortPairs without a DoubleBuffer, whose temporary storage
    holds an alternate key and value buffer: 5 copies beyond the sort's outputs while the model-dtype and float32
    logits are held, 9.5 in all, above the scatter's 8. Below 128 rows torch sorts by a full sort of (index, segment)
    pairs, not counted here: the scatter's 8 are its floor."""
    return V0_SEGMENTED_SORT_COPIES if rows >= SEGMENTED_SORT_ROWS else SCATTER_COPIES


def argsort_sampler_copies(rows: int, dtype_bytes: int) -> float:
    """Copies of rows × vocab × 4 B at the peak of v0.2.0–v0.2.5's `_apply_top_p_top_k` (`SAMPLER_ERAS`), which
    un-sorts the masked logits with `torch.gather(logits_sort, -1, torch.argsort(logits_idx, -1))`. While the argsort
    runs, the function holds the model-dtype logits, their sorted values, `probs_sort` and `probs_sum` (softmax and
    cumsum keep the model dtype: `dtype_bytes` ÷ 4 each), the int64 `logits_idx` (2), the top-p and top-k bool masks
    (¼ each); the argsort sorts int64 keys: its values and indices (2 + 2), torch's int64 reverse indices (2) and
    cub's alternate key and value buffers (2 + 2) from 128 rows (`sort_sampler_copies`' reading of SortStable.cu).
    Below 128 rows only the argsort's outputs are counted (the full sort's temporaries are not read): the floor."""
    held = 4 * dtype_bytes / 4 + INT64_COPIES + 2 * BOOL_COPIES
    argsort = 5 * INT64_COPIES if rows >= SEGMENTED_SORT_ROWS else 2 * INT64_COPIES
    return held + argsort


def dtype_sort_sampler_copies(rows: int, dtype_bytes: int, masks: int) -> float:
    """Copies of rows × vocab × 4 B at the peak of v0.2.6–v0.4.0's top-p/top-k (`SAMPLER_ERAS`), which sorts the
    model-dtype logits (`dtype_bytes` ÷ 4 a copy) and un-sorts them by a scattered inverse permutation. The larger of:
    the sort, beside the logits it sorts: its values and int64 indices, and from 128 rows torch's int64 reverse indices
    and cub's alternate keys and values (`sort_sampler_copies`' reading of SortStable.cu); and the final gather, while
    the logits, `logits_sort`, the int64 `logits_idx`, `probs_sort` and `probs_sum` (softmax and cumsum keep the model
    dtype), `masks` bool masks (¼ each: top-p, top-k and their union in v0.2.6–v0.2.7, top-k and top-p from v0.3.0),
    the int64 `logits_idx_inv` and the gathered result are held."""
    dtype = dtype_bytes / 4
    sort = dtype + dtype + INT64_COPIES + (INT64_COPIES + dtype + INT64_COPIES if rows >= SEGMENTED_SORT_ROWS else 0)
    gather = 5 * dtype + 2 * INT64_COPIES + masks * BOOL_COPIES
    return max(sort, gather)


def v0_forward_bound(inputs: CalibrationInputs) -> bool:
    """Whether a V0 launch's profile peaks in its forward, by the code's counts."""
    forward, sampler = v0_forward_bytes(inputs), v0_sampler_bytes(inputs)
    return forward is not None and sampler is not None and forward > sampler


def v0_moe_forward(inputs: CalibrationInputs) -> bool:
    """Whether a V0 launch runs a fused MoE, whose forward is counted in part only (above)."""
    model = inputs.model
    return model is not None and engine_era(inputs) == "v0" and model.moe is not None and MlpKind.MOE in model.layer_mlp
