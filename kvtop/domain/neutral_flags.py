"""The flags of a launch that its engine's package lists as having no effect on GPU memory: accepted, named on the
plan's line under the engine flags (so an operator sees kvtop read and ignored them), never written back.

An engine package lists them as `memory_neutral` on its flags class (vLLM: engines/vllm/flags_neutral.py); one
without such a list names none.
"""

from __future__ import annotations

from kvtop.domain.launch import LaunchSettings, engine_flags


def memory_neutral_flags(settings: LaunchSettings) -> tuple[str, ...]:
    """The launch's flags (as vLLM's parser reads them, no values: an API key is never shown) with no effect on
    memory, in the order given."""
    neutral: frozenset[str] = getattr(engine_flags(settings.engine), "memory_neutral", frozenset())
    return tuple(flag for name in settings.flags if (flag := "--" + name) in neutral)
