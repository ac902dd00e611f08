"""LMDeploy seen from outside: its startup-log lines (`log_lines`), its `/metrics` (`endpoint`) and how
it behaves on a demo node (`demo`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from kvtop.domain.launch import LaunchSettings

# LMDeploy gives its processes no title of its own (TurboMind drives every GPU from threads of the
# server process; the PyTorch engine's workers are spawned Python processes): the prefix is never
# matched by a `prefix::role` title, and ranks are read from the GPUs the engine's processes hold.
TITLE_PREFIX = "lmdeploy"
DEFAULT_PORT = 23333  # `lmdeploy serve api_server --server-port` default
RANKS_BY_GPU_ORDER = True

if TYPE_CHECKING:
    import httpx

    from kvtop.domain.observe import EngineLive


def read_live(http: httpx.Client, base_url: str, timeout_s: float) -> EngineLive:
    """The engine's live state from its endpoints (httpx is imported only when a live node is read)."""
    from kvtop.sources.engines.lmdeploy.endpoint import read_live as read

    return read(http, base_url, timeout_s)


def complete_settings(settings: LaunchSettings, base_dir: Path | None) -> LaunchSettings:
    """Its launch names no file kvtop reads: the settings as they are."""
    return settings


def rank_of_device(settings: LaunchSettings, position: int) -> dict[str, int] | None:
    """Not per worker: one process may hold every rank (`RANKS_BY_GPU_ORDER` ranks them by GPU)."""
    return None



def __getattr__(name: str) -> Any:
    """`SIMULATION` (its demo behaviour) and `LOG_DIALECT` (its log lines), imported on first use:
    a command that reads neither a demo nor a log never loads them."""
    if name == "SIMULATION":
        from kvtop.sources.engines.lmdeploy import demo

        return demo
    if name == "LOG_DIALECT":
        from kvtop.sources.engines.lmdeploy.log_lines import DIALECT

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
