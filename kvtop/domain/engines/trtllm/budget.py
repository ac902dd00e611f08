"""TensorRT-LLM's KV budget, as docs/engines/trtllm.md states it, for both runtimes that print it.

PyTorch backend (§3, §4.1), from the memory free at the profiled peak:

    free at peak = free after weights − (activation peak + non-torch: NCCL, CUDA graphs)    = T − P + M
    budget       = free at peak × fraction        (spring 2025: the temporary pool M is not added back)
    budget       = min(budget, max_tokens × estimator cost, max_gpu_total_bytes)
    tokens       = budget // estimator cost                                             §1.1
    blocks       = ceil(tokens / tpb)   (≤ 1.1; floor later)       N = MIN over ranks(blocks) × tpb

C++ runtime of a TensorRT engine (§4.2), from the memory free once the engine is resident:

    tokens = int(fraction(float) × free / bytes per token) ;  blocks = ceil(tokens / tpb)

The pool holds N tokens at the manager's cost (§1.2: KV heads per rank rounded up, MLA one latent).
"""

from __future__ import annotations

import math

from kvtop.domain.engines.base import EngineInputs, EngineResult
from kvtop.domain.engines.budget_step import BudgetStep
from kvtop.domain.engines.trtllm.cuda_graphs import graphs_note
from kvtop.domain.engines.trtllm.eras import (
    DEFAULT_FRACTION,
    ESTIMATOR_HEAD_ERAS,
    PYTORCH_TOKENS_PER_BLOCK,
    Backend,
    Rounding,
    as_engine_fraction,
    caps_by_total_bytes,
    default_backend,
    engine_prints_tokens,
    engine_tokens_per_block,
    estimation_rule,
    profile_rule,
    rounding_rule,
)
from kvtop.domain.engines.trtllm.flags import replaced_fraction_note
from kvtop.domain.engines.trtllm.max_seq_len import max_seq_len_note
from kvtop.domain.engines.trtllm.overlap_scheduler import overlap_on, refuse_on_tensorrt
from kvtop.domain.engines.trtllm.transceiver_buffers import transceiver_note
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.kv import FP8_KV_FORMATS, KvBook
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.redact import quoted
from kvtop.domain.rounding import ceil_div
from kvtop.domain.wording import GIB

# Activation peak at max_num_tokens + NCCL + CUDA graphs beyond the CUDA context, when nothing measured it.
ESTIMATED_NON_KV_BYTES = 2 * GIB
DEFAULT_MAX_BATCH_SIZE = 2048  # BuildConfig.max_batch_size, passed on by trtllm-serve (§6)
DEFAULT_MAX_NUM_TOKENS = 8192  # BuildConfig.max_num_tokens (§6)


def launch_max_batch_size(settings: LaunchSettings) -> int:
    """The launch's max_batch_size, else BuildConfig's 2,048 (§6): the executor's requests, the profiling run's dummy
    requests and the attention op's max_num_requests."""
    return settings.max_running_requests or DEFAULT_MAX_BATCH_SIZE


def launch_max_num_tokens(settings: LaunchSettings) -> int:
    """The launch's max_num_tokens, else BuildConfig's 8,192 (§6): what the build, the profiling run and the MoE
    warm-up size against before any trtllm-build cap (`build_tokens.engine_max_num_tokens`)."""
    return settings.max_num_batched_tokens or DEFAULT_MAX_NUM_TOKENS


def executor_max_num_tokens(settings: LaunchSettings, max_seq_len: int) -> int:
    """The PyTorch backend's max_num_tokens: the launch's (else 8,192) lowered to max_batch_size × max_seq_len by
    `PyTorchModelEngine._init_max_num_tokens` ("modified from check_max_num_tokens"; every stored pyexecutor
    model_engine.py read, search-index ids 5661567389, 1034563403, 707893322, 3514536498, 69471950776, 70433821559);
    py_executor_creator hands it on as the executor's (ids 6348368652, 2399938814, 3245286861, 1083207948), so the
    profiling run's dummy requests and its forward use it (§3 step 1, §6)."""
    tokens = launch_max_num_tokens(settings)
    if max_seq_len <= 0:
        return tokens
    return min(tokens, launch_max_batch_size(settings) * max_seq_len)


def runtime(settings: LaunchSettings, version: ResolvedVersion) -> Backend:
    """`--backend` as the engine reads it ('trt' is 'tensorrt'), else the release's default."""
    backend = settings.backend
    if backend is None or backend in ("tensorrt", "trt"):
        resolved = default_backend(version) if backend is None else "tensorrt"
        if resolved == "tensorrt":
            refuse_on_tensorrt(settings, version)
        return resolved
    if backend == "pytorch":
        return "pytorch"
    if backend == "_autodeploy":
        raise UnsupportedModelError(
            "TensorRT-LLM's AutoDeploy backend sizes its cache its own way: not modelled", field="--backend"
        )
    raise InputError(
        f"no such backend {quoted(backend)} (one of pytorch, tensorrt, _autodeploy)", field="--backend"
    )


def tokens_per_block(settings: LaunchSettings, version: ResolvedVersion) -> int:
    """`kv_cache_config.tokens_per_block`, else 32 (PyTorch) or the engine build's default of the release."""
    if settings.page_size:
        return settings.page_size
    if runtime(settings, version) == "tensorrt":
        return engine_tokens_per_block(version)
    return PYTORCH_TOKENS_PER_BLOCK


def round_blocks(tokens: int, tpb: int, rounding: Rounding) -> int:
    """Blocks of the final pool (§4.1): ceil up to 1.1, floor in the later tree ('either' reads as floor)."""
    return ceil_div(tokens, tpb) if rounding == "ceil" else tokens // tpb


def estimator_bytes_per_token(
    model: ModelSpec, layout: ParallelLayout, kv: KvBook, version: ResolvedVersion
) -> int:
    """`KVCacheManager.get_cache_size_per_token` (§1.1): what the profiled budget is divided by.

    `head_dim × kv_heads // tp`, floored on the product (tp = 1 under attention DP); the spring-2025
    estimator took the head width from hidden_size. FP8 is 1 byte, NVFP4 ceil(e/2) + ceil(e/16), else 2.
    """
    layers = sum(pool.layers for pool in kv.pools if pool.name in ("full", "swa"))
    layers = max(layers, 1)
    if model.mla is not None:
        head: float = model.mla.latent_width
        factor = 1
    else:
        tp = 1 if layout.dp_attention else layout.tp
        if ESTIMATOR_HEAD_ERAS.at(version) == "hidden_size":
            head = model.hidden_size * model.num_kv_heads / model.num_attention_heads / tp
        else:
            head = model.head_dim * model.num_kv_heads // tp
        factor = 2
    if kv.kv_format == "fp4":
        elements = math.ceil(factor * layers * head)
        return ceil_div(elements, 2) + ceil_div(elements, 16)
    element = 1 if kv.kv_format in FP8_KV_FORMATS else 2
    return int(element * layers * head * factor)


def estimation_tokens(
    settings: LaunchSettings, context_length: int, tpb: int, version: ResolvedVersion
) -> int:
    """Tokens of the temporary pool the profiling run gets (§3 step 1).

    Dummy context requests of min(max_num_tokens, max_seq_len − 1) tokens until max_num_tokens (the executor's,
    `executor_max_num_tokens`) are used, each rounded up to whole blocks with one generated token (two with the
    overlap scheduler before 2026); the 2026 tree also keeps the CUDA-graph warm-up and max_batch_size blocks (an
    unset cuda_graph_config.max_batch_size is read as max_batch_size: its derived default was not read). Only the
    first `Allocated` line and the spring-2025 budget depend on it.
    """
    budget_tokens = executor_max_num_tokens(settings, context_length)
    overlap = overlap_on(settings, version)  # off by default before PR #4174 (overlap_scheduler.KEY_ERAS)
    rule = estimation_rule(version)
    extra = 1 + (1 if overlap and rule == "dummy_requests" else 0)
    length = min(budget_tokens, max(1, context_length - 1))
    blocks, remaining = 0, budget_tokens
    while remaining > 0:
        request = min(length, remaining)
        blocks += ceil_div(request + extra, tpb)
        remaining -= request
    if rule == "dummy_requests_and_graphs":
        batch = launch_max_batch_size(settings)
        graphs = min(batch, settings.cuda_graph_max_bs or batch)
        blocks = max(blocks, ceil_div(context_length + 1, tpb) + graphs - 1, batch)
    return blocks * tpb * (settings.max_beam_width or 1)


def _context_parallel(settings: LaunchSettings) -> int:
    """`--cp_size` / `--context_parallel_size` as typed (kept verbatim: kvtop does not model it)."""
    for key in ("cp_size", "context_parallel_size"):
        raw = settings.flags.get(key)
        if raw is None or isinstance(raw, bool):
            continue
        try:
            return int(str(raw).strip()[:20])
        except ValueError:
            raise InputError(f"expected a whole number, got {quoted(raw)}", field=f"--{key}") from None
    return 1


class TrtllmBudget:
    """`solve_budget`: one rank's pool from its memory; the engine MIN-reduces the tokens over every rank (§5)."""

    def solve_budget(self, inputs: EngineInputs) -> EngineResult:
        m, s, kv, version = inputs.model, inputs.settings, inputs.kv, inputs.version
        if kv.pool("state") is not None:
            raise UnsupportedModelError(
                "TensorRT-LLM's hybrid Mamba cache managers are not modelled yet",
                field="engine",
                source=m.source,
            )
        if _context_parallel(s) > 1:
            raise UnsupportedModelError(
                "TensorRT-LLM skips its KV estimation under context parallelism (--cp_size): not modelled",
                field="--cp_size",
            )
        backend = runtime(s, version)
        tpb = tokens_per_block(s, version)
        given = s.free_gpu_memory_fraction
        fraction = as_engine_fraction(given if given is not None else DEFAULT_FRACTION, version, backend)
        source = "--kv_cache_free_gpu_memory_fraction" if given is not None else "TensorRT-LLM's default 0.9"
        if fraction != (given if given is not None else DEFAULT_FRACTION):
            source += " (a C++ float)"
        manager = kv.full_bytes_per_token + kv.swa_bytes_per_token
        steps = [
            BudgetStep(
                label=inputs.gpu_total_label(),
                bytes=inputs.gpu_total_bytes,
                measured=inputs.measured.is_measured("gpu_total_bytes"),
                source=inputs.measured.estimate_source("gpu_total_bytes"),
                role="gpu_total",
            )
        ]
        notes: list[str] = [replaced] if (replaced := replaced_fraction_note(s)) else []
        if kv.pool("swa") is not None:
            notes.append(
                "sliding-window layers are sized at full length (no kv_cache_config.max_attention_window given)"
            )
        if backend == "tensorrt":
            budget, tokens, reserve = self._engine_runtime(inputs, fraction, manager, steps, notes)
            rounding: Rounding = "ceil"  # C++ ceilDiv in every era (§4.2)
        else:
            budget, tokens, reserve = self._pytorch(inputs, fraction, manager, tpb, steps, notes)
            # a --max_seq_len above the inferred one: lowered, or kept under TLLM_ALLOW_LONG_MAX_MODEL_LEN
            if (seq_note := max_seq_len_note(inputs.model, inputs.settings, version)) is not None:
                notes.append(seq_note)
            # a disaggregated worker's transfer buffers: named with their size, not charged (transceiver_buffers.py)
            if (buffers := transceiver_note(s, inputs.context_length, tpb, manager, fraction)) is not None:
                notes.append(buffers)
            # CUDA graphs off: what it changes and what it does not (cuda_graphs.py)
            if (graphs := graphs_note(s)) is not None:
                notes.append(graphs)
            rounding = rounding_rule(version)
            if rounding == "either":
                notes.append(f"final blocks rounded down: TensorRT-LLM {version.label} may round up (§12)")
        blocks = round_blocks(tokens, tpb, rounding) if tokens > 0 else 0
        capacity = blocks * tpb
        shown = "floor: the release's rounding is not pinned" if rounding == "either" else rounding
        steps.append(BudgetStep(label=f"blocks of {tpb} tokens ({shown})", value=blocks))
        if backend == "tensorrt" and engine_prints_tokens(version):  # ≤ v0.8 prints tokens before rounding
            capacity = tokens
        steps.append(BudgetStep(label="tokens", value=capacity, note=f"{tpb} per block"))
        fits = blocks > 0
        batch = launch_max_batch_size(s)
        return EngineResult(
            engine="trtllm",
            token_capacity=capacity if fits else 0,
            page_size=tpb,
            num_blocks=blocks,
            kv_budget_bytes=max(budget, 0),
            kv_pool_bytes=capacity * manager if fits else 0,
            max_running_requests=batch,
            max_concurrency=None,
            reserve_bytes=max(reserve, 0),
            memory_fraction=fraction,
            memory_fraction_source=source,
            fits=fits,
            shortfall_bytes=0 if fits else max(-budget, tpb * manager, 1),
            steps=tuple(steps),
            notes=tuple(notes),
        )

    @staticmethod
    def _pytorch(
        inputs: EngineInputs,
        fraction: float,
        manager: int,
        tpb: int,
        steps: list[BudgetStep],
        notes: list[str],
    ) -> tuple[int, int, int]:
        """(budget, tokens before block rounding, runtime reserve) of the profiled PyTorch backend (§3)."""
        m, s, meas, version = inputs.model, inputs.settings, inputs.measured, inputs.version
        estimator = estimator_bytes_per_token(m, inputs.layout, inputs.kv, version)
        temporary = estimation_tokens(s, inputs.context_length, tpb, version) * manager
        reserve = 0
        free_now: int | None = None  # free once the profiling executor is gone (§4.1): after the weights
        if meas.available_kv_bytes is not None:
            budget = meas.available_kv_bytes
            steps.append(meas.input_step("available KV memory (logged)", "available_kv_bytes", budget))
        else:
            before, before_step = _free_before_load(inputs, "free before weight load (min over ranks)", notes)
            steps.append(before_step)
            if meas.free_after_load_bytes is not None:
                after = meas.free_after_load_bytes
                steps.append(meas.input_step("free after weight load", "free_after_load_bytes", after))
            else:
                after = before - inputs.resident_bytes
                steps += inputs.weight_steps()
            reserve = meas.non_kv(ESTIMATED_NON_KV_BYTES)
            if meas.non_kv_bytes is None and (meas.calibrated is None or meas.calibrated.non_kv_bytes is None):
                notes.append(
                    "activation peak, NCCL and CUDA graphs of the profiling run are estimated at 2 GiB"
                )
            steps.append(
                BudgetStep(
                    label="− activation peak, NCCL, CUDA graphs (profiled)",
                    bytes=-reserve,
                    measured=meas.is_measured("non_kv_bytes"),
                    source=meas.non_kv_source(),
                )
            )
            free_now = after
            free = after - reserve
            if profile_rule(version) == "peak":
                free -= temporary
                steps.append(
                    BudgetStep(label="− temporary pool (not added back before mid-2025)", bytes=-temporary)
                )
            steps.append(BudgetStep(label="free at the profiled peak", bytes=free))
            budget = int(free * fraction)
            steps.append(_fraction_step(inputs, fraction, budget))
        steps.insert(
            1,
            BudgetStep(
                label="temporary pool of the profiling run",
                bytes=temporary,
                note=f"{temporary // manager:,} tokens" if manager else "",
            ),
        )
        if s.kv_cache_max_tokens is not None and s.kv_cache_max_tokens * estimator < budget:
            budget = s.kv_cache_max_tokens * estimator
            steps.append(
                BudgetStep(
                    label=f"capped by kv_cache_config.max_tokens {s.kv_cache_max_tokens:,}", bytes=budget
                )
            )
        if s.max_gpu_total_bytes and caps_by_total_bytes(version) and s.max_gpu_total_bytes < budget:
            budget = s.max_gpu_total_bytes
            steps.append(BudgetStep(label="capped by kv_cache_config.max_gpu_total_bytes", bytes=budget))
        tokens = budget // estimator if budget > 0 and estimator else 0
        steps.append(
            BudgetStep(
                label="max_tokens: budget ÷ estimator bytes per token",
                value=tokens,
                note=f"{estimator:,} B per token (§1.1); the pool stores {manager:,} B",
            )
        )
        # §4.1: the pool is sized again at the manager's own cost, from the memory free once the
        # profiling executor is gone; it binds where the estimator under-counts (TP above the KV heads)
        if free_now is not None and manager and estimator < manager:
            bound = int(fraction * free_now / manager)
            if bound < tokens:
                tokens = bound
                steps.append(
                    BudgetStep(
                        label="max_tokens: fraction × free after the weights ÷ pool bytes per token (§4.1)",
                        value=tokens,
                        note=f"{manager:,} B per token: the estimator's {estimator:,} B under-counts",
                    )
                )
        return budget, tokens, reserve

    @staticmethod
    def _engine_runtime(
        inputs: EngineInputs, fraction: float, manager: int, steps: list[BudgetStep], notes: list[str]
    ) -> tuple[int, int, int]:
        """(budget, tokens, reserve) of a TensorRT engine's C++ runtime (§4.2)."""
        s, meas = inputs.settings, inputs.measured
        reserve = 0
        if meas.free_after_load_bytes is not None:
            free = meas.free_after_load_bytes
            steps.append(
                meas.input_step("free once the engine and its buffers are resident", "free_after_load_bytes", free)
            )
        else:
            before, before_step = _free_before_load(inputs, "free before load", notes)
            reserve = meas.non_kv(ESTIMATED_NON_KV_BYTES)
            if meas.non_kv_bytes is None and (meas.calibrated is None or meas.calibrated.non_kv_bytes is None):
                notes.append(
                    "the engine's execution context, runtime buffers and decoder are estimated at 2 GiB"
                )
            free = before - inputs.resident_bytes - reserve
            steps.append(before_step)
            steps += inputs.weight_steps("− engine weights")
            steps.append(
                BudgetStep(
                    label="− execution context, runtime buffers, decoder",
                    bytes=-reserve,
                    measured=meas.is_measured("non_kv_bytes"),
                    source=meas.non_kv_source(),
                )
            )
        budget = int(fraction * free)
        tokens = int(fraction * free / manager) if free > 0 and manager else 0
        steps.append(_fraction_step(inputs, fraction, budget))
        if s.kv_cache_max_tokens is not None and s.kv_cache_max_tokens < tokens:
            tokens = s.kv_cache_max_tokens
            steps.append(BudgetStep(label="capped by kv_cache_config.max_tokens", value=tokens))
        steps.append(
            BudgetStep(
                label="max tokens: budget ÷ bytes per token", value=tokens, note=f"{manager:,} B per token"
            )
        )
        return budget, tokens, reserve


def _fraction_step(inputs: EngineInputs, fraction: float, budget: int) -> BudgetStep:
    """The budget's fraction step: the launch's value as its config states it (0.9), the float the engine
    multiplies noted once where they differ (a C++ float, `as_engine_fraction`: 0.899999976 for 0.9)."""
    given = inputs.settings.free_gpu_memory_fraction
    configured = given if given is not None else DEFAULT_FRACTION
    note = f"the engine multiplies it as a C++ float, {fraction:.9g}" if fraction != configured else ""
    label = f"× free_gpu_memory_fraction {configured:g}"
    return BudgetStep(label=label, bytes=budget, note=note, role="memory_fraction")


def _free_before_load(inputs: EngineInputs, label: str, notes: list[str]) -> tuple[int, BudgetStep]:
    """The free memory before the load (least over ranks) both runtimes start from, and its budget line; the note
    saying it is estimated, where it is, goes to `notes`."""
    meas = inputs.measured
    before = meas.free_before_load(inputs.gpu_total_bytes)
    note = meas.free_before_load_note()
    if note:
        notes.append(note)
    step = BudgetStep(label=label, bytes=before, measured=meas.is_measured("free_before_load_bytes"),
                      source=meas.free_before_load_source())  # fmt: skip
    return before, step
