"""What a plan of one vLLM launch charges for torch.compile's compile, by the cache's state (said warm, said cold,
not said), worded once for the plan's start note and for `explain`'s note of a log's measured state
(docs/engines/vllm.md §2.6).

The charge follows the launch's runner and release (§9 "Session 69", "Session 70"): where V2 runs, the figure kept
beside its profile stands for the cold compile, charged unsaid and said cold, not said warm (`v2_graphs.with_v2_beside`,
WARM_CACHE_UNCHARGED); on the V1 runner from v0.11.1 the compile's copy of the embedding table is the profile's peak
said cold, the interval's low end unsaid, nothing said warm (`compile_benchmark.with_v1_compile_copy`); on the V1 runner
before v0.11.1 vLLM sets no combo-kernel benchmark (`compile_benchmark.COMBO_DEFAULT`), so nothing is charged in any
state; a launch that compiles nothing (`compile_cache.compiles`: V0, eager, -O0, …) is charged nothing. Session 71: `explain`'s notes had
kept 'kvtop's plan sits between a warm and a cold start' after session 70 made each state's plan a stated one; they now
say what the plan of the log's own launch charges said as the log shows it and not said, in the plan's words.
"""

from __future__ import annotations

import re
from enum import Enum

from kvtop.domain.engine_log import EngineLog
from kvtop.domain.engines.base import CompileCacheState, EngineInputs, MeasuredInputs
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.batching import engine_era
from kvtop.domain.engines.vllm.compile_benchmark import COMBO_DEFAULT, V1Copy, v1_copy_read
from kvtop.domain.engines.vllm.compile_cache import (
    COLD_COMPILE_CHARGE,
    COLD_SAID_V1,
    COLD_SAID_V2,
    DISABLED_LOGGED,
    DISABLED_STATE,
    NO_COPY_V1,
    UNSAID_V1,
    UNSAID_V2,
    WARM_SAID_V1,
    WARM_SAID_V2,
    cache_disabled,
    compile_cache_state,
    compiles,
    said_state,
    unread_warm_note,
)
from kvtop.domain.engines.vllm.log_records import VllmRankLog
from kvtop.domain.engines.vllm.runner_eras import runs_v2
from kvtop.domain.errors import InputError
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import ModelSpec
from kvtop.domain.start_cache import SaidCacheState, StartCacheCharge


class CompileCharge(Enum):
    """What the launch's runner and release charge for the compile (the module docstring)."""

    V2 = "V2 runner"  # the figure kept beside V2's profile
    V1 = "V1 runner"  # the compile's copy of the embedding table, where the compile benchmarks combo kernels
    V1_NO_COPY = "V1 runner before v0.11.1"  # nothing: the release sets no combo-kernel benchmark
    V1_NOT_BENCHMARKED = "V1 runner, no combo-kernel benchmark"  # nothing: the launch's inductor config sets none
    V1_NO_LOOKUP = "V1 runner, no copy read"  # nothing: a multimodal model's graph holds no lookup; LoRA's not read


# why nothing is charged where the release would set the benchmark, but the launch leaves it off or no copy is read
NOT_BENCHMARKED_V1 = (
    "on vLLM's V1 runner the plan charges nothing for the compile, said or not: the launch's inductor_compile_config "
    "names combo_kernels or benchmark_combo_kernel without both on (or Inductor is deterministic), so the compile "
    "benchmarks no combo kernels (compile_benchmark.py benchmarks_combo_kernels) and kvtop reads no part of a cold "
    "compile, whose excess is not modelled")  # fmt: skip
NO_LOOKUP_V1 = (
    "on vLLM's V1 runner the plan charges nothing for the compile, said or not: a multimodal model's compiled graph "
    "holds no embedding lookup, and with LoRA the embedding's wrapper is not read (compile_benchmark.py "
    "v1_copy_bytes), so kvtop reads no part of a cold compile, whose excess is not modelled")  # fmt: skip


def _nothing(words: str) -> tuple[tuple[tuple[SaidCacheState, str], ...], str]:
    """The words of a kind that charges nothing in any state: said cold, said warm and unsaid alike."""
    return ((
        (SaidCacheState.COLD, f"cold, as said (--compile-cache cold): {words}"),
        (SaidCacheState.OVERRIDDEN_COLD, DISABLED_STATE),
        (SaidCacheState.WARM_UNCHARGED, f"warm, as said (--compile-cache warm): {words}")), words)  # fmt: skip


# each kind's words for each said state (`StartCacheCharge.state_words`) and for none said (`unsaid_words`)
_WORDS: dict[CompileCharge, tuple[tuple[tuple[SaidCacheState, str], ...], str]] = {
    CompileCharge.V2: ((
        (SaidCacheState.COLD, COLD_SAID_V2), (SaidCacheState.OVERRIDDEN_COLD, DISABLED_STATE),
        (SaidCacheState.WARM_UNCHARGED, WARM_SAID_V2)), UNSAID_V2),
    CompileCharge.V1: ((
        (SaidCacheState.COLD, COLD_SAID_V1), (SaidCacheState.OVERRIDDEN_COLD, DISABLED_STATE),
        (SaidCacheState.WARM_UNCHARGED, WARM_SAID_V1)), UNSAID_V1),
    CompileCharge.V1_NO_COPY: _nothing(NO_COPY_V1),
    CompileCharge.V1_NOT_BENCHMARKED: _nothing(NOT_BENCHMARKED_V1),
    CompileCharge.V1_NO_LOOKUP: _nothing(NO_LOOKUP_V1),
}  # fmt: skip


def charge_kind(
    version: ResolvedVersion, model: ModelSpec, settings: LaunchSettings, *, config_read: bool = True
) -> CompileCharge:
    """The runner the launch runs (`runner_eras.runs_v2`) and, on V1, whether the plan's activation term carries the
    compile's copy of the table, by the one predicate `compile_benchmark.v1_copy_bytes` reads too
    (`compile_benchmark.v1_copy_read`): the compile benchmarks combo kernels (`combo_benchmarked`: the release's
    default and the launch's inductor_compile_config; not `config_read`, a log's printed config, Python's repr: the
    release's default), and the graph holds a lookup kvtop reads (not a multimodal model's, not LoRA)."""
    read = v1_copy_read(version, model, settings, config_read=config_read)
    if read is V1Copy.NOT_BENCHMARKED:
        return CompileCharge.V1_NOT_BENCHMARKED if COMBO_DEFAULT.at(version) else CompileCharge.V1_NO_COPY
    return {V1Copy.V2: CompileCharge.V2, V1Copy.NO_LOOKUP: CompileCharge.V1_NO_LOOKUP}.get(read, CompileCharge.V1)


def launch_charge(
    version: ResolvedVersion, model: ModelSpec, settings: LaunchSettings, *, config_read: bool = True
) -> StartCacheCharge:
    """The corpus's cold-less-warm pairs (`COLD_COMPILE_CHARGE`) with the words of what this launch's plan charges in
    each state (`charge_kind`), for a launch that compiles (`compile_cache.compiles`, or a log's compile lines)."""
    return charge_of(charge_kind(version, model, settings, config_read=config_read))


def charge_of(kind: CompileCharge) -> StartCacheCharge:
    """`COLD_COMPILE_CHARGE` with the words of what a plan of this kind charges in each state (`_WORDS`)."""
    state_words, unsaid = _WORDS[kind]
    return COLD_COMPILE_CHARGE.model_copy(update={"state_words": state_words, "unsaid_words": unsaid})


def given(settings: LaunchSettings, measured: MeasuredInputs | None = None) -> str | None:
    """Why a plan of this launch charges nothing for the compile in any state where a figure is given, or None: the
    KV memory, the pool or the non-KV figure (the log's or the operator's figure holds whatever the start paid). The
    one check of the plan's start note (`cold_compile_charge`) and `explain`'s note of the same launch (`plan_words`)."""
    if settings.kv_cache_memory_bytes is not None or (measured is not None and measured.available_kv_bytes is not None):
        return "its KV memory is given"
    if settings.num_gpu_blocks_override is not None:
        return "its pool is given (--num-gpu-blocks-override)"
    if measured is not None and measured.non_kv_bytes is not None:
        return "its non-KV memory is given"
    return None


def cold_compile_charge(inputs: EngineInputs) -> StartCacheCharge | None:
    """What a cold compile may charge beyond a compiled plan whose budget rests on the profile's estimate
    (`launch_charge`, its state as said: `said_state`); None where a figure is given that holds the compile's charge (
    `given`: the KV memory, the non-KV figure or the pool), the launch does not compile, or the operator says the
    cache is warm where V2 runs and the launch reads it (`plan --compile-cache warm`: its plan charges no compile)."""
    s, meas = inputs.settings, inputs.measured
    # said warm where V2 runs: the figure kept beside its profile, the compile's, is not charged (v2_graphs.py
    # WARM_CACHE_UNCHARGED), so the plan is a warm start's, not one between the two
    said_warm_read = meas.compile_cache == "warm" and unread_warm_note(inputs) is None
    warm = said_warm_read and runs_v2(inputs.version, inputs.model, s)
    if warm or given(s, meas) is not None or not compiles(inputs.version, inputs.gpu_name, s):
        return None
    return launch_charge(inputs.version, inputs.model, s).model_copy(update={"state": said_state(inputs)})


# what a log's compile lines earn in `explain` (`compile_cache_note`), their figures the plan's (`COLD_COMPILE_CHARGE`:
# all the pairs), then what kvtop's plan of the log's launch charges said as the log shows it
_PAIRS = (f"{COLD_COMPILE_CHARGE.spread()} on {COLD_COMPILE_CHARGE.pairs} pairs of one launch in kvtop's corpus, "
          f"median {COLD_COMPILE_CHARGE.median()}; {COLD_COMPILE_CHARGE.source}")
WARM_COMPILE_CACHE = (
    "torch.compile's cache: measured warm (the log's 'Directly load …' line): the profile ran no Inductor compile or "
    f"autotuning, so this start charged less than a cold one ({_PAIRS})"
)
COLD_COMPILE = (
    "torch.compile's cache: measured cold, this start compiled (the log's 'Compiling a graph for …' line): Inductor's "
    "compile and Triton's autotuning ran inside the profile, which can charge more than a warm start of the same "
    f"launch ({_PAIRS}), or nothing where Inductor's own cache already held the kernels"
)
# a compile line in a log of a V0 start (v0.6.x-v0.7.x, or a V1 release's V0 fallback: `batching.engine_era`), which
# kvtop plans uncompiled (`compile_cache.compiles`)
V0_PLAN = ("kvtop plans this launch on vLLM's V0 engine, which it reads as compiling nothing, so its plan charges no "
           "compile in any state")  # fmt: skip


def plan_words(
    state: CompileCacheState, version: ResolvedVersion, model: ModelSpec, gpu_name: str | None, settings: LaunchSettings
) -> str:
    """What kvtop's plan of the log's launch charges said as the log measured it (`state`), in the plan's own words
    (`launch_charge`): 'kvtop's plan of this launch at vLLM 0.30.0, said as this start was (plan --compile-cache
    warm): the profile loads …' (not the unsaid plan's words too: the log says the state). Its lines show it compiled, so no flag is read for that (a log's printed compilation config is
    Python's repr, no JSON: `compiles` would refuse it); V0 is planned uncompiled (`V0_PLAN`); a launch whose KV
    memory or pool is given (`given`, the plan's own check, so the note never says a charge the plan's start note does
    not make) says nothing is charged, and why. A measured warm where the launch turns the cache off is worded as the
    plan words that said warm (`DISABLED_STATE`)."""
    if engine_era(version, gpu_name, settings.flags) != "v1":
        return V0_PLAN
    why = given(settings)
    if why is not None:  # the plan's own check (`cold_compile_charge`): it makes no start note
        return f"kvtop's plan of this launch at vLLM {version.label} charges nothing for the compile, said or not: {why}"
    said = SaidCacheState.COLD if state == "cold" else SaidCacheState.WARM_UNCHARGED
    if said is SaidCacheState.WARM_UNCHARGED and cache_disabled(settings):
        said = SaidCacheState.OVERRIDDEN_COLD
    try:
        charge = launch_charge(version, model, settings)
    except InputError:  # the log's printed compilation config, Python's repr: the release's combo-kernel default
        charge = launch_charge(version, model, settings, config_read=False)
    words = charge.model_copy(update={"state": said}).said()
    # the plan's words for a state an operator said ('cold, as said (--compile-cache cold): …'): here the log measured
    # it and nobody said it, so the flag names the plan that says it (R2 D7)
    stated = _SAID_STATE.match(words)
    said_as = f" (plan {stated.group(1)})" if stated else ""
    words = words[stated.end():] if stated else words
    # one note: the log measured the state, so the plan said as it is the one this start compares with (the unsaid
    # plan's words after it read as a second, contradicting note: session 72's operator pass)
    return f"kvtop's plan of this launch at vLLM {version.label}, said as this start was{said_as}: {words}"


_SAID_STATE = re.compile(r"(?:cold|warm), as said \((--compile-cache (?:cold|warm))\): ")


def compile_cache_note(
    log: EngineLog, version: ResolvedVersion, model: ModelSpec, gpu_name: str | None, settings: LaunchSettings
) -> str | None:
    """The note a log's compile lines earn (`WARM_COMPILE_CACHE`, `COLD_COMPILE`, then `plan_words` for the log's
    launch), with `DISABLED_LOGGED` where its line says the cache is off; None where no line says."""
    state = compile_cache_state(log)
    measured = None if state is None else WARM_COMPILE_CACHE if state == "warm" else COLD_COMPILE
    said = None if state is None else f"{measured}; {plan_words(state, version, model, gpu_name, settings)}"
    if not log.first(VllmRankLog, lambda r: r.compile_cache_disabled or None):
        return said
    return DISABLED_LOGGED if said is None else f"{said}; {DISABLED_LOGGED}"
