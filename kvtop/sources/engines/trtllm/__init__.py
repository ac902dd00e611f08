"""TensorRT-LLM seen from outside: its startup-log lines (`log_lines`), trtllm-serve's endpoints
(`endpoint`), the LLM-API options YAML its launch names (`llm_api_options`) and how it behaves on a
demo node (`demo`).

No TensorRT-LLM release names its processes: trtllm-serve runs its ranks as MPI workers
(`python3 -m mpi4py.futures.server`, spawned under it), found by their ancestry; each worker binds
the GPU of its rank (`device = rank % gpus_per_node`), so its rank is its GPU's place among the
GPUs it sees (`rank_of_device`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from kvtop.domain.launch import LaunchSettings

# TensorRT-LLM sets no process titles; the registry wants a prefix, and this one names nothing it runs.
TITLE_PREFIX = "trtllm"
DEFAULT_PORT = 8000  # trtllm-serve --port
RANKS_BY_GPU_ORDER = False  # one MPI worker per rank, ranked per worker by `rank_of_device`

if TYPE_CHECKING:
    import httpx

    from kvtop.domain.observe import EngineLive


def read_live(http: httpx.Client, base_url: str, timeout_s: float) -> EngineLive:
    """The engine's live state from its endpoints (httpx is imported only when a live node is read)."""
    from kvtop.sources.engines.trtllm.endpoint import read_live as read

    return read(http, base_url, timeout_s)


def complete_settings(settings: LaunchSettings, base_dir: Path | None) -> LaunchSettings:
    """The settings with the --extra_llm_api_options YAML the launch names (PyYAML imported only then)."""
    if not settings.extra_llm_api_options:
        return settings
    from kvtop.sources.engines.trtllm.llm_api_options import complete_settings as complete

    return complete(settings, base_dir)


def rank_of_device(settings: LaunchSettings, position: int) -> dict[str, int]:
    """A worker's rank from its GPU's place among the GPUs it sees: TensorRT-LLM's Mapping puts the
    TP ranks innermost (rank = pp_rank × tp + tp_rank); under attention DP each rank is its own DP rank."""
    tp = max(settings.tp, 1)
    parts = {"tp": position % tp, "pp": position // tp}
    if settings.enable_dp_attention:
        parts["dp"] = position % tp
    return parts



def __getattr__(name: str) -> Any:
    """`SIMULATION` (its demo behaviour) and `LOG_DIALECT` (its log lines), imported on first use:
    a command that reads neither a demo nor a log never loads them."""
    if name == "SIMULATION":
        from kvtop.sources.engines.trtllm import demo

        return demo
    if name == "LOG_DIALECT":
        from kvtop.sources.engines.trtllm.log_lines import DIALECT

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
