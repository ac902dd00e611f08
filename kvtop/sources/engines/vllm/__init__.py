"""vLLM seen from outside: its startup-log lines (`log_lines`) and how it behaves on a demo node (`demo`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from kvtop.domain.launch import LaunchSettings

# How the engine names its processes (`VLLM::…`) and where its server listens unless told.
TITLE_PREFIX = "VLLM"
RANKS_BY_GPU_ORDER = False  # titles state each worker's rank
DEFAULT_PORT = 8000

if TYPE_CHECKING:
    import httpx

    from kvtop.domain.observe import EngineLive


def read_live(http: httpx.Client, base_url: str, timeout_s: float) -> EngineLive:
    """The engine's live state from its endpoints (httpx is imported only when a live node is read)."""
    from kvtop.sources.engines.vllm.endpoint import read_live as read

    return read(http, base_url, timeout_s)


def complete_settings(settings: LaunchSettings, base_dir: Path | None) -> LaunchSettings:
    """Its launch names no file kvtop reads: the settings as they are."""
    return settings


def rank_of_device(settings: LaunchSettings, position: int) -> dict[str, int] | None:
    """Its workers' titles name their ranks."""
    return None



def __getattr__(name: str) -> Any:
    """`SIMULATION` (its demo behaviour) and `LOG_DIALECT` (its log lines), imported on first use:
    a command that reads neither a demo nor a log never loads them."""
    if name == "SIMULATION":
        from kvtop.sources.engines.vllm import demo

        return demo
    if name == "LOG_DIALECT":
        from kvtop.sources.engines.vllm.log_lines import DIALECT

        return DIALECT
    raise AttributeError(name)

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
