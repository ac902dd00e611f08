"""SGLang seen from outside: its startup-log lines (`log_lines`) and how it behaves on a demo node (`demo`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from kvtop.domain.launch import LaunchSettings
from kvtop.sources.engines.sglang import demo as SIMULATION
from kvtop.sources.engines.sglang.log_lines import DIALECT as LOG_DIALECT

# How the engine names its processes (`sglang::…`) and where its server listens unless told.
TITLE_PREFIX = "sglang"
RANKS_BY_GPU_ORDER = False  # titles state each worker's rank
DEFAULT_PORT = 30000

if TYPE_CHECKING:
    import httpx

    from kvtop.domain.observe import EngineLive


def read_live(http: httpx.Client, base_url: str, timeout_s: float) -> EngineLive:
    """The engine's live state from its endpoints (httpx is imported only when a live node is read)."""
    from kvtop.sources.engines.sglang.endpoint import read_live as read

    return read(http, base_url, timeout_s)


def complete_settings(settings: LaunchSettings, base_dir: Path | None) -> LaunchSettings:
    """Its launch names no file kvtop reads: the settings as they are."""
    return settings


def rank_of_device(settings: LaunchSettings, position: int) -> dict[str, int] | None:
    """Its workers' titles name their ranks."""
    return None


__all__ = [
    "DEFAULT_PORT",
    "LOG_DIALECT",
    "RANKS_BY_GPU_ORDER",
    "SIMULATION",
    "TITLE_PREFIX",
    "complete_settings",
    "rank_of_device",
    "read_live",
]
