"""LMDeploy seen from outside: its startup-log lines (`log_lines`), its `/metrics` (`endpoint`) and how
it behaves on a demo node (`demo`)."""

from __future__ import annotations

from pathlib import Path

from kvtop.domain.launch import LaunchSettings

# LMDeploy gives its processes no title of its own (TurboMind drives every GPU from threads of the
# server process; the PyTorch engine's workers are spawned Python processes): the prefix is never
# matched by a `prefix::role` title, and ranks are read from the GPUs the engine's processes hold.
TITLE_PREFIX = "lmdeploy"
DEFAULT_PORT = 23333  # `lmdeploy serve api_server --server-port` default
RANKS_BY_GPU_ORDER = True


def complete_settings(
    settings: LaunchSettings, base_dir: Path | None, *, strict: bool = False
) -> LaunchSettings:
    """Its launch names no file kvtop reads: the settings as they are."""
    return settings


def rank_of_device(settings: LaunchSettings, position: int) -> dict[str, int] | None:
    """Not per worker: one process may hold every rank (`RANKS_BY_GPU_ORDER` ranks them by GPU)."""
    return None


__all__ = [
    "DEFAULT_PORT",
    "RANKS_BY_GPU_ORDER",
    "TITLE_PREFIX",
    "complete_settings",
    "rank_of_device",
]
