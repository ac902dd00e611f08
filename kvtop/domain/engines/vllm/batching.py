"""vLLM's batch defaults and the batches it keeps in flight (docs/engines/vllm.md §3): sliding-window and
chunked-local groups reserve blocks for `max_concurrent_batches × max_num_batched_tokens` tokens.

`--no-enable-chunked-prefill` (EngineArgs.add_cli_args, a BooleanOptionalAction) raises the default
max_num_batched_tokens to max(max_model_len, the default) so that a whole prompt fits one batch
(EngineArgs._set_default_max_num_seqs_and_batched_tokens_args: the same rule in v0.13.0 and v0.33.0).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.engines.vllm.batching_async import async_scheduling
from kvtop.domain.engines.vllm.eras import (
    ENGINE_CONTEXT_BATCH_ERAS,
    ENGINE_CONTEXT_MULTIMODAL_FLOOR_ERAS,
    LLM_CLASS_BATCH_ERAS,
)
from kvtop.domain.engines.vllm.performance_mode import batch_factor
from kvtop.domain.engines.vllm.runner_eras import runs_v2
from kvtop.domain.engines.vllm.v0_charge import falls_back_to_v0
from kvtop.domain.engines.vllm.v1_batch_tier import top_tier_tokens, v1_large_gpu, v1_max_num_seqs
from kvtop.domain.engines.vllm.v1_opt_in import OPT_IN_MAX_NUM_SEQS, opt_in_batch, opts_into_v1
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.gpus import compute_capability
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import ModelSpec
from kvtop.domain.span import flag_switch

ENGINE_ERAS: Eras[str] = Eras((
    Era("", "v0", "the V0 engine (vllm/worker/worker.py): the default before v0.8.0"),
    Era("0.8.0", "v1", "the V1 engine (vllm/v1/worker/gpu_worker.py): the default from v0.8.0"),
))
# V0's max_num_seqs with no flag: EngineArgs.max_num_seqs = 256 (vllm/engine/arg_utils.py up to v0.7.3), kept by
# `_set_default_args_v0` ("Set max_num_seqs to 256 for VLLM_V0") in v0.8.x; V1 sets it by the GPU (below)
V0_MAX_NUM_SEQS = 256
# where the 256 is set: V0's own releases, and V1-era releases whose start runs V0 (v0.10.2 engine/arg_utils.py:1611-1613)
_V0_SEQS_SOURCE = {"v0": "EngineArgs.max_num_seqs, before v0.8.0",
                   "v1": "_set_default_args_v0 'Set max_num_seqs to 256 for VLLM_V0', the V1-era fallback"}  # fmt: skip


def engine_era(
    version: ResolvedVersion, gpu_name: str | None = None, flags: Mapping[str, object] | None = None
) -> str:
    """The engine a start runs: the release's (`ENGINE_ERAS`), or V0 where a V1-era release falls back to it on a GPU
    below compute capability 8.0 or the launch sets VLLM_USE_V1=0 (`v0_charge.falls_back_to_v0`, `flags`: the launch's
    settings flags), or V1 where a V0-era release runs it under VLLM_USE_V1=1 (`v1_opt_in.opts_into_v1`); an unnamed
    GPU counts as V1's."""
    if falls_back_to_v0(version, compute_capability(gpu_name) if gpu_name else None, flags):
        return "v0"
    if opts_into_v1(version, flags):  # VLLM_USE_V1=1 at v0.6.5–v0.7.3 (v1_opt_in.py)
        return "v1"
    return ENGINE_ERAS.at(version)


def runs_opt_in_v1(
    version: ResolvedVersion, gpu_name: str | None = None, flags: Mapping[str, object] | None = None
) -> bool:
    """Whether a V0-era release's start runs V1 (`engine_era`): VLLM_USE_V1=1 at v0.6.5–v0.7.3 (v1_opt_in.py), whose
    defaults, profile and charge are that V1's. The one predicate its callers read."""
    return ENGINE_ERAS.at(version) == "v0" and engine_era(version, gpu_name, flags) == "v1"


class BatchDefaults(NamedTuple):
    """The batch a start takes with no flag (`default_batch_limits`) and where it comes from, in words."""

    tokens: int  # max_num_batched_tokens
    seqs: int  # max_num_seqs
    why: str


def default_max_num_seqs(
    total_bytes: int,
    gpu_name: str | None = None,
    version: ResolvedVersion | None = None,
    flags: Mapping[str, object] | None = None,
) -> tuple[int, str]:
    """(max_num_seqs, why) with no --max-num-seqs: the default of the engine the start runs (`engine_era`, `flags`
    the launch's: VLLM_USE_V1=0 runs V0; V1's by release and GPU, `v1_batch_tier.v1_max_num_seqs`), read once for
    the budget's max running requests and for the profiling run's batch (`profile_run.batch_limits`)."""
    if engine_era(version or ResolvedVersion(), gpu_name, flags) == "v0":
        return V0_MAX_NUM_SEQS, f"V0's default {V0_MAX_NUM_SEQS} seqs ({_V0_SEQS_SOURCE[ENGINE_ERAS.at(version or ResolvedVersion())]})"
    if runs_opt_in_v1(version or ResolvedVersion(), gpu_name, flags):
        return OPT_IN_MAX_NUM_SEQS, f"V1 opt-in's default {OPT_IN_MAX_NUM_SEQS} seqs on every GPU (v1_opt_in.py)"
    return v1_max_num_seqs(total_bytes, gpu_name, version or ResolvedVersion())


def default_batch_limits(
    total_bytes: int,
    gpu_name: str | None = None,
    version: ResolvedVersion | None = None,
    llm_class: bool = False,
    engine_context: bool = False,
    flags: Mapping[str, object] | None = None,
) -> BatchDefaults:
    """The release's defaults (`_usage_defaults`), doubled under `--performance-mode throughput` (v0.17.0 on,
    performance_mode.py), which doubles whichever of the two the launch leaves to vLLM: callers read the flags first."""
    version = version or ResolvedVersion()
    tokens, seqs, why = _usage_defaults(total_bytes, gpu_name, version, llm_class, engine_context, flags)
    factor, scaled = batch_factor(flags, version)
    return BatchDefaults(tokens * factor, seqs * factor, f"{why}, {scaled}" if scaled else why)


def _usage_defaults(
    total_bytes: int,
    gpu_name: str | None,
    version: ResolvedVersion,
    llm_class: bool,
    engine_context: bool,
    flags: Mapping[str, object] | None,
) -> BatchDefaults:
    """(max_num_batched_tokens, max_num_seqs, why) `vllm serve` picks (`EngineArgs.get_batch_defaults`): 16384 on
    GPUs with ≥ 160 GiB in releases that have that tier, 8192 on the GPUs of V1's large row (`v1_batch_tier.
    v1_large_gpu`: an H100 or H200 by name to v0.8.4, ≥ 70 GiB at v0.8.5, ≥ 70 GiB and no A100 from v0.9.0),
    else 2048 (V1's: V0's tokens follow the context, `profile_run.batch_limits`); max_num_seqs the era's
    (`default_max_num_seqs`). An unnamed GPU of ≥ 70 GiB counts as the large row's; a unified-memory device (GB10,
    Jetson Thor) the small row's before v0.33.0, whose NVML gives vLLM no total (`v1_batch_tier.tier_memory`), and a
    GB10 from v0.33.0 too. `llm_class`: the offline `LLM(...)`
    class's tokens instead (`eras.LLM_CLASS_BATCH_ERAS`: 16384 / 8192 from the V1 engine on). `engine_context`: a
    start through `EngineArgs` → `LLMEngine` (`eras.ENGINE_CONTEXT_BATCH_ERAS`: 2048 tokens, 128 seqs from v0.9.2).
    `flags`: the launch's settings flags, which decide the engine the start runs (`engine_era`); the V1 that
    VLLM_USE_V1=1 opts into at v0.6.5–v0.7.3 takes its own (`v1_opt_in.opt_in_batch`)."""
    seqs, _ = default_max_num_seqs(total_bytes, gpu_name, version, flags)
    if runs_opt_in_v1(version, gpu_name, flags):
        tokens, why = opt_in_batch(gpu_name, version, llm_class, engine_context)
        return BatchDefaults(tokens, seqs, why)
    direct = ENGINE_CONTEXT_BATCH_ERAS.at(version) if engine_context else None
    if direct is not None:
        tokens, direct_seqs = direct
        return BatchDefaults(tokens, direct_seqs if direct_seqs is not None else seqs,
                             "the scheduler's defaults (ENGINE_CONTEXT)")  # fmt: skip
    offline = LLM_CLASS_BATCH_ERAS.at(version) if llm_class else None
    why = "the LLM class's defaults for the GPU" if offline is not None else "vllm serve's defaults for the GPU"
    largest = top_tier_tokens(total_bytes, gpu_name, version)
    if largest is not None:
        return BatchDefaults(largest, seqs, why)
    large_gpu = v1_large_gpu(total_bytes, gpu_name, version)
    if offline is not None:
        return BatchDefaults(offline[0] if large_gpu else offline[1], seqs, why)
    return BatchDefaults(8192 if large_gpu else 2048, seqs, why)


def check_entry_point(settings: LaunchSettings, version: ResolvedVersion, model: ModelSpec | None) -> None:
    """Refuse what kvtop does not model of the entry point: both `--llm-class` and `--engine-context`, and an
    ENGINE_CONTEXT start of a multimodal model in releases whose scheduler raised its unset batch to 5120."""
    if settings.llm_class and settings.engine_context:
        raise UnsupportedModelError(
            "--llm-class and --engine-context name two entry points: give one", field="--engine-context"
        )
    if (settings.engine_context and model is not None and model.multimodal
            and not settings.max_num_batched_tokens and ENGINE_CONTEXT_MULTIMODAL_FLOOR_ERAS.at(version)):
        raise UnsupportedModelError(
            f"vLLM {version.label}'s ENGINE_CONTEXT batch floor for a multimodal model (max(tokens, 5120) in "
            "SchedulerConfig) is not modelled: give --max-num-batched-tokens",
            field="--engine-context",
        )  # fmt: skip


def chunked_prefill(settings: LaunchSettings) -> bool:
    """Whether chunked prefill is on: the default for generating models, off with --no-enable-chunked-prefill."""
    return flag_switch(settings, "enable-chunked-prefill") is not False


def batched_tokens(settings: LaunchSettings, default: int, max_seqs: int, max_len: int) -> tuple[int, str]:
    """(max_num_batched_tokens, where it comes from): the flag, else the default — raised to max_model_len
    with chunked prefill off — and at most max_num_seqs × max_model_len."""
    if settings.max_num_batched_tokens:
        return settings.max_num_batched_tokens, "--max-num-batched-tokens"
    if not chunked_prefill(settings):
        return min(max(max_len, default), max_seqs * max_len), (
            "chunked prefill off: max(max_model_len, vLLM's default)"
        )
    return min(default, max_seqs * max_len), "vLLM's default"


def concurrent_batches(
    settings: LaunchSettings, pp: int, version: ResolvedVersion, model: ModelSpec
) -> tuple[int, str]:
    """(max_concurrent_batches, why) (`VllmConfig.max_concurrent_batches`): pp, or 2 with async scheduling at
    pp 1 (whether it runs: `batching_async.async_scheduling`). At pp > 1 with async scheduling the V2 model runner
    keeps pp + 1 batches and the V1 runner pp (config/vllm.py:492-502 at v0.25.0; multiproc_executor.py:446-449 at
    v0.17.1); which runner runs is the release's and the model's (`runner_eras.runs_v2`; the launch line's VLLM_USE_V2_MODEL_RUNNER
    overrides it from v0.22.0). Under the V1 runner an explicit --async-scheduling at pp > 1 is not modelled."""
    on, why = async_scheduling(settings, version, model)
    if not on:
        return pp, why
    if pp == 1:
        return 2, f"async scheduling {why}"
    if runs_v2(version, model, settings):
        return pp + 1, f"async scheduling {why}: vLLM {version.label}'s V2 model runner keeps it at pp > 1 (pp + 1)"
    if why == "--async-scheduling":
        raise UnsupportedModelError(
            "vLLM's in-flight tokens with --async-scheduling at pp > 1 under the V1 model runner are not modelled",
            field="--async-scheduling",
        )
    return pp, f"async scheduling {why}: vLLM {version.label}'s V1 model runner keeps pp batches at pp > 1"
