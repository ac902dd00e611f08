"""The engines kvtop models, by id: the only place in kvtop that says which engines there are.

Everything an engine knows is its package here (`kvtop/domain/engines/<id>/`): its `RULES` (budget,
storage, eras, identity — title prefix, port, rank order —, cap fields, metric names, and the modules
imported on first use: diagnosis, explain, span, calibration, deployment, `log_lines`, `demo`) and its
`FLAGS`. What touches the outside (its HTTP endpoint, a file its launch names) is its package under
`kvtop/sources/engines/<id>/`, found by `kvtop.sources.engines.registry` from the ids listed here.
A new engine is those two packages and one line below. Packages are imported when first asked for,
so `kvtop --help` pays for none of them.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

from kvtop.domain.errors import InputError

if TYPE_CHECKING:
    from kvtop.domain.engine_simulation import EngineSimulation
    from kvtop.domain.engines.base import EngineRules
    from kvtop.domain.launch import EngineFlags, LaunchSettings
    from kvtop.domain.log_dialect import LogDialect

EngineId = str
"""An engine's id as kvtop names it ("sglang", "vllm"): one of `ENGINE_IDS`."""

# id -> (the engine's own name, its package)
_ENGINES: dict[EngineId, tuple[str, str]] = {
    "sglang": ("SGLang", "kvtop.domain.engines.sglang"),
    "vllm": ("vLLM", "kvtop.domain.engines.vllm"),
    "lmdeploy": ("LMDeploy", "kvtop.domain.engines.lmdeploy"),
    "trtllm": ("TensorRT-LLM", "kvtop.domain.engines.trtllm"),
    "llamacpp": ("llama.cpp", "kvtop.domain.engines.llamacpp"),
}
ENGINE_IDS: tuple[EngineId, ...] = tuple(_ENGINES)
DEFAULT_ENGINE: EngineId = "sglang"


class UnknownEngineError(InputError):
    """An engine id kvtop has no package for (never another engine's rules in its place)."""


def _package(engine: EngineId) -> object:
    try:
        return import_module(_ENGINES[engine][1])
    except KeyError:
        raise UnknownEngineError(
            f"unknown engine {engine!r} (one of {', '.join(ENGINE_IDS)})", field="--engine"
        ) from None


def display_name(engine: EngineId) -> str:
    """'SGLang', 'vLLM': how the engine names itself."""
    return _ENGINES[engine][0] if engine in _ENGINES else engine


def display_names() -> str:
    """'SGLang, vLLM, LMDeploy or TensorRT-LLM': every engine kvtop models, for a message."""
    shown = [display_name(engine) for engine in ENGINE_IDS]
    return ", ".join(shown[:-1]) + f" or {shown[-1]}" if len(shown) > 1 else shown[0]


def engine_rules(engine: EngineId) -> EngineRules:
    """The engine's budget, storage and version rules."""
    rules: EngineRules = _package(engine).RULES  # type: ignore[attr-defined]
    return rules


def engine_flags(engine: EngineId) -> EngineFlags:
    """The engine's command-line vocabulary."""
    flags: EngineFlags = _package(engine).FLAGS  # type: ignore[attr-defined]
    return flags


def log_dialects() -> tuple[LogDialect, ...]:
    """Every engine's log vocabulary, in the registry's order."""
    return tuple(engine_rules(engine).log_dialect for engine in ENGINE_IDS)


def simulation(engine: EngineId) -> EngineSimulation:
    """How the engine behaves on a demo node."""
    return engine_rules(engine).simulation


def default_port(engine: EngineId) -> int:
    """Where the engine's server listens when its command line does not say."""
    return engine_rules(engine).default_port


def title_prefixes() -> dict[str, EngineId]:
    """The prefix each engine gives its process titles (`VLLM::`, `sglang::`), upper-cased, to its id."""
    return {engine_rules(engine).title_prefix.upper(): engine for engine in ENGINE_IDS}


def ranks_by_gpu_order(engine: EngineId) -> bool:
    """Whether the engine's processes state no rank in their titles, so a process's rank is the position
    of its GPU among the engine's GPUs (LMDeploy: TurboMind's threads of one server process, the PyTorch
    engine's spawned workers); False where titles state ranks (`sglang::scheduler_TP3`, `VLLM::Worker_TP1`)."""
    return engine_rules(engine).ranks_by_gpu_order


def rank_of_device(settings: LaunchSettings, position: int) -> dict[str, int] | None:
    """The rank of an untitled worker from its GPU's place among the GPUs it sees, for engines whose
    ranks bind devices in rank order (TensorRT-LLM's MPI workers); None where titles name the rank."""
    return engine_rules(settings.engine).rank_of_device(settings, position)


def engine_metrics() -> dict[str, tuple[EngineId, bool]]:
    """Every engine's own Prometheus gauges, by name: (its engine, whether it states the token capacity;
    else the share of KV in use, 0–1), as each engine package declares them."""
    metrics: dict[str, tuple[EngineId, bool]] = {}
    for engine in ENGINE_IDS:
        rules = engine_rules(engine)
        metrics |= {name: (engine, False) for name in rules.usage_metrics}
        metrics |= {name: (engine, True) for name in rules.capacity_metrics}
    return metrics
