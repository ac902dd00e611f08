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

from enum import Enum

from kvtop.domain.engine_log import EngineLog
from kvtop.domain.engines.base import CompileCacheState, EngineInputs
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.batching import engine_era
from kvtop.domain.engines.vllm.compile_benchmark import COMBO_DEFAULT
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
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import ModelSpec
from kvtop.domain.start_cache import SaidCacheState, StartCacheCharge


class CompileCharge(Enum):
    """What the launch's runner and release charge for the compile (the module docstring)."""

    V2 = "V2 runner"  # the figure kept beside V2's profile
    V1 = "V1 runner"  # the compile's copy of the embedding table, from v0.11.1
    V1_NO_COPY = "V1 runner before v0.11.1"  # nothing: no combo-kernel benchmark


# each kind's words for each said state (`StartCacheCharge.state_words`) and for none said (`unsaid_words`)
_WORDS: dict[CompileCharge, tuple[tuple[tuple[SaidCacheState, str], ...], str]] = {
    CompileCharge.V2: ((
        (SaidCacheState.COLD, COLD_SAID_V2), (SaidCacheState.OVERRIDDEN_COLD, DISABLED_STATE),
        (SaidCacheState.WARM_UNCHARGED, WARM_SAID_V2)), UNSAID_V2),
    CompileCharge.V1: ((
        (SaidCacheState.COLD, COLD_SAID_V1), (SaidCacheState.OVERRIDDEN_COLD, DISABLED_STATE),
        (SaidCacheState.WARM_UNCHARGED, WARM_SAID_V1)), UNSAID_V1),
    CompileCharge.V1_NO_COPY: ((
        (SaidCacheState.COLD, f"cold, as said (--compile-cache cold): {NO_COPY_V1}"),
        (SaidCacheState.OVERRIDDEN_COLD, DISABLED_STATE),
        (SaidCacheState.WARM_UNCHARGED, f"warm, as said (--compile-cache warm): {NO_COPY_V1}")), NO_COPY_V1),
}  # fmt: skip


def charge_kind(version: ResolvedVersion, model: ModelSpec, settings: LaunchSettings) -> CompileCharge:
    """The runner the launch runs (`runner_eras.runs_v2`) and, on V1, whether the release benchmarks combo kernels
    (`compile_benchmark.COMBO_DEFAULT`; a launch's inductor_compile_config that names them is not read here)."""
    if runs_v2(version, model, settings):
        return CompileCharge.V2
    return CompileCharge.V1 if COMBO_DEFAULT.at(version) else CompileCharge.V1_NO_COPY


def launch_charge(version: ResolvedVersion, model: ModelSpec, settings: LaunchSettings) -> StartCacheCharge:
    """The corpus's cold-less-warm pairs (`COLD_COMPILE_CHARGE`) with the words of what this launch's plan charges in
    each state (`charge_kind`), for a launch that compiles (`compile_cache.compiles`, or a log's compile lines)."""
    state_words, unsaid = _WORDS[charge_kind(version, model, settings)]
    return COLD_COMPILE_CHARGE.model_copy(update={"state_words": state_words, "unsaid_words": unsaid})


def cold_compile_charge(inputs: EngineInputs) -> StartCacheCharge | None:
    """What a cold compile may charge beyond a compiled plan whose budget rests on the profile's estimate
    (`launch_charge`, its state as said: `said_state`); None where the launch does not compile, or the KV memory, the
    non-KV figure or the pool is given (the log's or the operator's figure holds whatever the start paid), or the
    operator says the cache is warm where V2 runs and the launch reads it (`plan --compile-cache warm`: its plan
    charges no compile)."""
    s, meas = inputs.settings, inputs.measured
    given = s.kv_cache_memory_bytes is not None or s.num_gpu_blocks_override is not None
    given = given or meas.available_kv_bytes is not None or meas.non_kv_bytes is not None
    # said warm where V2 runs: the figure kept beside its profile, the compile's, is not charged (v2_graphs.py
    # WARM_CACHE_UNCHARGED), so the plan is a warm start's, not one between the two
    said_warm_read = meas.compile_cache == "warm" and unread_warm_note(inputs) is None
    warm = said_warm_read and runs_v2(inputs.version, inputs.model, s)
    if given or warm or not compiles(inputs.version, inputs.gpu_name, s):
        return None
    return launch_charge(inputs.version, inputs.model, s).model_copy(update={"state": said_state(inputs)})


# what a log's compile lines earn in `explain` (`compile_cache_note`), their figures the plan's (`COLD_COMPILE_CHARGE`:
# all the pairs), then what kvtop's plan of the log's launch charges said as the log shows it and not said
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
    """What kvtop's plan of the log's launch charges said as the log measured it (`state`) and not said, in the plan's
    own words (`launch_charge`): 'kvtop's plan of this launch at vLLM 0.30.0, said as this start was: warm, as said
    …; not said: …'. Its lines show it compiled, so no flag is read for that (a log's printed compilation config is
    Python's repr, no JSON); V0 is planned uncompiled (`V0_PLAN`). A measured warm where the launch turns the cache
    off is worded as the plan words that said warm (`DISABLED_STATE`)."""
    if engine_era(version, gpu_name, settings.flags) != "v1":
        return V0_PLAN
    said = SaidCacheState.COLD if state == "cold" else SaidCacheState.WARM_UNCHARGED
    if said is SaidCacheState.WARM_UNCHARGED and cache_disabled(settings):
        said = SaidCacheState.OVERRIDDEN_COLD
    charge = launch_charge(version, model, settings)
    words = charge.model_copy(update={"state": said}).said()
    return (f"kvtop's plan of this launch at vLLM {version.label}, said as this start was: {words}; not said: "
            f"{charge.unsaid_words}")


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
