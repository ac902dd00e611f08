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

A plan cannot know it, so a compiled plan says it (`cold_compile_charge`, the budget's `EngineResult.start_cache`,
said by `CapacityPlan.start_notes`): the pairs' spread and median, in the plan's tokens. Compiled: V1 (v0.8.0 on, `batching.engine_era`), not `--enforce-eager` (mode
NONE: config/vllm.py:440-444 at v0.11.1, the 'Enforce eager set, disabling torch.compile' branch :1193-1199 at v0.27.1;
`-O0` from v0.12.0, :601 at v0.12.0), no `-O0` (compile level 0 before v0.12.0; optimization level 0 sets mode NONE
where no mode is stated, :1272-1276 at v0.27.1), no compilation-config mode/level 0 or NONE, no backend 'eager'
(:1243-1251 at v0.27.1: 'Inductor compilation was disabled'). Where a log names the state, `explain` says it measured
and its ledger, solved from the log's KV memory, carries no such line.

Said warm (`plan --compile-cache warm`, `MeasuredInputs.compile_cache`; session 63): where V2 runs, the figure kvtop
keeps beside V2's profile stands for the cold compile (v2_graphs.py), so a warm start is charged none of it
(`WARM_CACHE_UNCHARGED`, the figure moved into its error) and no cold-start note is made; on the V1 runner nothing is charged apart for
the compile, so the said state changes nothing there and the note stays. Said cold, or not said: a cold start's plan.
"""

from __future__ import annotations

from statistics import median
from typing import Literal

from kvtop.domain.engine_log import EngineLog
from kvtop.domain.engines.base import EngineInputs
from kvtop.domain.engines.vllm.batching import ENGINE_ERAS, engine_era
from kvtop.domain.engines.vllm.compilation import compilation_level, config_fields, level
from kvtop.domain.engines.vllm.log_records import VllmRankLog
from kvtop.domain.engines.vllm.runner_eras import runs_v2
from kvtop.domain.start_cache import StartCacheCharge
from kvtop.domain.wording import GIB

CompileCacheState = Literal["warm", "cold"]

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
COLD_COMPILE_CHARGE = StartCacheCharge(
    cache="torch.compile's cache", least_bytes=min(_EXCESS), median_bytes=round(median(_EXCESS)),
    most_bytes=max(_EXCESS), pairs=len(_EXCESS), source="docs/engines/vllm.md §2.6",
)  # fmt: skip

# what a log's compile lines earn in `explain`, their figures the plan's (`COLD_COMPILE_CHARGE`: all the pairs)
_PAIRS = (f"{COLD_COMPILE_CHARGE.spread()} on {COLD_COMPILE_CHARGE.pairs} pairs of one launch in kvtop's corpus, "
          f"median {COLD_COMPILE_CHARGE.median()}; {COLD_COMPILE_CHARGE.source}")
WARM_COMPILE_CACHE = (
    "torch.compile's cache: measured warm (the log's 'Directly load …' line): the profile ran no Inductor compile or "
    f"autotuning, so this start charged less than a cold one ({_PAIRS}); kvtop's plan sits between a warm and a cold "
    "start: not modelled"
)
COLD_COMPILE = (
    "torch.compile's cache: measured cold, this start compiled (the log's 'Compiling a graph for …' line): Inductor's "
    "compile and Triton's autotuning ran inside the profile, which can charge more than a warm start of the same "
    f"launch ({_PAIRS}), or nothing where Inductor's own cache already held the kernels; kvtop's plan sits between a "
    "warm and a cold start: not modelled"
)


def compile_cache_state(log: EngineLog) -> CompileCacheState | None:
    """What a log's lines say of torch.compile's cache (its ranks' first load and compile lines, `VllmRankLog`): 'cold'
    where any graph was compiled (even beside a load: Inductor ran inside the profile), 'warm' where graphs were only
    loaded, None where no line says."""
    if log.first(VllmRankLog, lambda r: r.compile_cache_misses or None):
        return "cold"
    return "warm" if log.first(VllmRankLog, lambda r: r.compile_cache_loads or None) else None


def compile_cache_note(log: EngineLog) -> str | None:
    """The note a log's compile lines earn (`WARM_COMPILE_CACHE`, `COLD_COMPILE`); None where no line says."""
    state = compile_cache_state(log)
    return None if state is None else WARM_COMPILE_CACHE if state == "warm" else COLD_COMPILE


def compiles(inputs: EngineInputs) -> bool:
    """Whether the start runs vLLM's torch.compile (Inductor) inside its profile: V1 from v0.8.0, not eager, no -O0,
    no compilation mode or level 0/NONE, no 'eager' backend (the module's docstring)."""
    version, flags = inputs.version, inputs.settings.flags
    if ENGINE_ERAS.at(version) != "v1" or engine_era(version, inputs.gpu_name, flags) != "v1":
        return False
    if inputs.settings.enforce_eager:
        return False
    fields = config_fields(flags, version)
    if fields.get("backend") == "eager":
        return False
    stated = compilation_level(flags, version)  # `-O N` before v0.12.0, the JSON's "mode" / "level" (compilation.py)
    if stated is not None:
        return stated != 0
    return level(flags, version) != 0


def cold_compile_charge(inputs: EngineInputs) -> StartCacheCharge | None:
    """What a cold compile may charge beyond a compiled plan whose budget rests on the profile's estimate
    (`COLD_COMPILE_CHARGE`); None where the launch does not compile, or the KV memory, the non-KV figure or the
    pool is given (the log's or the operator's figure holds whatever the start paid), or the operator says the cache
    is warm where V2 runs (`plan --compile-cache warm`: its plan charges no compile)."""
    s, meas = inputs.settings, inputs.measured
    given = s.kv_cache_memory_bytes is not None or s.num_gpu_blocks_override is not None
    given = given or meas.available_kv_bytes is not None or meas.non_kv_bytes is not None
    # said warm where V2 runs: the figure kept beside its profile, the compile's, is not charged (v2_graphs.py
    # WARM_CACHE_UNCHARGED), so the plan is a warm start's, not one between the two
    said_warm = meas.compile_cache == "warm" and runs_v2(inputs.version, inputs.model, s)
    return None if given or said_warm or not compiles(inputs) else COLD_COMPILE_CHARGE
