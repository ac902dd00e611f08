"""The engines kvtop can observe, by id: the only place in `sources` that lists them.

Each id is also in the domain's registry (`kvtop.domain.engines.registry`); its package here
(`kvtop/sources/engines/<id>/`) holds what the engine looks like from outside: the package itself
its process titles, port and launch completion, and three modules imported only when used (a
command that reads no log, no demo and no live node never loads them): `log_lines` (`DIALECT`),
`demo` (its behaviour on a demo node) and `endpoint` (`read_live`, which needs httpx).
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING

from kvtop.domain.engines.registry import ENGINE_IDS, EngineId
from kvtop.domain.launch import LaunchSettings

if TYPE_CHECKING:  # types only: a command that reads no log and no demo never imports them
    import httpx

    from kvtop.domain.model import ModelSpec
    from kvtop.domain.observe import EngineLive
    from kvtop.sources.engine_simulation import EngineSimulation
    from kvtop.sources.log_dialect import LogDialect

EndpointReader = Callable[["httpx.Client", str, float], "EngineLive"]
"""(client, base URL, timeout in seconds) -> the engine's live state (never raises on a bad answer)."""

_PACKAGES: dict[EngineId, str] = {
    "sglang": "kvtop.sources.engines.sglang",
    "vllm": "kvtop.sources.engines.vllm",
    "lmdeploy": "kvtop.sources.engines.lmdeploy",
    "trtllm": "kvtop.sources.engines.trtllm",
    "llamacpp": "kvtop.sources.engines.llamacpp",
}


def log_dialects() -> tuple[LogDialect, ...]:
    """Every engine's log vocabulary, in the registry's order."""
    return tuple(import_module(f"{_PACKAGES[engine]}.log_lines").DIALECT for engine in ENGINE_IDS)


def simulation(engine: EngineId) -> EngineSimulation:
    """How the engine behaves on a demo node."""
    sim: EngineSimulation = import_module(f"{_PACKAGES[engine]}.demo")  # a module satisfies the protocol
    return sim


def endpoint_reader(engine: EngineId) -> EndpointReader:
    """How to read the engine's live state from its HTTP endpoints."""
    reader: EndpointReader = import_module(f"{_PACKAGES[engine]}.endpoint").read_live
    return reader


def default_port(engine: EngineId) -> int:
    """Where the engine's server listens when its command line does not say."""
    port: int = import_module(_PACKAGES[engine]).DEFAULT_PORT
    return port


def title_prefixes() -> dict[str, EngineId]:
    """The prefix each engine gives its process titles (`VLLM::`, `sglang::`), upper-cased, to its id."""
    return {import_module(_PACKAGES[engine]).TITLE_PREFIX.upper(): engine for engine in ENGINE_IDS}


def ranks_by_gpu_order(engine: EngineId) -> bool:
    """Whether the engine's processes state no rank in their titles, so a process's rank is the position
    of its GPU among the engine's GPUs (LMDeploy: TurboMind's threads of one server process, the PyTorch
    engine's spawned workers); False where titles state ranks (`sglang::scheduler_TP3`, `VLLM::Worker_TP1`)."""
    by_order: bool = import_module(_PACKAGES[engine]).RANKS_BY_GPU_ORDER
    return by_order


def complete_settings(
    settings: LaunchSettings, base_dir: Path | None, *, strict: bool = False
) -> LaunchSettings:
    """The settings with what files the launch names add (TensorRT-LLM's --extra_llm_api_options YAML):
    each package reads its own, a relative path from `base_dir` (None: only absolute paths are read).
    `strict`: the operator typed the launch here, so a named file that is not there is an InputError
    (a launch read from a log or a running process may name files of another machine)."""
    complete: Callable[..., LaunchSettings] = import_module(_PACKAGES[settings.engine]).complete_settings
    return complete(settings, base_dir, strict=strict)


def model_file_reader(path: Path) -> Callable[[Path, str | None], ModelSpec] | None:
    """The reader of a model file in an engine's own format (llama.cpp's `.gguf`), chosen by its suffix: a
    package that reads one names the module (`MODEL_FILE_MODULE`), which names its suffixes
    (`MODEL_FILE_SUFFIXES`) and reads it (`read_model_file`); None when no engine reads such a file (it is
    then read as a config.json)."""
    for engine in ENGINE_IDS:
        package = import_module(_PACKAGES[engine])
        module = getattr(package, "MODEL_FILE_MODULE", None)
        if module is None:
            continue
        reader = import_module(f"{_PACKAGES[engine]}.{module}")
        if path.name.lower().endswith(reader.MODEL_FILE_SUFFIXES):
            read: Callable[[Path, str | None], ModelSpec] = reader.read_model_file
            return read
    return None


def rank_of_device(settings: LaunchSettings, position: int) -> dict[str, int] | None:
    """The rank of an untitled worker from its GPU's place among the GPUs it sees, for engines whose
    ranks bind devices in rank order (TensorRT-LLM's MPI workers); None where titles name the rank."""
    rank: Callable[[LaunchSettings, int], dict[str, int] | None] = import_module(
        _PACKAGES[settings.engine]
    ).rank_of_device
    return rank(settings, position)
