"""What each engine looks like from outside kvtop's process, by id: its readers that touch the outside.

Which engines there are is the domain's registry (`kvtop.domain.engines.registry`), and everything pure
an engine knows (log lines, demo behaviour, identity, cap fields, metric names) is its domain package.
Its package here (`kvtop/sources/engines/<id>/`) holds only the readers that do I/O, imported when used:
`endpoint` (`read_live`, which needs httpx) and, where its launch names a file kvtop reads,
`complete_settings` in the package itself (TensorRT-LLM's --extra_llm_api_options YAML).
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING

from kvtop.domain.engines.registry import EngineId, engine_rules
from kvtop.domain.launch import LaunchSettings

if TYPE_CHECKING:  # types only: a command that reads no live node never imports them
    import httpx

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
