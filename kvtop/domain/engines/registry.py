"""An engine's rules by id, typed by the protocols every engine package implements (`protocols.py`).

The list of engines and the import of a package by id are `kvtop.domain.engines.catalogue`'s (below the
launch settings and everything the rules are typed with); this module adds what each engine states,
looked up by id: its `RULES` and what the shared code asks of them (log dialects, demo behaviour, port,
process titles, rank order, Prometheus names). Shared code reaches an engine only through these two
modules, by id; no shared module imports an engine package by name (tests/test_import_graph.py).
What touches the outside (its HTTP endpoint, a file its launch names) is its package under
`kvtop/sources/engines/<id>/`, found by `kvtop.sources.engines.registry` from the same ids.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvtop.domain.engines.catalogue import DEFAULT_ENGINE as DEFAULT_ENGINE
from kvtop.domain.engines.catalogue import ENGINE_IDS as ENGINE_IDS
from kvtop.domain.engines.catalogue import EngineId as EngineId
from kvtop.domain.engines.catalogue import UnknownEngineError as UnknownEngineError
from kvtop.domain.engines.catalogue import display_name as display_name
from kvtop.domain.engines.catalogue import display_names as display_names
from kvtop.domain.engines.catalogue import engine_module
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.launch import engine_flags as engine_flags

if TYPE_CHECKING:
    from kvtop.domain.engine_simulation import EngineSimulation
    from kvtop.domain.engines.protocols import EngineRules
    from kvtop.domain.log_dialect import LogDialect


def engine_rules(engine: EngineId) -> EngineRules:
    """The engine's budget, storage and version rules."""
    rules: EngineRules = engine_module(engine).RULES
    return rules


def log_dialects() -> tuple[LogDialect, ...]:
    """Every engine's log vocabulary, in the catalogue's order."""
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
