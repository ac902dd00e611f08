"""The engines kvtop models, by id: the only place in the domain that lists them.

A new engine is one package here (`kvtop/domain/engines/<id>/`, exposing `RULES` and `FLAGS`),
one under `kvtop/sources/engines/<id>/`, and one line in each registry. Packages are imported
when first asked for, so `kvtop --help` pays for none of them.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

from kvtop.domain.errors import InputError

if TYPE_CHECKING:
    from kvtop.domain.engines.base import EngineRules
    from kvtop.domain.launch import EngineFlags

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
