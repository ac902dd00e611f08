"""Whether a PyTorch-backend launch turns the overlap scheduler off (`disable_overlap_scheduler`, the LLM API's key),
read off the --extra_llm_api_options YAML (a bool) or typed as kvtop spells the YAML's keys (`--disable_overlap_scheduler`
alone, or with true / false). budget.estimation_tokens reads it: with the overlap scheduler on, the spring-2025
profiling run gives each dummy request two generated tokens' blocks, one without (docs/engines/trtllm.md §3 step 1)."""

from __future__ import annotations

from kvtop.domain.errors import InputError
from kvtop.domain.launch import LaunchSettings

OVERLAP_OFF_KEY = "disable_overlap_scheduler"
_TRUE = frozenset({"true", "1", "yes", "on"})
_FALSE = frozenset({"false", "0", "no", "off"})


def overlap_off(settings: LaunchSettings) -> bool:
    """True where the launch sets disable_overlap_scheduler; a word that is not a boolean is an InputError naming it
    (a typed 'false' must not read as set, as a bare non-empty string would)."""
    value = settings.flags.get(OVERLAP_OFF_KEY)
    if value is None or isinstance(value, bool):
        return bool(value)
    text = str(value).strip().lower()
    if text in _TRUE or text in _FALSE:
        return text in _TRUE
    raise InputError(f"expected true or false, got {str(value)[:40]!r}", field=f"--{OVERLAP_OFF_KEY}")
