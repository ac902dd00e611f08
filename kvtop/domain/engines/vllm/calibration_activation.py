"""vLLM's profiled activation peak (`torch_peak_increase`), the fit read with the floors vLLM's code sets under it.

`profile_run` runs the model on `max_num_batched_tokens` tokens, then the sampler on `max_num_seqs` requests. The
forward's largest transient is the MLP's (gate-up output, its activation, the expert caches of a fused MoE: tokens ×
experts per token × (3 × intermediate ÷ TP + hidden) × 2 B); the sampler's is its float32 logits and the copies
softmax, top-k/top-p and log-probs make of them (seqs × vocab × 4 B). The fit weighs both, per era (V0 before 0.8.0,
V1 after: V1's sampler keeps several more copies of the logits); V0's is the larger side by the code's counts, its fit
the sampler's on sampler-bound logs (`v0_profile.py`). The peak is never less than the forward's MLP transient
(`_forward_floor`), and where the code's count is read (v0.17.0 on, the native sampler path) it is that count, the
fit kept for its error only (`_sampler_floor`); its interval spans FlashInfer's
sampler where the install decides the path, and is centred on FlashInfer's where the release and the GPU take it
(`sampler_path.py`, `_sampler_path_error`). Apart from calibration.py so the fits' table stays one screen.
"""

from __future__ import annotations

import math

from kvtop.domain.calibration.features import assumed_estimate, fitted_estimate, logits_gib, mlp_transient_gib
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.linear import LinearTerm
from kvtop.domain.calibration.terms import Term, TermEstimate
from kvtop.domain.engines.vllm.calibration_eras import activation_key
from kvtop.domain.engines.vllm.compile_benchmark import with_v1_compile_copy
from kvtop.domain.engines.vllm.deployment import setup
from kvtop.domain.engines.vllm.dp_gather import with_gathered_forward
from kvtop.domain.engines.vllm.encoder_profile import (
    COUNTED_FAMILIES,
    encoder_profile,
    refuse_unmodelled_limits,
)
from kvtop.domain.engines.vllm.flashinfer_copies import flashinfer_copies
from kvtop.domain.engines.vllm.moe_workspace import fused_moe_workspace, with_stage_buffers
from kvtop.domain.engines.vllm.pooling import pooling_estimate, refuse_unmodelled
from kvtop.domain.engines.vllm.pooling_runner import pooling_runner
from kvtop.domain.engines.vllm.profile_run import batch_limits, lora, runs_opt_in_v1
from kvtop.domain.engines.vllm.rejection_sampler import rejection_extra_bytes
from kvtop.domain.engines.vllm.sampler_path import ProfiledPath, profiled_sampler_path
from kvtop.domain.engines.vllm.sampler_peak import counted_sampler_bytes, sampler_copies
from kvtop.domain.engines.vllm.skip_mm_profiling import encoder_profiled
from kvtop.domain.engines.vllm.text_only import refuse_unread
from kvtop.domain.engines.vllm.v0_profile import (
    MOE_FORWARD_ERROR,
    fused_moe_forward_bytes,
    held_forward_bytes,
    sort_sampler_copies,
    v0_counted_sampler,
    v0_forward_bound,
    v0_forward_bytes,
    v0_moe_forward,
)
from kvtop.domain.engines.vllm.v1_opt_in import LOGITS_ROWS_ERAS
from kvtop.domain.engines.vllm.v2_profile import (
    V2_LOGITS_FLOAT32_COPY,
    launch_stage_peaks,
    v2_counted,
)
from kvtop.domain.model import MlpKind, ModelSpec
from kvtop.domain.wording import GIB, gib

LABEL = "vLLM's profiled activation peak"


def activation_estimate(inputs: CalibrationInputs, fits: dict[str, LinearTerm]) -> TermEstimate:
    """The peak for a plan: V2's profile as its code counts it, per stage (`_v2_activation`); else the era's fit for
    the sampler's path, floored by the forward's MLP transient and the sampler as the code counts it; else the
    unfitted estimate, said why. A pooling runner's has no sampler (`_pooling_activation`)."""
    refuse_unmodelled(inputs)  # --runner draft, a pooling launch kvtop does not plan (pooling.py)
    refuse_unmodelled_limits(inputs)  # every modality off with the tower still built (mm_limits.py, tower_limits.py)
    if inputs.model is not None:  # --language-model-only on a class or release not read (text_only.py)
        refuse_unread(inputs.model, inputs.settings, inputs.version)
    if runs_opt_in_v1(inputs):  # VLLM_USE_V1=1 at v0.6.5–v0.7.3: no sampler profiled
        return _opt_in_activation(inputs, fits.get(activation_key(inputs)))
    if pooling_runner(inputs.settings.flags, inputs.model, inputs.version):
        return _pooling_activation(inputs, fits.get(activation_key(inputs)))
    v1 = _v1_activation(inputs, fits)
    if not v2_counted(inputs):
        return v1
    # V2's error reads the V1 form without the gathered layer, which joins V2's own count after (dp_marlin.py)
    v2 = _v2_activation(inputs, _v1_activation(inputs, fits, gathered=False), fits.get(activation_key(inputs)))
    return v1 if v2 is None else with_gathered_forward(v2, inputs)


def _v1_activation(inputs: CalibrationInputs, fits: dict[str, LinearTerm], *, gathered: bool = True) -> TermEstimate:
    """The V1 runner's peak: the era's fit and the floors above (`activation_estimate`); `gathered`: with a DP MoE's
    gathered layer where dp_gather.py prices it."""
    tokens, seqs, why = batch_limits(inputs)
    key = activation_key(inputs)
    activation = fitted_estimate(Term.ACTIVATION, LABEL, fits.get(key), plan_features(inputs),
                                 f"{tokens:,} tokens, {seqs:,} seqs ({why})")  # fmt: skip
    # the sampler's path first, then the floor: a peak lowered to FlashInfer's one copy is still never below the
    # forward's MLP transient, taken once here
    activation = v0_counted_sampler(activation, inputs)  # V0: the code's count, the fit's error (v0_profile.py)
    activation = _forward_floor(_sampler_path_error(activation, inputs, fits.get(key), seqs), inputs, tokens)
    if activation is None:
        activation = _unfitted_activation(inputs, fits.get(key), key, LABEL, tokens, seqs)
    activation = _sampler_floor(activation, inputs, tokens, seqs)
    if gathered:  # DP replicas of a MoE: the gathered batch (dp_gather.py)
        activation = with_gathered_forward(activation, inputs)
    if v0_moe_forward(inputs) and activation.source == "calibrated":
        activation = assumed_estimate(Term.ACTIVATION, LABEL, activation.bytes, max(activation.error_bytes, MOE_FORWARD_ERROR),
                                      f"{activation.basis}; a fused MoE's forward in V0 is counted in part only "
                                      "(v0_profile.py): ± 2 GiB assumed")  # fmt: skip
    # the MoE workspace, a later PP stage's buffer: code-sized; then the cold compile's table copy (compile_benchmark.py)
    return with_v1_compile_copy(with_stage_buffers(activation, inputs), inputs)


def _pooling_activation(inputs: CalibrationInputs, fit: LinearTerm | None) -> TermEstimate:
    """A pooling runner's peak (pooling.py): the V1 fit's forward part (its sampler feature at 0), the forward's MLP
    transient as counted (`_forward_floor`'s) or the pooler's rows, the larger, plus a counted encoder profile and the
    stage's buffers (`with_stage_buffers`, as `_v1_activation`)."""
    tokens, _, _ = batch_limits(inputs)
    model = inputs.model
    if model is None:
        return _model_unknown(LABEL)
    features = activation_features(inputs, model)
    fit_forward = _fit_forward(fit, features)
    counted = held_forward_bytes(model, inputs.layout, tokens)
    encoder = encoder_profile(inputs) if _encoder_runs(inputs) and inputs.layout.pp == 1 and not lora(inputs) else None
    estimate = pooling_estimate(inputs, fit_forward, counted, encoder, fit.error_bytes if fit else None, LABEL, tokens)
    # the same forward's buffers as a generating runner's: a later PP stage's intermediate tensors (`_dummy_run`
    # makes them whatever the runner, v1/worker/gpu_model_runner.py:3112-3116 at v0.11.0) and, where read, the fused
    # MoE's workspace (moe_workspace.py)
    return with_stage_buffers(estimate, inputs)


def _opt_in_activation(inputs: CalibrationInputs, fit: LinearTerm | None) -> TermEstimate:
    """The profiled peak of the V1 that VLLM_USE_V1=1 opts into at v0.6.5–v0.7.3 (v1_opt_in.py): its `profile_run`
    runs no sampler, so the peak is the forward at `max_num_batched_tokens` (the V1 fit's forward part, its logits
    feature at 0, or the forward as counted: a fused MoE's by the release's fused_moe.py, in part only, the larger) or
    `compute_logits`' model-dtype logits beside their hidden states (every token's up to v0.7.2, one row a request at
    v0.7.3: `v1_opt_in.LOGITS_ROWS_ERAS`; at TP > 1 all-gathered under VLLM_USE_V1, logits_processor.py:47-48 at
    v0.6.5, :49-51 at v0.7.0, :55-57 at v0.7.3: the slice, the gathered output and its reshaped copy,
    distributed/parallel_state.py:408-418 at v0.6.5, device_communicators/base_device_communicator.py:38-62 at v0.7.3),
    the larger. No opt-in start printed its peak: assumed, ± the fit's held-out
    error, the forward itself at least, 2 GiB for a fused MoE's (counted in part only)."""
    model = inputs.model  # a pooling launch is refused before v0.10.2 (refuse_unmodelled); V1 asserts none then
    if model is None:
        return _model_unknown(LABEL)
    tokens, seqs, why = batch_limits(inputs)
    moe = model.moe is not None and MlpKind.MOE in model.layer_mlp
    counted = (fused_moe_forward_bytes(model, inputs.layout, inputs.version, tokens) if moe
               else held_forward_bytes(model, inputs.layout, tokens))  # fmt: skip
    features = activation_features(inputs, model)
    fit_forward = _fit_forward(fit, features) or 0
    forward = max(fit_forward, counted)
    rows = tokens if LOGITS_ROWS_ERAS.at(inputs.version) == "tokens" else seqs
    logits = rows * model.vocab_size * model.dtype_bytes
    tp = inputs.layout.tp
    logits_side = (2 * logits + logits // tp if tp > 1 else logits) + rows * model.hidden_size * model.dtype_bytes
    error = max(fit.error_bytes if fit else 0, forward, MOE_FORWARD_ERROR if moe else 0)
    return assumed_estimate(
        Term.ACTIVATION, LABEL, max(forward, logits_side), error,
        f"vLLM {inputs.version.label}'s opt-in V1 (v1_opt_in.py), no sampler profiled: the forward at {tokens:,} "
        f"tokens ({why}; {gib(forward)}: the V1 fit's forward part or the forward as counted, the larger) or "
        f"the model-dtype logits of {rows:,} rows × {model.vocab_size:,} beside their hidden states "
        f"({gib(logits_side)}; {LOGITS_ROWS_ERAS.era(inputs.version).source}), the larger; ± "
        f"{gib(error)} assumed (no opt-in start printed its peak: the fit's error, the forward's own size "
        "or a fused MoE's 2 GiB, the largest)",
    )  # fmt: skip


def _v2_activation(inputs: CalibrationInputs, v1: TermEstimate, fit: LinearTerm | None) -> TermEstimate | None:
    """V2's profiled peak as its code counts it (`v2_profile.py`): the forward alone on a stage before the last, the
    larger of the forward and V2's dummy sampler (the model-dtype logits, and their float32 copy before v0.26.0; from
    v0.33.0 its warm-up pass's float32 pipeline on the serving path, the other path's count kept in the interval
    where the launch does not state it) on the last. One figure is charged to every stage's budget, so the largest, the last stage's: the pool is the least
    of the stages' blocks.
    No V2 start in the corpus prints its activation peak, so it is a stated assumption whose interval keeps the V1
    runner's form (`v1`), or the era's fit's held-out error where that is wider (`v1`'s own where no fit reaches: the
    2 GiB a stage guess assumed is for a profile not modelled, and V2's stages are). None where V2 is not counted
    (`v2_counted`) or LoRA's buffers join the profile."""
    model = inputs.model
    if model is None or not v2_counted(inputs) or lora(inputs):
        return None
    tokens, seqs, _ = batch_limits(inputs)
    copy = V2_LOGITS_FLOAT32_COPY.era(inputs.version)
    peaks, warmup = launch_stage_peaks(inputs, model)
    logits = ("and their float32 copy: the release copies them whatever the states" if copy.value
              else "no float32 copy: its dummy batch asks for no processing")  # fmt: skip
    if warmup is not None:  # v0.33.0 on: the warm-up pass's float32 pipeline (v2_profile.py)
        logits = (f"and, in the warm-up pass, a float32 copy and {warmup.path} top-k/top-p's "
                  f"({gib(warmup.bytes)} beside them: {warmup.why})")  # fmt: skip
    stages = (f"the forward at {tokens:,} tokens (its MLP transient, residual and normed input) on the stages before the last "
              f"({gib(peaks.before_last)}), the larger of it and the sampler on the last"
              if inputs.layout.pp > 1 else f"the larger of the forward at {tokens:,} tokens (its MLP transient, residual and normed input) and the sampler")  # fmt: skip
    path_gap = warmup.gap if warmup is not None and peaks.last > peaks.before_last else 0  # the other path's count
    return assumed_estimate(
        Term.ACTIVATION, LABEL, peaks.last,
        max(fit.error_bytes if fit else v1.error_bytes, abs(v1.bytes - peaks.last), path_gap),
        f"vLLM {inputs.version.label}'s V2 model runner, counted from its code (v2_profile.py): {stages} (the "
        f"model-dtype logits of {seqs:,} seqs × {model.vocab_size:,} {logits}, {copy.source}); ± the V1 runner's "
        f"form ({gib(v1.bytes)}) or its fit's error, the larger: no V2 start printed its peak",
    )  # fmt: skip


def plan_features(inputs: CalibrationInputs) -> tuple[float, ...] | None:
    """The activation fit's feature values for a plan (a forward-bound V0 launch's too: `_forward_floor` sets its
    peak); None for a multimodal model, pipeline stages or LoRA."""
    if inputs.model is None or _encoder_runs(inputs) or inputs.layout.pp > 1 or lora(inputs):
        return None
    return activation_features(inputs, inputs.model)


def fit_features(key: str, inputs: CalibrationInputs) -> tuple[float, ...] | None:
    """The launch's row in activation fit `key`, or None where its log measures the forward rather than the sampler
    the fits are of. Each era's profile peaks at the larger of its forward and its sampler (`_forward_floor`), but a
    fit sums its features: one forward-bound log (Qwen2.5-3B at 2,048 tokens and 1 seq, v0.10.2 on an RTX 4090: 0.17
    and 0.60 GiB printed, its MLP transient 0.13) made V1's fit charge 1.84 × the MLP transient beside 7.0 copies of
    the logits to every sampler-bound launch (llm-d-planner's Qwen3-32B, 1.25 GiB of MLP transient: 6.36 GiB charged,
    5.64 printed). V0's forward-bound and fused-MoE logs are left out alike (`v0_profile.py`), and so is a V1 log whose
    profile is known to take FlashInfer's path (the launch's VLLM_USE_FLASHINFER_SAMPLER=1, the official image at
    v0.9.0-v0.11.0: `sampler_path.py`): V1's fit counts the native path's copies (techbromoho's v0.10.2 image starts
    printed 0.52-0.54 GiB eager or warm at 256 seqs × 151,936, FlashInfer's 3.5 copies, where the fit counts 9.5)."""
    if runs_opt_in_v1(inputs):
        return None  # the opt-in V1 profiles no sampler: its peak is counted, not a row of V1's fit
    if key != activation_key(inputs) or pooling_runner(inputs.settings.flags, inputs.model, inputs.version):
        return None  # another era's, or a pooling runner's (no sampler: pooling.py)
    if key == "vllm.activation.v0" and (v0_forward_bound(inputs) or v0_moe_forward(inputs)):
        return None  # its log measures the forward (or a MoE's, counted in part only), not the sampler the fit is of
    if key != "vllm.activation.v0" and forward_bound(inputs):
        return None
    if key == "vllm.activation.v1" and inputs.model is not None and _profiled_path(inputs, inputs.model).path == "flashinfer":
        return None  # FlashInfer's copies, which a plan takes off the fit (`_sampler_path_error`), not the native ones it counts
    return plan_features(inputs)


def forward_bound(inputs: CalibrationInputs) -> bool:
    """Whether a V1 launch's profile peaks in its forward by the code's counts: its MLP transient at
    `max_num_batched_tokens` above the most the sampler holds on any path, the sort-based native one's copies of seqs ×
    vocab × 4 B (`v0_profile.sort_sampler_copies`: V1's `apply_top_k_top_p` sorts the float32 logits as V0's did,
    v1/sample/ops/topk_topp_sampler.py:126-166 at v0.10.2) beside the forward's hidden states. Every later path
    (FlashInfer's, v0.17.0's Triton mask, V2's) holds fewer, so a launch bound so is forward-bound on each."""
    model = inputs.model
    if model is None or plan_features(inputs) is None:
        return False
    tokens, seqs, _ = batch_limits(inputs)
    sampler = sort_sampler_copies(seqs) * logits_gib(seqs, model) + tokens * model.hidden_size * model.dtype_bytes / GIB
    return mlp_transient_gib(model, inputs.layout, tokens) > sampler


def _forward_floor(
    activation: TermEstimate | None, inputs: CalibrationInputs, tokens: int
) -> TermEstimate | None:
    """The fitted peak, or the forward's own MLP transient where that is larger. `profile_run` runs the forward over
    `max_num_batched_tokens` before the sampler (V0 model_runner.profile_run, V1 gpu_model_runner.profile_run →
    _dummy_run, every release), and the MLP holds its gate-up output and the activation's output at once (tokens ×
    (3 × intermediate ÷ TP + hidden) × 2 B, `mlp_transient_gib`), beside the residual and the normed input the decoder
    layer holds across it (`HELD_HIDDEN` × tokens × hidden × dtype: `hidden_states, residual =
    self.post_attention_layernorm(...)`, then `hidden_states = self.mlp(hidden_states)`, qwen2.py:248-250 and
    `Qwen2MLP.forward` keeping `gate_up` to its return, :93-97 at v0.8.5.post1; V0's and V2's counts hold them too,
    v0_profile.py, v2_profile.py); the torch peak is the larger of that and the sampler's copies, never less than
    either. The fits' logs (8,192 tokens with 1,024 seqs on H100, 2,048 with 256) are sampler-bound, so their MLP
    coefficient is near 0; a launch of many tokens and few seqs is forward-bound (Qwen3-14B AWQ at 8,192 tokens and 8
    seqs on an L40S, vLLM 0.28.0: 0.88 GiB of MLP transient where the fit gives 0.44). Qwen2.5-72B-AWQ on an L20 at
    v0.8.5.post1 (search-index id 55204797650), one seq: 678 blocks of 5 MiB at 4,096 tokens and 770 at 2,048, so the
    forward holds 0.444-0.454 GiB per 2,048 tokens, 233,000-238,100 B a token; the MLP alone is (3 × 29,696 + 8,192) ×
    2 = 194,560 B, with the two held rows 227,328 B."""
    model = inputs.model
    if activation is None or model is None:
        return activation
    v0 = v0_forward_bytes(inputs, tokens)
    floor = v0 if v0 is not None else held_forward_bytes(model, inputs.layout, tokens)
    if floor <= activation.bytes:
        return activation
    return activation.model_copy(update={
        "bytes": floor, "basis": f"{activation.basis}; the forward's MLP transient at {tokens:,} tokens, larger than the fit",
    })  # fmt: skip


def _unfitted_activation(
    inputs: CalibrationInputs, fit: LinearTerm | None, key: str, label: str, tokens: int, seqs: int
) -> TermEstimate:
    """The peak where no fit gives it. A multimodal model (or pipeline stages, LoRA) takes the text model's fit, said
    to be a guess; an era whose logs are too few to fit takes the sampler as vLLM's code counts it (v0.17+ on the
    native path, `sampler_peak.py`) or the forward's MLP transient, the larger, ± the 2 GiB the assumption had; else
    2 GiB, said why."""
    model = inputs.model
    if fit is not None and model is not None:
        fitted = max(fit.predict(activation_features(inputs, model)), 0)
        guess, path = _guess_on_path(inputs, fit, fitted, tokens, seqs)
        encoder = encoder_profile(inputs) if _encoder_runs(inputs) else None
        if encoder is not None and inputs.layout.pp == 1 and not lora(inputs):
            return assumed_estimate(Term.ACTIVATION, label, encoder.peak(guess), max(fitted, 2 * GIB),
                                    f"the text model's fit ({gib(guess)}{path}) plus {encoder.peak_words(guess)}")  # fmt: skip
        return assumed_estimate(Term.ACTIVATION, label, guess, max(fitted, 2 * GIB),
                                f"the text model's fit{path}: {_unfitted_because(inputs)}")  # fmt: skip
    counted = _counted_sampler(inputs, tokens, seqs)
    if counted is not None and model is not None:
        forward = held_forward_bytes(model, inputs.layout, tokens)
        encoder = encoder_profile(inputs) if _encoder_runs(inputs) else None
        text, copies = max(counted, forward), sampler_copies(model, inputs.version, seqs)
        kept = f"; plus {encoder.peak_words(text)}" if encoder else ""
        return assumed_estimate(
            Term.ACTIVATION, label, encoder.peak(text) if encoder else text, 2 * GIB,
            f"{key} has too few logs to fit: the sampler's {copies:g} copies of {seqs:,} seqs × "
            f"{model.vocab_size:,} × 4 B and the forward's output, as vLLM's code counts them (sampler_peak.py), or the "
            f"forward's MLP transient at {tokens:,} tokens, the larger{kept}; ± 2 GiB assumed (no log of another "
            "source measures the count's error)",
        )  # fmt: skip
    if model is None:
        return _model_unknown(label)
    return assumed_estimate(Term.ACTIVATION, label, 2 * GIB, 2 * GIB, f"2 GiB assumed: {key} has too few logs to fit")


def _guess_on_path(inputs: CalibrationInputs, fit: LinearTerm, guess: int, tokens: int, seqs: int) -> tuple[int, str]:
    """The text model's fitted guess (a multimodal model's, pipeline stages', LoRA's) on the sampler's profiled path,
    and in words how it was moved. The profile samples the text model's last hidden states whatever runs beside it
    (`profile_run` → `_dummy_sampler_run`, v1/worker/gpu_model_runner.py:2981-3036 at v0.10.2, :3325-3397 at v0.11.0;
    LoRA's dummy adapters join `_dummy_run`'s forward only, :2757 and lora_model_runner_mixin.py:91-167 at v0.10.2), so where
    that path is FlashInfer's (`sampler_path.py`: the official image at v0.9.0 – v0.11.0) the fit's logits copies
    beyond FlashInfer's (`flashinfer_copies.py`) come off as `_sampler_path_error` takes them off a fitted peak, never below the forward's MLP
    transient (`held_forward_bytes`); the guess's own error (the fitted figure or 2 GiB) keeps the native path. The
    path is `_sampler_path_error`'s (`profiled_sampler_path`, a V2 launch's included): V2 runs from v0.22.0, whose
    fit counts fewer copies than FlashInfer keeps, so nothing comes off there."""
    model = inputs.model
    if model is None:
        return guess, ""
    path = _profiled_path(inputs, model)
    if path.path != "flashinfer":
        return guess, ""
    kept, extra = _copies_beyond_flashinfer(inputs, model, fit, seqs)
    if not extra:  # the fit counts no more than FlashInfer keeps (v17's 3.47 copies): nothing to take off
        return guess, ""
    lowered = min(guess, max(guess - extra, held_forward_bytes(model, inputs.layout, tokens)))
    return lowered, (f", FlashInfer's top-k/top-p sampler ({path.why}): its logits copies beyond FlashInfer's {kept:g} "
                     f"(flashinfer_copies.py) taken off, no lower than the forward's MLP transient at {tokens:,} tokens")  # fmt: skip


def _model_unknown(label: str) -> TermEstimate:
    """The peak when the model's config is not known: 2 GiB ± 2 GiB, assumed and said so."""
    return assumed_estimate(Term.ACTIVATION, label, 2 * GIB, 2 * GIB, "2 GiB assumed: the model's config is not known")


def _fit_forward(fit: LinearTerm | None, features: tuple[float, ...]) -> int | None:
    """The V1 fit's forward part: its prediction with the sampler's logits feature at 0, never below 0; None without
    a V1 fit (V0's features are two, the V1 fit's four)."""
    if fit is None or len(features) != 4:
        return None
    return max(fit.predict((features[0], 0.0, *features[2:])), 0)


def _unfitted_because(inputs: CalibrationInputs) -> str:
    """Why the text model's fit is only a guess here, in words. A multimodal model's `profile_run` runs the encoder on
    a dummy batch of the encoder budget's items first and keeps their outputs through the text model's forward and
    sampler, which are a text model's (v0.11.0 v1/worker/gpu_model_runner.py:3325-3403, 3183-3218; v0.11.0-v0.12.0
    expand each output to the budget's rows, v0.10.2 and v0.13.0+ keep it as the encoder returned it)."""
    reasons = []
    if _encoder_runs(inputs):
        counted = ", ".join(COUNTED_FAMILIES)
        reasons.append("a multimodal model's profile runs the text model's forward and sampler after its encoder, "
                       "whose outputs it keeps through them (not counted: the items' tokens are the processor's; "
                       f"counted for {counted} only, encoder_profile.py)")  # fmt: skip
    if inputs.layout.pp > 1:
        reasons.append("pipeline stages (the sampler runs on the last) are not modelled")
    if lora(inputs):
        reasons.append("LoRA buffers are not modelled")
    return "; ".join(reasons) or "not fitted for this launch"


def _counted_sampler(inputs: CalibrationInputs, tokens: int, seqs: int) -> int | None:
    """The sampler's peak as vLLM's code counts it (`sampler_peak.py`, and the rejection sampler's dummy run beside
    it under speculative decoding, `rejection_sampler.py`); None where the path is not counted, and on
    pipeline stages (the sampler runs on the last only) or with LoRA (its buffers join the profile)."""
    if inputs.model is None or inputs.layout.pp > 1 or lora(inputs):
        return None
    counted = counted_sampler_bytes(inputs.model, inputs.layout, inputs.version, inputs.gpu_name, tokens, seqs,
                                    inputs.settings.flags, inputs.settings.image, inputs.settings)  # fmt: skip
    return None if counted is None else counted + _rejection_bytes(inputs, seqs)


def _rejection_bytes(inputs: CalibrationInputs, seqs: int) -> int:
    """The rejection sampler's dummy run beside the sampler where a speculative method is set and its release was read
    (`rejection_sampler.py`); 0 elsewhere."""
    if inputs.model is None:
        return 0
    speculative = setup(inputs.settings).spec_method is not None
    return rejection_extra_bytes(inputs.model, inputs.version, seqs, speculative)


def _sampler_floor(activation: TermEstimate, inputs: CalibrationInputs, tokens: int, seqs: int) -> TermEstimate:
    """The peak as vLLM's code counts it where its sampler is counted (`sampler_peak.py`: v0.17.0 on, the native
    path): the sampler's copies or the forward's MLP transient (`held_forward_bytes`), the larger, plus what a counted
    encoder profile keeps through them (`encoder_profile.py`), in place of the fit's figure, whose error it keeps. The
    count is the code's, so it needs no log of the launch's kind: llm-d-planner's v0.19.0 H100 sweep (1,024 seqs,
    8,192 tokens) printed 1.89 GiB for Llama-3.1-8B (1.85 counted), 2.21 for Qwen2.5-7B (2.17), 2.29 for
    Qwen2.5-72B at TP 2 (2.25), 1.21 for Mixtral-8x7B at TP 2 (1.17), 2.03 for Mistral-Small-3.1-24B (1.98 with its
    encoder's kept outputs); the v17 fit, that sweep left out, has six logs for its four features and charged 3.02
    and 4.21. The count also lifts a fit that falls short (Gemma-3's 262,208 at 1,024 seqs: 3.72 GiB counted, the v17
    fit's text form 3.53; its v0.19.0 log printed 3.99). Where no count is read (`_counted_sampler` None) the fit's
    figure stays."""
    counted = _counted_sampler(inputs, tokens, seqs)
    model = inputs.model
    if counted is None or model is None:
        return activation
    encoder = encoder_profile(inputs) if _encoder_runs(inputs) else None
    forward = held_forward_bytes(model, inputs.layout, tokens)
    text = max(counted, forward)
    peak = encoder.peak(text) if encoder is not None else text
    if peak == activation.bytes:
        return activation
    which = "the sampler" if counted >= forward else f"the forward's MLP transient at {tokens:,} tokens"
    rejection = ", with the rejection sampler's dummy run: rejection_sampler.py" if _rejection_bytes(inputs, seqs) else ""
    kept = f", plus {encoder.peak_words(text)}" if encoder is not None else ""
    return activation.model_copy(update={
        "bytes": peak,
        "basis": f"{activation.basis}; counted from vLLM's code instead ({gib(peak)}): {which} as it counts them "
                 f"(sampler_peak.py{rejection}){kept}, the fit's {gib(activation.bytes)} kept for its error only",
    })  # fmt: skip


def _sampler_path_error(
    activation: TermEstimate | None, inputs: CalibrationInputs, fit: LinearTerm | None, seqs: int
) -> TermEstimate | None:
    """The fitted peak for the sampler's path (`sampler_path.py`). The fits count the native path's copies of the
    logits (their logs are v0.8-v0.19 starts on it); FlashInfer's keeps 3.5 of them in a 16-bit model from v0.9.0
    (`flashinfer_copies.py`; vLLM 0.10.1.1, Qwen2-7B at 256 seqs: 0.50-0.62 GiB beside weights and KV on FlashInfer,
    1.56 on the native path). Where the install decides the path, the interval is widened by the copies beyond
    FlashInfer's; where the release and the GPU take FlashInfer's,
    the peak is lowered by them and the interval keeps them, for a start whose FlashInfer build fails or that sets
    VLLM_USE_FLASHINFER_SAMPLER=0. The path is the profile's (`profiled_sampler_path`): from v0.21.0 the dummy
    sampler warms the native path after FlashInfer's, so the peak keeps the native copies. `_forward_floor` applies
    after it."""
    if activation is None or fit is None or inputs.model is None or activation.source != "calibrated":
        return activation
    path, why, warms_native = _profiled_path(inputs, inputs.model)
    if path == "native":  # the native warm-up's peak, or an install the launch states (read or not): said here
        said = warms_native or inputs.settings.flashinfer is not None
        return activation.model_copy(update={"basis": f"{activation.basis}; {why}"}) if said else activation
    kept, extra = _copies_beyond_flashinfer(inputs, inputs.model, fit, seqs)
    if not extra:
        return activation
    if path == "either":
        # the install decides (V1 takes FlashInfer's sampler whenever it imports: topk_topp_sampler.py:37-70 at
        # v0.11.0; 'FlashInfer is not available. Falling back to the PyTorch-native implementation', v0.9.1 :58-62):
        # the centre keeps the native copies, and FlashInfer's path only holds fewer (flashinfer_copies.py), so the
        # copies beyond FlashInfer's join the error below the figure only (`lower_only_bytes`), the side above keeps
        # the fit's
        below = round(math.hypot(activation.error_below_bytes, extra))
        return activation.with_error(
            activation.error_bytes,
            lower_only_bytes=below - (activation.error_below_bytes - activation.lower_only_bytes),
            basis=f"{activation.basis}; FlashInfer's or the native top-k/top-p sampler, not known before the start: "
                  f"the native path's copies kept, FlashInfer's (fewer: the fit's copies beyond its {kept:g}, "
                  "flashinfer_copies.py) in the interval below the figure only",
        )  # fmt: skip
    # the copies taken off, no further than 0 bytes: not an addition (`plus`); a fallback to the native path only
    # raises the peak, so they join the error above the figure only, the side below keeps the fit's
    above = round(math.hypot(activation.error_bytes, extra))
    return activation.with_error(
        above, above - (activation.error_bytes - activation.raise_only_bytes), bytes=max(activation.bytes - extra, 0),
        basis=f"{activation.basis}; FlashInfer's top-k/top-p sampler ({why}): the fit's logits copies beyond "
              f"FlashInfer's {kept:g} (flashinfer_copies.py) taken off, kept in the interval above the figure",
    )  # fmt: skip


def _profiled_path(inputs: CalibrationInputs, model: ModelSpec) -> ProfiledPath:
    """The sampler path whose copies this launch's profile holds (`sampler_path.profiled_sampler_path`)."""
    settings = inputs.settings
    return profiled_sampler_path(inputs.version, inputs.gpu_name, model, settings.flags, settings.image, settings)


def _copies_beyond_flashinfer(inputs: CalibrationInputs, model: ModelSpec, fit: LinearTerm, seqs: int) -> tuple[float, int]:
    """(the copies of seqs × vocab × 4 B FlashInfer's path keeps in the profile, `flashinfer_copies.py`: 3.5 in a
    16-bit model from v0.9.0, 2.5 at v0.8.x, one where its sampler was not read (V0's), as assumed before; the bytes
    of the fit's logits copies beyond them, which its logits coefficient counts on the native path)."""
    copies = flashinfer_copies(inputs.version, model, activation_key(inputs) == "vllm.activation.v0")
    kept = 1.0 if copies is None else copies
    return kept, round(max(fit.coefficients[1] - kept, 0.0) * logits_gib(seqs, model) * GIB)


def activation_features(inputs: CalibrationInputs, model: ModelSpec) -> tuple[float, ...]:
    """V0's (1, logits); V1's (the dummy run's hidden states, logits, the forward's transient split into dense and MoE
    parts): no constant, since every part of V1's profiled peak grows with its batch (calibration.ACTIVATION_FEATURES)."""
    tokens, seqs, _ = batch_limits(inputs)
    logits, mlp = logits_gib(seqs, model), mlp_transient_gib(model, inputs.layout, tokens)
    if activation_key(inputs) == "vllm.activation.v0":
        return (1.0, logits)
    moe = model.moe is not None
    hidden = tokens * model.hidden_size * model.dtype_bytes / GIB
    kept = fused_moe_workspace(inputs).modelled  # charged whole (moe_workspace.with_workspace), not by this feature
    return (hidden, logits, 0.0 if moe else mlp, mlp if moe and not kept else 0.0)


def _encoder_runs(inputs: CalibrationInputs) -> bool:
    """Whether the profile runs an encoder before the text model: a multimodal model not served text-only
    (`--language-model-only` on a class read: text_only.py) nor profiled without it (`--skip-mm-profiling`:
    skip_mm_profiling.py), whose peak is then a text model's."""
    return encoder_profiled(inputs.model, inputs.settings, inputs.version, inputs.gpu_name)
