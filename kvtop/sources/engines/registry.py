"""What each engine looks like from outside kvtop's process, by id: its readers that touch the outside.

Which engines there are is the domain's registry (`kvtop.domain.engines.registry`), and everything pure
an engine knows (log lines, demo behaviour, identity, cap fields, metric names) is its domain package.
Its package here (`kvtop/sources/engines/<id>/`) holds only the readers that do I/O, imported when used:
`endpoint` (`read_live`, which needs httpx) and, where its launch names a file kvtop reads,
`complete_settings` in the package itself (TensorRT-LLM's --extra_llm_api_options YAML), and where the
engine has a model file format of its own, the module that reads it (`MODEL_FILE_MODULE`: llama.cpp's GGUF).
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING

from kvtop.domain.engines.registry import ENGINE_IDS, EngineId, engine_rules
from kvtop.domain.launch import LaunchSettings

if TYPE_CHECKING:  # types only: a command that reads no live node never imports them
    import httpx

    from kvtop.domain.model import ModelSpec
    from kvtop.domain.observe import EngineLive

EndpointReader = Callable[["httpx.Client", str, float], "EngineLive"]
"""(client, base URL, timeout in seconds) -> the engine's live state (never raises on a bad answer)."""


def _package(engine: EngineId) -> str:
    engine_rules(engine)  # an unknown id is the domain registry's UnknownEngineError
    return f"kvtop.sources.engines.{engine}"


def endpoint_reader(engine: EngineId) -> EndpointReader:
    """How to read the engine's live state from its HTTP endpoints."""
    reader: EndpointReader = import_module(f"{_package(engine)}.endpoint").read_live
    return reader


def complete_settings(
    settings: LaunchSettings, base_dir: Path | None, *, strict: bool = False
) -> LaunchSettings:
    """The settings with what files the launch names add (TensorRT-LLM's --extra_llm_api_options YAML):
    each package that reads one says so with a `complete_settings` of its own, a relative path from
    `base_dir` (None: only absolute paths are read); the settings as they are for the others.
    `strict`: the operator typed the launch here, so a named file that is not there is an InputError
    (a launch read from a log or a running process may name files of another machine)."""
    complete: Callable[..., LaunchSettings] | None = getattr(
        import_module(_package(settings.engine)), "complete_settings", None
    )
    return settings if complete is None else complete(settings, base_dir, strict=strict)


def model_file_reader(path: Path) -> Callable[[Path, str | None], ModelSpec] | None:
    """The reader of a model file in an engine's own format (llama.cpp's `.gguf`), chosen by its suffix: a
    package that reads one names the module (`MODEL_FILE_MODULE`), which names its suffixes
    (`MODEL_FILE_SUFFIXES`) and reads it (`read_model_file`); None when no engine reads such a file (it is
    then read as a config.json)."""
    for engine in ENGINE_IDS:
        package = _package(engine)
        module = getattr(import_module(package), "MODEL_FILE_MODULE", None)
        if module is None:
            continue
        reader = import_module(f"{package}.{module}")
        if path.name.lower().endswith(reader.MODEL_FILE_SUFFIXES):
            read: Callable[[Path, str | None], ModelSpec] = reader.read_model_file
            return read
    return None
