"""The flags of a launch that its engine's package lists as having no effect on GPU memory: accepted, named on the
plan's line under the engine flags (so an operator sees kvtop read and ignored them), never written back.

Each engine's flags state them (`EngineFlags.memory_neutral`; vLLM's: engines/vllm/flags_neutral.py); an engine
whose flags were not classified yet states none.
"""

from __future__ import annotations

from kvtop.domain.launch import LaunchSettings, engine_flags


def memory_neutral_flags(settings: LaunchSettings) -> tuple[str, ...]:
    """The launch's flags (as the engine's parser reads them, no values: an API key is never shown) with no effect
    on memory, in the order given."""
    neutral = engine_flags(settings.engine).memory_neutral
    return tuple(flag for name in settings.flags if (flag := "--" + name) in neutral)
