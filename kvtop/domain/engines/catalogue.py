"""The engines kvtop models, by id: the only place in kvtop that says which engines there are, and the one
that imports an engine's package (or one of its modules) by id.

It names no type of the rules' (those are `kvtop.domain.engines.registry`'s, above the protocols): the
launch settings check their engine and flags here, below everything an engine's rules are typed with,
so that no annotation points back up. Packages are imported when first asked for, so `kvtop --help`
pays for none of them.
"""

from __future__ import annotations

from importlib import import_module
from types import ModuleType

from kvtop.domain.errors import InputError

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


def engine_module(engine: EngineId, name: str | None = None) -> ModuleType:
    """The engine's package, or its module `name` (`diagnosis`, `explain`…), imported on first use."""
    try:
        package = _ENGINES[engine][1]
    except KeyError:
        raise UnknownEngineError(
            f"unknown engine {engine!r} (one of {', '.join(ENGINE_IDS)})", field="--engine"
        ) from None
    return import_module(f"{package}.{name}" if name else package)


def display_name(engine: EngineId) -> str:
    """'SGLang', 'vLLM': how the engine names itself."""
    return _ENGINES[engine][0] if engine in _ENGINES else engine


def display_names() -> str:
    """'SGLang, vLLM, LMDeploy or TensorRT-LLM': every engine kvtop models, for a message."""
    shown = [display_name(engine) for engine in ENGINE_IDS]
    return ", ".join(shown[:-1]) + f" or {shown[-1]}" if len(shown) > 1 else shown[0]
