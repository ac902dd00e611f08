"""Whether a vLLM start compiled its model cold or loaded it from torch.compile's cache (docs/engines/vllm.md §2.6).

vLLM compiles the model with torch.compile in the first forward, inside `profile_run`, unless its cache holds the
compiled graphs: then it loads them and says so, 'Directly load the compiled graph(s) for shape %s from the cache, took
%.3f s' (compilation/backends.py:119-121 at v0.8.5.post1; 'for compile range %s' at v0.30.0, :293-295, :315 at
v0.34.0), or from v0.2x 'Directly load AOT compilation from path %s' (compilation/decorators.py:313-315 at v0.30.0,
:327 at v0.34.0). A cold start says 'Compiling a graph for general shape' (v0.6.x-v0.8.x), 'for dynamic shape takes
%.2f s' / 'for shape %s takes %.2f s' (CompilerManager.compile, v0.8.x-v0.10.x) or 'for compile range %s takes %.2f s'
(compilation/backends.py:422 at v0.34.0). Inductor's compile and Triton's autotuning then run inside the profile:
their scratch raises torch's peak (`allocated_bytes.all.peak`, which `memory_profiling` charges as the transient
headroom, utils/mem_utils.py:245-340 at v0.34.0) and the device's used memory beyond torch's stays raised after the
profile's `empty_cache` (non-torch: the RTX 5090 pair held +0.98 GiB non-torch and +0.76 GiB peak cold).

Measured on kvtop's corpus (session 60, the table in docs/engines/vllm.md §2.6): the same launch on the same host held
0.46-1.74 GiB more cold than warm (RTX 3090 0.46, A40 0.77, RTX 4090 0.78 and ≈ 1.0, L4 0.99, RTX PRO 6000 0.98,
RTX 5090 1.74; B200 ≈ 2.6 at v0.9.1), and nothing on two cold starts whose layer shapes an earlier start of the host
had compiled (Llama-3.1-8B, Mistral-7B: likely Inductor's and Triton's own caches, keyed by kernel, which outlive
vLLM's per-model one). Neither the size nor whether it is paid at all follows from the launch (model size, release, GPU or batch), so
the plan's figure stays the fits' (between the two: the corpus's cold starts plan +1.4 % median, its warm ones
-0.5 to -2 %) and this is **not modelled**: a log's lines name which a start was, measured (`compile_cache_state`).

A plan cannot know it, so a compiled plan says it (`compile_charge.cold_compile_charge`, the budget's `EngineResult.start_cache`,
said by `CapacityPlan.start_notes`): the pairs' spread and median, in the plan's tokens. Compiled: V1 (v0.8.0 on, `batching.engine_era`), not `--enforce-eager` (mode
NONE: config/vllm.py:440-444 at v0.11.1, the 'Enforce eager set, disabling torch.compile' branch :1193-1199 at v0.27.1;
`-O0` from v0.12.0, :601 at v0.12.0), no `-O0` (compile level 0 before v0.12.0; optimization level 0 sets mode NONE
where no mode is stated, :1272-1276 at v0.27.1), no compilation-config mode/level 0 or NONE, no backend 'eager'
(:1243-1251 at v0.27.1: 'Inductor compilation was disabled'). Where a log names the state, `explain` says it measured
and its ledger, solved from the log's KV memory, carries no such line; its note goes on to say what kvtop's plan of
the log's launch charges said as the log shows it, in the plan's words (session 71,
`compile_charge.compile_cache_note`: it had said the plan 'sits between a warm and a cold start'; session 72 dropped
the unsaid plan's words that ran on after it, a second note against the first).

Said warm (`plan --compile-cache warm`, `MeasuredInputs.compile_cache`; session 63): where V2 runs, the figure kvtop
keeps beside V2's profile stands for the cold compile (v2_graphs.py), so a warm start is charged none of it
(`WARM_CACHE_UNCHARGED`, the figure moved into its error) and no cold-start note is made; on the V1 runner nothing is charged apart for
the compile unless said cold (session 70: said cold, the compile's copy of the embedding table is the profile's peak
where it is above the count, `compile_benchmark.with_v1_compile_copy`; unsaid, it widens the interval; said warm,
neither), and the note stays, saying the state as said. Said cold, or not said where V2 runs: a cold start's plan;
said cold, the note says so ('cold, as said') rather than 'not known before a start'. Unsaid, the note says what the
plan then charges, by the runner (`UNSAID_V1`: the said warm centre; `UNSAID_V2`: the said cold one), no longer that
it sits between the two (session 70's final reader). Session 71: each state's words follow the runner and the release
(`compile_charge.launch_charge`): said cold `COLD_SAID_V1` / `COLD_SAID_V2`, and on the V1 runner before v0.11.1, where
vLLM sets no combo-kernel benchmark and nothing of the compile is charged in any state, `NO_COPY_V1`.

A said warm that the start cannot find (session 63, `warm_unread`): the launch line's `VLLM_DISABLE_COMPILE_CACHE=1`
(read as `bool(int(os.getenv(...)))`: envs.py:601-602 at v0.8.5, :854-855 at v0.10.2, :363-364 at v0.30.0) turns
vLLM's cache off, so it neither loads nor saves the compiled graphs and every start compiles cold (`DISABLED_SOURCES`;
read in the v0.8.5, v0.10.2, v0.11.0, v0.13.0-v0.19.0, v0.27.1, v0.30.0, v0.33.0 and v0.34.0 wheels, v0.8.0-v0.8.4 not
read); a launch that compiles nothing (`compiles`: eager, -O0, mode or level 0, backend 'eager') reads no cache. Either
way the plan is the unsaid one and a named note says why (`UNREAD_WARM`).
"""

from __future__ import annotations

from enum import Enum
from statistics import median

from kvtop.domain.engine_log import EngineLog
from kvtop.domain.engines.base import CompileCacheState, EngineInputs
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.batching import ENGINE_ERAS, engine_era
from kvtop.domain.engines.vllm.compilation import compilation_level, config_fields, level
from kvtop.domain.engines.vllm.log_records import VllmRankLog
from kvtop.domain.errors import InputError
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.start_cache import SaidCacheState, StartCacheCharge
from kvtop.domain.wording import GIB

# cold less warm on one launch and host, GiB a GPU (docs/engines/vllm.md §2.6; each pair's records in
# tests/data/calibration/vllm.jsonl, vllm#54383 the one from an issue's two starts)
COLD_EXCESS_GIB: tuple[tuple[float, str], ...] = (
    (0.46, "RTX 3090, v0.19.0 dev (mystous)"),
    (0.77, "A40, v0.25.0 dev (issei)"),
    (0.78, "RTX 4090, v0.23.0 (stellalee)"),
    (1.0, "RTX 4090, v0.27.1 (runpod)"),
    (0.98, "RTX PRO 6000, Gemma-2-9B, v0.20.1"),
    (0.99, "L4, v0.30.0 (aarush)"),
    (1.74, "RTX 5090, v0.29.0 (wrbooth)"),
    (2.6, "B200, Llama-3.1-8B FP8, v0.9.1 (chris113113)"),
    (0.47, "2 × RTX 4090, v0.28.0 (vllm#54383)"),
)
_EXCESS = tuple(round(figure * GIB) for figure, _ in COLD_EXCESS_GIB)

# the launch line's switch that turns vLLM's compile cache off (envs.py:601-602 at v0.8.5, :363-364 at v0.30.0), and
# where the release reads it: the cache disabled ('vLLM's torch.compile cache is disabled.'), the AOT artifact not loaded
DISABLE_ENV = "VLLM_DISABLE_COMPILE_CACHE"
DISABLED_LINE_SOURCES = (
    "compilation/backends.py:415-418 at v0.8.5, :534-537 at v0.10.2, :1039-1049 at v0.19.0, :1082-1092 at v0.30.0, "
    ":1105-1108 at v0.34.0"
)
DISABLED_SOURCES = (f"{DISABLED_LINE_SOURCES}; the AOT load skipped, decorators.py:499 at v0.19.0, :566 at v0.30.0, "
                    ":595 at v0.34.0")  # fmt: skip
# the start note's state where said (`StartCacheCharge.state`, `said_state`), in vLLM's words, by what the launch's
# runner and release charge for the compile (`compile_charge.launch_charge`)
COLD_SAID_V1 = ("cold, as said (--compile-cache cold): on vLLM's V1 runner the plan charges a cold compile as far as "
                "kvtop reads one, the compile's copy of the embedding table as the profile's peak where it is above "
                "kvtop's count (compile_benchmark.py); the rest of the compile not modelled")  # fmt: skip
COLD_SAID_V2 = ("cold, as said (--compile-cache cold): where vLLM's V2 runner runs the plan charges a cold compile as "
                "far as kvtop reads one (the figure kept beside its profile, v2_graphs.py); the rest of the compile not "
                "modelled")  # fmt: skip
DISABLED_STATE = (f"cold: the launch's {DISABLE_ENV}=1 turns vLLM's cache off, which overrides the said warm (its "
                  "note); the plan is the one made where the cache's state is not said")  # fmt: skip
WARM_SAID_V1 = ("warm, as said (--compile-cache warm): the profile compiles nothing, so on vLLM's V1 runner the plan "
                "charges nothing for the compile, and its interval leaves out the copy of the embedding table a cold "
                "compile would hold")  # fmt: skip
# said warm where V2 runs the plan makes no start note (`compile_charge.cold_compile_charge`: nothing charged, the
# figure in its term's error, v2_graphs.WARM_CACHE_UNCHARGED); `explain` says it of a log whose start was warm
WARM_SAID_V2 = ("warm, as said (--compile-cache warm): where vLLM's V2 runner runs the profile loads the compiled "
                "graphs, so the plan charges none of the figure kept beside its profile for a cold compile (v2_graphs.py "
                "WARM_CACHE_UNCHARGED), which joins that term's error")  # fmt: skip
# what the plan charges where the cache's state is not said (`StartCacheCharge.unsaid_words`), by the runner: on the V1
# runner nothing apart for the compile, so its centre is a warm start's (Qwen2.5-7B on an RTX 3090 at v0.19.0, 2,048
# tokens × 256 seqs: 115,200 tokens unsaid and said warm, 106,864 said cold), the compile's copy of the embedding table
# in its error (`compile_benchmark.with_v1_compile_copy`); where V2 runs, the cold compile's figure beside its profile
# (`v2_graphs.with_v2_beside`), so a cold start's as far as kvtop reads one
UNSAID_V1 = ("on vLLM's V1 runner the plan charges nothing apart for the compile, so its centre is the one said warm "
             "gives, and where a cold compile's copy of the embedding table would lift the profile's "
             "peak above kvtop's count, that lift widens the interval's low end (compile_benchmark.py); the rest of a "
             "cold start's excess is not modelled")  # fmt: skip
UNSAID_V2 = ("where vLLM's V2 runner runs the plan charges a cold compile as far as kvtop reads one (the figure kept "
             "beside its profile, v2_graphs.py), so a warm start holds more KV than its centre; the rest of a cold "
             "start's excess is not modelled")  # fmt: skip
# the V1 runner before v0.11.1: vLLM sets no combo-kernel benchmark there (compile_benchmark.COMBO_DEFAULT), so no
# copy of the table is read and nothing is charged for the compile in any state (`with_v1_compile_copy` adds nothing)
NO_COPY_V1 = ("on vLLM's V1 runner before v0.11.1 the plan charges nothing for the compile, said or not: the release "
              "sets no combo-kernel benchmark (compile_benchmark.py COMBO_DEFAULT), so kvtop reads no part of a cold "
              "compile, whose excess is not modelled")  # fmt: skip
# the corpus's cold-less-warm pairs; each launch's words are `compile_charge.charge_of`'s, by its runner
COLD_COMPILE_CHARGE = StartCacheCharge(
    cache="torch.compile's cache", least_bytes=min(_EXCESS), median_bytes=round(median(_EXCESS)),
    most_bytes=max(_EXCESS), pairs=len(_EXCESS), source="docs/engines/vllm.md §2.6",
)  # fmt: skip


class WarmUnread(Enum):
    """Why a said warm cache is not what the start reads (`warm_unread`)."""

    DISABLED = "disabled"  # the launch's VLLM_DISABLE_COMPILE_CACHE=1 turns the cache off
    UNCOMPILED = "uncompiled"  # the launch compiles nothing


UNREAD_WARM = {
    WarmUnread.DISABLED: (f"said warm (--compile-cache warm), but the launch sets {DISABLE_ENV}=1: vLLM neither loads "
                          f"nor saves its compiled graphs ({DISABLED_SOURCES}), so every start compiles cold; planned as "
                          "a cold start"),
    WarmUnread.UNCOMPILED: ("said warm (--compile-cache warm), but this launch compiles nothing (--enforce-eager, -O0, "
                            "a compilation mode or level 0, backend 'eager'): no cache is read; planned as unsaid"),
}  # fmt: skip

# what a log's 'vLLM's torch.compile cache is disabled.' line earns in `explain` (`compile_cache_note`): what turns the
# cache off, by release (backends.py's `disable_cache`)
DISABLED_LOGGED = (
    "torch.compile's cache: disabled, measured (the log's 'vLLM's torch.compile cache is disabled.' line, "
    f"{DISABLED_LINE_SOURCES}): {DISABLE_ENV}=1 (v0.11.0 reads it alone), at v0.13.0 on also the "
    "compilation config's inductor_compile_config force_disable_caches (compiler_interface.py:167-181 at v0.13.0), "
    "at v0.18.0-v0.30.0 n-gram GPU drafting (backends.py:979-983 at v0.18.0, :1085-1089 at v0.30.0; not at v0.17.1 "
    "or v0.33.0); every start of this launch compiles cold"
)

def compile_cache_state(log: EngineLog) -> CompileCacheState | None:
    """What a log's lines say of torch.compile's cache (its ranks' first load and compile lines, `VllmRankLog`): 'cold'
    where any graph was compiled (even beside a load: Inductor ran inside the profile), 'warm' where graphs were only
    loaded, None where no line says."""
    if log.first(VllmRankLog, lambda r: r.compile_cache_misses or None):
        return "cold"
    return "warm" if log.first(VllmRankLog, lambda r: r.compile_cache_loads or None) else None


def compiles(version: ResolvedVersion, gpu_name: str | None, settings: LaunchSettings) -> bool:
    """Whether the launch runs vLLM's torch.compile (Inductor) inside its profile: V1 from v0.8.0, not eager, no -O0,
    no compilation mode or level 0/NONE, no 'eager' backend (the module's docstring)."""
    flags = settings.flags
    if ENGINE_ERAS.at(version) != "v1" or engine_era(version, gpu_name, flags) != "v1":
        return False
    if settings.enforce_eager:
        return False
    fields = config_fields(flags, version)
    if fields.get("backend") == "eager":
        return False
    stated = compilation_level(flags, version)  # `-O N` before v0.12.0, the JSON's "mode" / "level" (compilation.py)
    if stated is not None:
        return stated != 0
    return level(flags, version) != 0


def cache_disabled(settings: LaunchSettings) -> bool:
    """Whether the launch line turns vLLM's compile cache off (`VLLM_DISABLE_COMPILE_CACHE`, read as
    `bool(int(value))`: a value int() refuses stops vLLM at its first read of it, so kvtop refuses it too)."""
    value = settings.flags.get(DISABLE_ENV)
    if value is None:
        return False
    try:
        return bool(int(str(value)))
    except ValueError:
        raise InputError(f"{value!r}: vLLM reads it as int(os.getenv(...)) (envs.py:602 at v0.8.5, :364 at v0.30.0) "
                         "and stops there", field=DISABLE_ENV) from None  # fmt: skip


def warm_unread(version: ResolvedVersion, gpu_name: str | None, settings: LaunchSettings) -> str | None:
    """Why a said warm cache is not what the start finds (`UNREAD_WARM`): the launch compiles nothing
    (`compiles`), or its `VLLM_DISABLE_COMPILE_CACHE` turns the cache off; None where a warm cache is read."""
    if not compiles(version, gpu_name, settings):
        return UNREAD_WARM[WarmUnread.UNCOMPILED]
    return UNREAD_WARM[WarmUnread.DISABLED] if cache_disabled(settings) else None


def said_state(inputs: EngineInputs) -> SaidCacheState | None:
    """How the plan's start note says the cache's state (`StartCacheCharge.state`): cold as said, cold where the
    launch's `VLLM_DISABLE_COMPILE_CACHE` overrides a said warm, warm as said where the runner charges nothing apart
    for the compile; None where not said."""
    said = inputs.measured.compile_cache
    if said == "warm":
        return SaidCacheState.OVERRIDDEN_COLD if cache_disabled(inputs.settings) else SaidCacheState.WARM_UNCHARGED
    return SaidCacheState.COLD if said == "cold" else None


def unread_warm_note(inputs: EngineInputs) -> str | None:
    """The plan's note where the operator says warm and the start cannot read it (`warm_unread`); else None."""
    if inputs.measured.compile_cache != "warm":
        return None
    return warm_unread(inputs.version, inputs.gpu_name, inputs.settings)
