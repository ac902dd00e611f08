"""vLLM seen from outside: its startup-log lines (`log_lines`) and how it behaves on a demo node (`demo`)."""

from __future__ import annotations

from pathlib import Path

from kvtop.domain.launch import LaunchSettings

# How the engine names its processes (`VLLM::…`) and where its server listens unless told.
TITLE_PREFIX = "VLLM"
RANKS_BY_GPU_ORDER = False  # titles state each worker's rank
DEFAULT_PORT = 8000


def complete_settings(
    settings: LaunchSettings, base_dir: Path | None, *, strict: bool = False
) -> LaunchSettings:
    """Its launch names no file kvtop reads: the settings as they are."""
    return settings


def rank_of_device(settings: LaunchSettings, position: int) -> dict[str, int] | None:
    """Its workers' titles name their ranks."""
    return None


__all__ = [
    "DEFAULT_PORT",
    "RANKS_BY_GPU_ORDER",
    "TITLE_PREFIX",
    "complete_settings",
    "rank_of_device",
]
