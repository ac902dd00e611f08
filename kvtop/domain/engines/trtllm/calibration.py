"""TensorRT-LLM's pre-load terms (docs/engines/trtllm.md §3, §4, docs/calibration.md).

The PyTorch backend profiles a forward of `max_num_tokens` and sizes KV from what is free at the
peak: CUDA's total less the memory outside torch once the weights are in (CUDA context, NCCL), the
weights, what the run allocated inside torch (the activation peak) and what grew outside it (NCCL
buffers, CUDA graphs). A TensorRT engine's C++ runtime sizes from what is free once the engine, its
execution context and buffers are resident: only the context is fitted there, the rest assumed.
One log of the corpus prints the PyTorch backend's profiling lines (faradawn/bench3, 1.2.0rc4; a DGX Spark's also
does, its memory outside torch the host's): its terms stay assumed by mechanism (§19, §20, §22): the context before the
model at any TP (one process's CUDA context by SM count, `cuda_context.py`; its NCCL comes up with the model), the activation the forward of the profiled batch's max_num_tokens
(its MLP transient and the decoder layer's rows held beside it, §23: the code's arithmetic, not a flat 2 GiB), and what else the peak holds besides the context and
the weights read off that log (CUDA graph pools and workspaces captured before the profiling baseline), with the NCCL
per doubling of TP.
"""

from __future__ import annotations

import math

from kvtop.domain.calibration.coverage import IntervalScale
from kvtop.domain.calibration.cuda_context import CUDA_CONTEXT_KEY, one_process_context
from kvtop.domain.calibration.defaults import FEWER_ROWS_FEATURES as FEWER_ROWS_FEATURES
from kvtop.domain.calibration.defaults import IMPLIED_FITS as IMPLIED_FITS
from kvtop.domain.calibration.defaults import READS_FREE_AFTER_LOAD as READS_FREE_AFTER_LOAD
from kvtop.domain.calibration.defaults import SPAN_FITS as SPAN_FITS
from kvtop.domain.calibration.extrapolation import Extrapolation
from kvtop.domain.calibration.features import (
    CONTEXT_FEATURES,
    assumed_context_gib,
    assumed_estimate,
    context_estimate,
    context_threads,
    fitted_estimate,
    logits_gib,
    mlp_transient_gib,
    tp_features,
)
from kvtop.domain.calibration.gpu_totals import cuda_total_estimate
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.linear import LinearTerm
from kvtop.domain.calibration.plan_fits import committed_fits
from kvtop.domain.calibration.read_back import logged_terms as logged_terms  # its log prints its terms
from kvtop.domain.calibration.start_facts import StartMeasures
from kvtop.domain.calibration.terms import Term, TermEstimate
from kvtop.domain.calibration.weights import weights_estimate
from kvtop.domain.engines.trtllm.allreduce_workspace import fusion_workspace_bytes, with_fusion_workspace
from kvtop.domain.engines.trtllm.budget import executor_max_num_tokens, launch_max_batch_size, runtime
from kvtop.domain.engines.trtllm.build_tokens import engine_max_num_tokens
from kvtop.domain.engines.trtllm.cuda_graphs import graphs_off
from kvtop.domain.engines.trtllm.deepseek_weights import held_beside as deepseek_held
from kvtop.domain.engines.trtllm.engine_build import (
    old_builder_flag,
    packed_tokens_mlp_bytes,
    runtime_form,
    tied_head_copy,
)
from kvtop.domain.engines.trtllm.eras import RuntimeForm
from kvtop.domain.engines.trtllm.import_contexts import (
    import_contexts_bytes,
    with_import_contexts,
    with_import_contexts_unmodelled,
)
from kvtop.domain.engines.trtllm.mla_workspace import held_in_torch as mla_workspace_held
from kvtop.domain.engines.trtllm.moe_outside_torch import with_moe_unmodelled
from kvtop.domain.engines.trtllm.moe_weights import held_beside
from kvtop.domain.engines.trtllm.moe_workspace import held_in_torch as moe_workspace_held
from kvtop.domain.engines.trtllm.moe_workspace import with_attention_dp_unmodelled
from kvtop.domain.engines.trtllm.slot_positions import slot_position_bytes
from kvtop.domain.engines.trtllm.tensorrt_handles import handles_bytes
from kvtop.domain.engines.trtllm.token_logits import token_logits_error
from kvtop.domain.engines.versions import Era, Eras
from kvtop.domain.gpus import gpu_model_key
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.rounding import ceil_div
from kvtop.domain.wording import GIB, gib, mib

ACTIVATION_FEATURES = ("1 GiB", "max_batch_size × vocab × 4 B", "MLP transient of max_num_tokens")
# a 2024 TensorRT engine's C++ runtime (§18): its execution context (a constant) and what grows with the logits
# buffer (runtime buffers, decoder); fitted once 4 logs of the era print all three allocations (3 do)
RUNTIME_FEATURES = ("1 GiB", "max_batch_size × beam × vocab × 4 B")
RUNTIME_LABEL = "TensorRT engine's execution context, buffers, decoder"
# the PyTorch backend's profiled rest besides context, weights and activation (§19, §20); with `cuda_graph_config: null`
# no graphs are captured, so its label names none (the figure is the same: the pools in the read rest not subtracted)
NON_TORCH_LABEL = "the profiling run's CUDA graphs, workspaces, NCCL"
NON_TORCH_GRAPHS_OFF_LABEL = "the profiling run's workspaces, NCCL (no CUDA graphs)"
# v0.9+ (§18): the execution context is TensorRT's activation memory for the build's largest profile, which grows
# with max_num_tokens: 0.76–1.11 GiB logged at 8,192 tokens (memory docs, trtllm-bench, issue 1188), 43.26 MiB at
# 512 (issue 1188's second build)
EXECUTION_CONTEXT_TOKENS_PER_GIB = 8192
# v0.9+ (§18): runtime buffers and decoder, in float32 logits buffers ([max_batch_size × beam, vocab] × 4 B). 2024
# engines: 7 (their two logs that print both lines hold 28.6 and 29.1 B per slot and vocabulary entry: 7.2 ×;
# either log alone gives 7 whole buffers, 7.15 and 7.3 ×, so neither record is judged on its own figure beyond that);
# from 0.15: 4 (2 × of runtime buffers read off the logs, 2 × of the decoder's penalty layer read in its code)
LOGITS_BUFFERS: dict[RuntimeForm, int] = {"executor_2024": 7, "executor": 4}
# §18: the memory a TensorRT engine's C++ process holds besides the engine, its runtime and the KV (CUDA context,
# cuBLAS and cuDNN handles), where TensorRT's own process-wide count (`[MemUsageChange] … now: GPU N (MiB)`, the
# device's used memory) measured it on a GPU model at TP 1: the count at the first `Init cuDNN` once the engine is
# deserialized, less the engine, plus the second cuBLAS/cuDNN init (+16 MiB) after the execution context.
# RTX 3090: Triton 24.03 serving a 15,320 MiB Llama-3-8B engine counted 15,681 MiB (guide of 2024-05-21, search-
# index id 69112122406); a Triton 2.42 start on another host counted 15,681 MiB after a 15,319 MiB engine (id
# 29429054722). Other GPU models keep the fit or the assumption (0.75 GiB: the memory docs' H100 start leaves 0.75).
# Read off the corpus's own 3090 records: each judged with the other's count alone would take 361 or 362 MiB, so
# the in-sample part of their blind figures is 1 MiB (under 0.01 % of either's KV).
ENGINE_CONTEXT_COUNTED: dict[str, tuple[int, str]] = {
    "RTX3090": (361 + 16, "Triton 24.03: 15,681 MiB after a 15,320 MiB engine, + 16 MiB of cuBLAS/cuDNN handles"),
}
# the releases counted: both starts ran TensorRT-LLM 0.8.0 (TensorRT 9.x, CUDA 12.3 in Triton's 24.0x containers);
# another release's TensorRT and CUDA hold a context of their own, not counted: the fit or the assumption
ENGINE_CONTEXT_COUNTED_ERAS: Eras[bool] = Eras((
    Era("", False, "before 0.8.0: no TensorRT count read"),
    Era("0.8.0", True, "the RTX 3090 counts: TensorRT-LLM 0.8.0 starts (guide 69112122406, benchmark 29429054722)"),
    Era("0.9.0", False, "from 0.9.0: no TensorRT count read (another TensorRT and CUDA)"),
))
# §18 before v0.8: examples/llama/build.py of late 2023 (stored copy at 027cd518, search-index id 6078143562, the
# TensorRT 9.1 line of v0.5/v0.6): --max_batch_size 8 and --max_input_len 2048 by default, --max_num_tokens unset
PRE_08_BUILD_MAX_BATCH_SIZE = 8
PRE_08_BUILD_MAX_INPUT_LEN = 2048
# the counted context against what the budget leaves on the same start (0.40 GiB with the RTX 3090's fitted total):
# 0.03 GiB; a card that also drives a display holds more, which kvtop does not model
ENGINE_CONTEXT_ERROR_MIB = 100
# §20: what the PyTorch backend's profiled peak holds besides the weights and the activation, read off the one log
# outside a unified-memory host that prints the profiling lines (faradawn/bench3, 1.2.0rc4, H200, Llama-3-8B at
# max_num_tokens 1,024): 2.52 GiB outside torch after the load less the 0.13 GiB temporary pool (added back by
# `_cal_max_memory`), + 0.10 GiB inside torch beyond the 14.96 GiB of weights (graph inputs, attention workspace), +
# 0.03 GiB grown outside torch in the run. The CUDA context is charged apart (`_pytorch_context`: one process's, by
# the GPU's SM count), so what is left besides it is this less that context on the log's own GPU (`_rest_read`).
PYTORCH_BESIDES_WEIGHTS_READ_GIB = 2.52 - 0.13 + (15.06 - 14.96) + (2.55 - 2.52)
PYTORCH_BESIDES_READ_GPU = "H200"
PYTORCH_NON_TORCH_READ_FROM = "faradawn/bench3's TensorRT-LLM 1.2.0rc4 start (H200, TP 1)"
# §23: what the profiled forward holds beside the MLP's own tensors at its peak, read in the PyTorch backend's modules.
# The decoder layer keeps its residual and the normed input it passed to the MLP while the MLP runs (two [tokens,
# hidden] 16-bit tensors: `hidden_states, residual = post_attention_layernorm(...)`, then `self.mlp(hidden_states)`);
# GatedMLP.forward holds h1 = gate_up_proj(x) [tokens, 2 × intermediate] and h2 = swiglu(h1) [tokens, intermediate]
# while down_proj(h2) writes [tokens, hidden] (_torch/modules/gated_mlp.py, stored copy at 01503f55, search-index id
# 50230328775): the shared MLP transient counts those three. An FP8 per-tensor (ModelOpt FP8 QDQ) Linear quantizes its
# input before the GEMM and holds it through it (`static_quantize_e4m3_per_tensor(input, input_scale)` then
# `cublas_scaled_mm(qinput, …)`, _torch/modules/linear.py FP8QDQLinearMethod.apply, ids 421325918, 3478255898):
# [tokens, intermediate] at 1 B beside h2 at down_proj.
DECODER_HELD_HIDDEN_ROWS = 2
FP8_QUANTIZED_INPUT_BYTES = 1
# §19: the NCCL of a TP group, 0.75 GiB per doubling of TP, assumed for both runtimes: the PyTorch backend's profiled
# non-torch growth (`_assumed_non_torch`) and a TensorRT engine's context before it loads (`_engine_context`). In GiB,
# as the fitted terms' coefficients are (features.py: a fit's features are GiB so its coefficients read as the logs
# print them); bytes from `round(x * GIB)` where it is charged, text from wording.gib
TP_GROUP_NCCL_GIB_PER_DOUBLING = 0.75
FIT_TERMS: dict[str, tuple[Term, tuple[str, ...]]] = {
    "trtllm.context": (Term.CONTEXT, CONTEXT_FEATURES),
    "trtllm.activation": (Term.ACTIVATION, ACTIVATION_FEATURES),
    "trtllm.non_torch": (Term.NON_TORCH, CONTEXT_FEATURES),
    "trtllm.runtime": (Term.ACTIVATION, RUNTIME_FEATURES),
}

# what a start's log measures of the terms, read by the calibration store (calibration/node.py)
START_MEASURES = StartMeasures(source=(
    "docs/engines/trtllm.md §4.1–4.2: the KV budget is a fraction of the memory free at the profiled peak (PyTorch backend) or once the engine is resident (C++ runtime); the log prints that free figure, no charge besides the weights alone"
))

# BEGIN FITTED by `python benchmarks/calibration/run.py --write` from tests/data/calibration/ (docs/calibration.md)
FITS: dict[str, LinearTerm] = {
}  # fmt: skip
INTERVAL_SCALE: IntervalScale | None = IntervalScale(
    engine='trtllm', factor=1.0, records=26, sources=22,
)
EXTRAPOLATION: Extrapolation | None = Extrapolation(
    engine='trtllm', gpus=('A10', 'A100-40GB', 'A100-80GB', 'B200', 'B300', 'GB10', 'GB200', 'H100', 'H200', 'L4', 'L40S', 'RTX3090', 'RTX4090', 'RTX5060-TI', 'RTX5090', 'RTX6000-ADA', 'RTXA4000'), band_depth=2, newest_band=(1, 3), classes=('MLA with MoE', 'MoE', 'dense'), gpu_fraction=0.0, version_fraction=0.0, class_fraction=0.0, records=77, sources=22,
)  # fmt: skip
# END FITTED


def _profiled(inputs: CalibrationInputs) -> bool:
    return runtime(inputs.settings, inputs.version) == "pytorch"


def weights_built_ahead(inputs: CalibrationInputs) -> bool:
    """A TensorRT engine holds the weights its build wrote (its own weights error, `BUILT_WEIGHTS_…`); the
    PyTorch backend loads the checkpoint as it starts."""
    return not _profiled(inputs)


def _held_beside_book(inputs: CalibrationInputs) -> tuple[int, str] | None:
    """What the PyTorch backend holds in torch beyond the book at the profiling baseline: the MoE backend's padded
    MXFP4 experts (moe_weights.py, §24), DeepseekV3Model's whole embedding and MLA copies (deepseek_weights.py, §25),
    the CUTLASS MoE workspace cached after the warm-up (moe_workspace.py, §26) and MLA's attention workspaces
    (mla_workspace.py, §32)."""
    if not _profiled(inputs):
        return None
    parts = [part for part in (held_beside(inputs.model, inputs.layout, inputs.settings),
                               deepseek_held(inputs),
                               moe_workspace_held(inputs.model, inputs),
                               mla_workspace_held(inputs)) if part is not None]
    if not parts:
        return None
    return sum(nbytes for nbytes, _ in parts), "; ".join(why for _, why in parts)


def _batch_and_tokens(inputs: CalibrationInputs) -> tuple[int, int]:
    """The build's (or the PyTorch executor's) max_batch_size and max_num_tokens, else the defaults (§6); a TensorRT
    engine's max_num_tokens as its release's trtllm-build caps it (`build_tokens.py`), the PyTorch executor's as its
    model engine caps it at max_batch_size × max_seq_len (`budget.executor_max_num_tokens`)."""
    s = inputs.settings
    batch = launch_max_batch_size(s)
    if _profiled(inputs):
        return batch, executor_max_num_tokens(s, inputs.context_length)
    return batch, engine_max_num_tokens(s, batch, inputs.context_length, inputs.version)


def _engine_head(inputs: CalibrationInputs) -> tuple[int, str] | None:
    """A TensorRT engine's LM head of a tied checkpoint, built as its own matrix beside the book (engine_build.py,
    §17); None for the PyTorch backend, which ties them as the model does."""
    return None if _profiled(inputs) else tied_head_copy(inputs.model, inputs.layout, inputs.settings)


def fit_features(key: str, inputs: CalibrationInputs) -> tuple[float, ...] | None:
    if key == "trtllm.context":
        return tp_features(inputs)
    if key == "trtllm.runtime":
        if _profiled(inputs) or inputs.model is None or inputs.model.multimodal:
            return None
        if runtime_form(inputs.version, inputs.settings) != "executor_2024":  # the fit is the 2024 engines' (its 3 logs)
            return None
        batch, _ = _batch_and_tokens(inputs)
        return (1.0, logits_gib(batch * (inputs.settings.max_beam_width or 1), inputs.model))
    if not _profiled(inputs):
        return None
    if key == "trtllm.activation":
        if inputs.model is None or inputs.model.multimodal:
            return None
        batch, tokens = _batch_and_tokens(inputs)
        return (1.0, logits_gib(batch, inputs.model), mlp_transient_gib(inputs.model, inputs.layout, tokens))
    if key == "trtllm.non_torch":
        return tp_features(inputs)
    return None


def _weights(inputs: CalibrationInputs) -> TermEstimate:
    """The book with what the backend holds beside it; under attention DP the PyTorch backend's CUTLASS MoE
    workspace is named not modelled, its bound in the error (moe_workspace.py, §26)."""
    estimate = weights_estimate(inputs, extra=_held_beside_book(inputs) or _engine_head(inputs),
                                built_ahead=weights_built_ahead(inputs))  # fmt: skip
    return with_attention_dp_unmodelled(estimate, inputs) if _profiled(inputs) else estimate


def terms(inputs: CalibrationInputs, fits: dict[str, LinearTerm] | None = None) -> tuple[TermEstimate, ...]:
    """CUDA's total, the context, the weights, and the profiled activation peak and non-torch growth."""
    fits = committed_fits(FITS) if fits is None else fits
    found = [
        cuda_total_estimate(inputs.gpu_name, inputs.gpu_total_bytes, fits, wsl2=inputs.wsl2),
        context(inputs, fits) if _profiled(inputs) else with_import_contexts_unmodelled(context(inputs, fits), inputs),
        _weights(inputs),
    ]
    if not _profiled(inputs):
        logits = token_logits_estimate(inputs) or packed_tokens_estimate(inputs)
        if logits is not None:
            found.append(logits)
            return tuple(found)
        fit = fits.get("trtllm.runtime")
        fit = fit if fit is not None and fit.features == RUNTIME_FEATURES else None  # a fit of another form: none
        found.append(fitted_estimate(Term.ACTIVATION, RUNTIME_LABEL, fit,
                                     fit_features("trtllm.runtime", inputs), "the engine's build limits")
                     or executor_estimate(inputs))  # fmt: skip
        return tuple(found)
    # with CUDA graphs off (cuda_graphs.py) the term's label claims none: words only, its figure as it is
    rest_label = NON_TORCH_GRAPHS_OFF_LABEL if graphs_off(inputs.settings) else NON_TORCH_LABEL
    for key, label, assumed in (("trtllm.activation", "TensorRT-LLM's profiled activation peak", _assumed_activation),
                                ("trtllm.non_torch", rest_label, _assumed_non_torch)):  # fmt: skip
        term = FIT_TERMS[key][0]
        value, error, basis = assumed(inputs, fits)
        estimate = (fitted_estimate(term, label, fits.get(key), fit_features(key, inputs), "the profiling run")
                    or assumed_estimate(term, label, value, error, basis))  # fmt: skip
        if key == "trtllm.non_torch":  # the code's fusion workspace and 1.3.0rc20's import contexts (`fit_offset`)
            estimate = with_import_contexts(with_fusion_workspace(estimate, inputs), inputs)
            estimate = with_moe_unmodelled(estimate, inputs)
        found.append(estimate)
    return tuple(found)


def fit_offset(key: str, inputs: CalibrationInputs) -> int:
    """Bytes of what fit `key` measures that the code sizes, taken off the logged figure before fitting
    (benchmarks/calibration/evaluate.py `term_rows`) and added to the estimate (`terms`): the all-reduce fusion
    workspace in the PyTorch backend's profiled non-torch growth (`allreduce_workspace.py`: 0.5 / 1 / 2 GiB at TP 2 / 4 /
    8 from 1.2.0rc3, 0.12–0.24 GiB before, none without peer access), which a constant and log2(TP) over mixed releases
    cannot hold; and 1.3.0rc20's import contexts on the first GPU (`import_contexts.import_contexts_bytes`, one assumed
    context each, the same bytes `terms` adds: no committed fit is read behind a judgement's back)."""
    if key != "trtllm.non_torch" or not _profiled(inputs):
        return 0
    return fusion_workspace_bytes(inputs) + import_contexts_bytes(inputs)


def profiled_requests(inputs: CalibrationInputs) -> int:
    """The profiling run's dummy context requests (§3 step 1): max_num_tokens cut into requests of min(max_num_tokens,
    max_seq_len − 1) tokens (`KvCacheCreator._create_dummy_context_requests`)."""
    _, tokens = _batch_and_tokens(inputs)
    length = min(tokens, max(1, inputs.context_length - 1))
    return ceil_div(tokens, length)


def decoder_held_gib(model: ModelSpec, layout: ParallelLayout, tokens: int) -> tuple[float, float]:
    """GiB the PyTorch backend's profiled forward holds beside the MLP transient at its peak (§23): the decoder layer's
    residual and normed input, 2 × tokens × hidden × 2 B, and for a dense model whose linears are FP8 per tensor, the
    down projection's quantized input, tokens × intermediate ÷ TP × 1 B (0 otherwise)."""
    held = tokens * DECODER_HELD_HIDDEN_ROWS * model.hidden_size * 2 / GIB
    quant = model.quant
    fp8 = model.moe is None and quant.method == "fp8" and quant.per_tensor
    down_input = tokens * model.intermediate_size / max(layout.tp, 1) * FP8_QUANTIZED_INPUT_BYTES / GIB if fp8 else 0.0
    return held, down_input


def _assumed_activation(inputs: CalibrationInputs, fits: dict[str, LinearTerm]) -> tuple[int, int, str]:
    """The PyTorch backend's profiled activation peak where no fit reaches (docs/engines/trtllm.md §20, §23): the forward
    of the profiling batch, max_num_tokens context tokens (`KvCacheCreator._create_dummy_context_requests`; CUDA graphs
    and the autotuner ran before the baseline, so the printed activation is this forward alone): its MLP transient
    (`mlp_transient_gib`: tokens × (3 × intermediate ÷ TP + hidden) × 2 B, or the routed experts' for a MoE), what the
    decoder layer holds beside it (`decoder_held_gib`: its residual and normed input; an FP8 per-tensor model's
    quantized down-projection input) and one float32 row of logits per dummy request (only the last token's). Error:
    the value; the three logs that print the line lie inside (0.14 GiB against 0.11 for Llama-3-8B at 1,024 tokens;
    0.39 against 0.35 for TinyLlama at 8,192; 0.85 against 0.79 for gpt-oss-120b at 8,192)."""
    _, tokens = _batch_and_tokens(inputs)
    model = inputs.model
    if model is None:
        return 2 * GIB, 2 * GIB, "2 GiB assumed: the model's shapes are not known (§20)"
    requests = profiled_requests(inputs)
    mlp, logits = mlp_transient_gib(model, inputs.layout, tokens), logits_gib(requests, model)
    held, down_input = decoder_held_gib(model, inputs.layout, tokens)
    value = round((mlp + held + down_input + logits) * GIB)
    fp8 = f" + FP8 down-projection input {gib(down_input * GIB)}" if down_input else ""
    return value, value, (f"forward of max_num_tokens {tokens:,}: MLP transient {gib(mlp * GIB)} + the decoder layer's "
                          f"residual and normed input {gib(held * GIB)}{fp8} + {requests:,} requests' float32 logits "
                          f"{gib(logits * GIB)} (TensorRT-LLM's profiling batch, §20, §23); error: the value")


def _rest_read(fits: dict[str, LinearTerm]) -> float:
    """GiB the read log's profiled peak held besides its weights, activation and CUDA context (§20): the besides
    figure less one process's context on the log's GPU by the same fit a plan reads (`cuda_context.py`; 0.75 GiB
    assumed where `fits` holds none), so the context is charged once."""
    fit = fits.get(CUDA_CONTEXT_KEY)
    threads = context_threads(PYTORCH_BESIDES_READ_GPU)  # the fit's feature (`cuda_context.one_process_features`)
    context_gib = fit.predict((threads,)) / GIB if fit is not None and threads is not None else assumed_context_gib(1)
    return PYTORCH_BESIDES_WEIGHTS_READ_GIB - context_gib


def _assumed_non_torch(inputs: CalibrationInputs, fits: dict[str, LinearTerm]) -> tuple[int, int, str]:
    """What the PyTorch backend's profiled peak holds besides the context, the weights and the activation where no fit
    reaches (§20): the CUDA graph pools, workspaces and buffers made before the profiling baseline, read off the one
    log that prints the profiling lines (`_rest_read`: 1.95 GiB with the committed context fit), and the NCCL of a TP
    group, grown with the model, 0.75 GiB per doubling (§19). Error: the value (the SRO-SA 1.1.0 start's lines leave
    0.70 GiB, §20: what makes it grow with the model is not read)."""
    doublings = math.log2(max(inputs.layout.tp, 1))
    rest = _rest_read(fits)
    value = round((rest + TP_GROUP_NCCL_GIB_PER_DOUBLING * doublings) * GIB)
    at_tp = f" + {gib(TP_GROUP_NCCL_GIB_PER_DOUBLING * GIB)} per doubling of TP {inputs.layout.tp}" if doublings else ""
    return value, value, (f"{gib(rest * GIB)} read off {PYTORCH_NON_TORCH_READ_FROM}{at_tp}: CUDA graphs, workspaces "
                          "and buffers besides the context and weights, no fit (§20)")


def packed_tokens_estimate(inputs: CalibrationInputs) -> TermEstimate | None:
    """A pre-v0.8 engine's execution context, and a v0.8 engine's that build.py made (§18, `engine_build.runtime_form`):
    TensorRT's activation memory, sized at build time for the largest
    profile (docs/source/reference/memory.md: "close to max number of input tokens × some constant factor"), whose
    packed-token dimension ends at max_batch_size × max_input_len (2023 `prepare_inputs`: `max(max_input_len ×
    max_batch_size, max_beam_width × max_batch_size)`; build.py's --max_num_tokens where given, else its
    --max_batch_size and --max_input_len where given, else their defaults; the basis says which). TensorRT reuses one
    layer's memory for the next, so the peak is the widest layer's live tensors: the gated MLP's fc, gate and product
    [tokens, intermediate] and the residual [tokens, hidden], 16-bit (`GatedMLP.forward`: fc → act → gate →
    proj(inter × gate), layers/mlp.py of 2023): `mlp_transient_gib`. The release's buffers besides it are not read;
    the 2024 engines' logs hold 1.6–3.4 × this count at 8,192 tokens (FP8 and weight-only GEMMs, paged context FMHA):
    error, the value. None in later eras or without a model."""
    if inputs.model is None or inputs.model.multimodal or runtime_form(inputs.version, inputs.settings) != "packed_tokens":
        return None
    s = inputs.settings
    batch = s.max_running_requests or PRE_08_BUILD_MAX_BATCH_SIZE
    input_len = s.max_input_len or PRE_08_BUILD_MAX_INPUT_LEN
    tokens = s.max_num_batched_tokens or batch * max(input_len, s.max_beam_width or 1)
    value = packed_tokens_mlp_bytes(inputs.model, inputs.layout, tokens)
    built_by = old_builder_flag(s)
    era = f"v0.8 engine made by build.py ({built_by})" if built_by else "pre-v0.8 engine"
    batch_from = "--max_batch_size" if s.max_running_requests else "build.py's default"
    input_from = "--max_input_len" if s.max_input_len else "build.py's default"
    said = "--max_num_tokens as given" if s.max_num_batched_tokens else (
        f"max_batch_size {batch:,} ({batch_from}) × max_input_len {input_len:,} ({input_from})")  # fmt: skip
    return assumed_estimate(Term.ACTIVATION, RUNTIME_LABEL, value, value,
                            f"{era}: TensorRT's activation for {tokens:,} packed tokens: {said}; the MLP's three "
                            "16-bit [tokens, intermediate] tensors, gated or not (assumed from one log, v0.8 GPT-2's), "
                            "and the residual; error: the value")  # fmt: skip


def executor_estimate(inputs: CalibrationInputs) -> TermEstimate:
    """A v0.9+ engine's C++ runtime where no fit reaches (§18): its execution context, 1 GiB per 8,192 tokens of
    the build's max_num_tokens (TensorRT's activation memory for its largest profile: 0.76–1.11 GiB logged at
    8,192, 43 MiB at 512), and runtime buffers and decoder in logits buffers ([max_batch_size × beam, vocab]
    float32, batch_manager/runtimeBuffers.cpp). A 2024 engine holds 7 of them (28.6 and 29.1 B per slot and
    vocabulary entry in its two logs that print both lines); from 0.15, 4: runtime buffers of 2 (read off the
    logs) and the decoder's penalty layer, read in layers/penaltyLayer.cpp (an int32 occurrence count and a float
    copy of the penalized logits per slot and vocabulary entry), 2 more; the rest of the decoder is not read per
    release: the error, up to 8 × the logits buffer."""
    form = runtime_form(inputs.version, inputs.settings)
    if inputs.model is None or inputs.model.multimodal or form not in LOGITS_BUFFERS:
        return assumed_estimate(Term.ACTIVATION, RUNTIME_LABEL, 2 * GIB, 2 * GIB,
                                "2 GiB assumed: this release's C++ runtime buffers are not read")  # fmt: skip
    batch, tokens = _batch_and_tokens(inputs)
    logits = batch * (inputs.settings.max_beam_width or 1) * inputs.model.vocab_size * 4
    execution_context = tokens * GIB // EXECUTION_CONTEXT_TOKENS_PER_GIB
    buffers = LOGITS_BUFFERS[form]
    held = ("runtime buffers and decoder of a 2024 engine (two logs: 7.2 × the logits buffer)" if form == "executor_2024"
            else "2 × of runtime buffers + 2 × of the decoder's penalty layer; its sampling workspaces are the error")
    # from 0.15 the buffers by slot × position beside them (§29; the 2024 form's logs hold them already)
    positions = slot_position_bytes(inputs, batch) if form == "executor" else 0
    by_position = (f" + {gib(positions)} of cache indirection and output ids, 16 B per slot × beam × "
                   f"max_seq_len {inputs.context_length:,} (decoderBuffers.cpp, gptDecoderBatched.cpp, §29)"
                   if positions else "")  # fmt: skip
    return assumed_estimate(Term.ACTIVATION, RUNTIME_LABEL, execution_context + buffers * logits + positions,
                            GIB + 8 * logits,
                            f"execution context {tokens:,} tokens × 1 GiB / 8,192 + {buffers} × max_batch_size "
                            f"{batch:,} × beam × vocab {inputs.model.vocab_size:,} × 4 B: {held}{by_position}")  # fmt: skip


def token_logits_estimate(inputs: CalibrationInputs) -> TermEstimate | None:
    """A v0.8 engine's C++ runtime (§18): max_num_tokens × vocab × 4 B, one float32 logit per vocabulary
    entry for every token the build admits, its error by the vocabulary it was read at (`token_logits.py`); None in
    later eras or without a model."""
    if inputs.model is None or inputs.model.multimodal or runtime_form(inputs.version, inputs.settings) != "token_logits":
        return None
    _, tokens = _batch_and_tokens(inputs)
    value = tokens * inputs.model.vocab_size * 4
    error, why = token_logits_error(inputs.model, inputs.layout, value, tokens)
    return assumed_estimate(Term.ACTIVATION, RUNTIME_LABEL, value, error,
                            f"v0.8 engine: max_num_tokens {tokens:,} × vocab {inputs.model.vocab_size:,} × 4 B "
                            f"({why})")  # fmt: skip


def context(inputs: CalibrationInputs, fits: dict[str, LinearTerm] | None = None) -> TermEstimate:
    """The memory outside torch once the engine is built (CUDA context, NCCL): its term among `terms`. A TensorRT
    engine at TP 1 on a GPU model and release where TensorRT's own process-wide count measured it takes that
    measurement (`ENGINE_CONTEXT_COUNTED`, `ENGINE_CONTEXT_COUNTED_ERAS`); else, where no trtllm.context fit reaches,
    one process's CUDA context by the GPU's SM count (`cuda_context.py`, the engine-neutral fit), with a TensorRT
    engine's TP group's NCCL per doubling of TP on top (`_engine_context`)."""
    fits = committed_fits(FITS) if fits is None else fits
    label = "CUDA context and NCCL outside torch"
    if _profiled(inputs) and fits.get("trtllm.context") is None:
        return _pytorch_context(inputs, fits)
    counted = ENGINE_CONTEXT_COUNTED.get(gpu_model_key(inputs.gpu_name)) if inputs.gpu_name else None
    if (counted is not None and not _profiled(inputs) and inputs.layout.tp == 1 and inputs.layout.pp == 1
            and ENGINE_CONTEXT_COUNTED_ERAS.at(inputs.version)):
        mib, where = counted
        return TermEstimate(term=Term.CONTEXT, label=label, bytes=mib << 20, error_bytes=ENGINE_CONTEXT_ERROR_MIB << 20,
                            source="calibrated", basis=f"{mib} MiB counted by TensorRT on this GPU model ({where})")  # fmt: skip
    if fits.get("trtllm.context") is None:
        return _engine_context(inputs, fits)
    return context_estimate("trtllm.context", label, fits, inputs, tp_features(inputs))


def _engine_context(inputs: CalibrationInputs, fits: dict[str, LinearTerm]) -> TermEstimate:
    """A TensorRT engine's C++ process before the engine loads, where no trtllm.context fit reaches (§18): the same
    driver context every CUDA process holds, one process's by the GPU's resident threads (`cuda_context.py`: 294 MiB
    on an RTX 3090's 82 × 1,536 threads, where TensorRT's own count leaves 283 MiB under 0.8.0 without Triton, §27),
    TensorRT's handles before 0.10.0 (`with_tensorrt_handles`), and at TP > 1 its TP group's NCCL, assumed 0.75 GiB
    per doubling (error: the value, added as independent errors add)."""
    found = with_tensorrt_handles(one_process_context(inputs, fits, f"TP {inputs.layout.tp}, one process per GPU"),
                                  inputs)  # fmt: skip
    doublings = math.log2(max(inputs.layout.tp, 1))
    if not doublings:
        return found
    nccl = round(TP_GROUP_NCCL_GIB_PER_DOUBLING * doublings * GIB)
    return found.model_copy(update={"label": "CUDA context and NCCL outside torch"}).plus(
        nccl, nccl, why=f"+ {gib(nccl)} of the TP group's NCCL ({gib(TP_GROUP_NCCL_GIB_PER_DOUBLING * GIB)} "
                        f"per doubling of TP {inputs.layout.tp}, assumed)")  # fmt: skip


def with_tensorrt_handles(found: TermEstimate, inputs: CalibrationInputs) -> TermEstimate:
    """A TensorRT engine's context with TensorRT's cuBLAS/cuBLASLt and cuDNN handles beside the CUDA context, 34 MiB
    before 0.10.0 (TensorRT 9), none from it (tensorrt_handles.py, §27); the count is read, its error unchanged."""
    handles = handles_bytes(inputs.version)
    if not handles:
        return found
    return found.plus(handles, why=f"+ {mib(handles)} of TensorRT's cuBLAS/cuBLASLt and cuDNN handles "
                                   "(TensorRT 9, before 0.10.0: two inits, §27)")  # fmt: skip


def _pytorch_context(inputs: CalibrationInputs, fits: dict[str, LinearTerm]) -> TermEstimate:
    """The PyTorch backend's memory outside torch before its model is created, where no fit reaches: one process's
    CUDA context by the GPU's SM count (`cuda_context.py`, the fit every engine's TP 1 logs feed), at any TP (§19).
    py_executor_creator.py reads the free memory as each component's creation starts
    (`_ExecutorMemoryMonitor.observe_creation_stage`), and its TP group's NCCL comes up with the model: issue 5872's
    start at TP 8 (1.0.0rc1, H200) had 139.55 of 140.06 GiB free before 'Model', 0.51 GiB taken, where the fit gives
    0.57 on the H200's 132 SMs. The per-doubling NCCL is charged to the profiled non-torch growth (`_assumed_non_torch`)."""
    return one_process_context(inputs, fits, "TensorRT-LLM's PyTorch backend before its model is created: its TP "
                               "group's NCCL comes up with the model (§19)")
