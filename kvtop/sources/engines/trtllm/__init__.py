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

from kvtop.domain.launch import LaunchSettings

# TensorRT-LLM sets no process titles; the registry wants a prefix, and this one names nothing it runs.
TITLE_PREFIX = "trtllm"
DEFAULT_PORT = 8000  # trtllm-serve --port
RANKS_BY_GPU_ORDER = False  # one MPI worker per rank, ranked per worker by `rank_of_device`


def complete_settings(
    settings: LaunchSettings, base_dir: Path | None, *, strict: bool = False
) -> LaunchSettings:
    """The settings with the --extra_llm_api_options YAML the launch names (PyYAML imported only then)."""
    if not settings.extra_llm_api_options:
        return settings
    from kvtop.sources.engines.trtllm.llm_api_options import complete_settings as complete

    return complete(settings, base_dir, strict=strict)


def rank_of_device(settings: LaunchSettings, position: int) -> dict[str, int]:
    """A worker's rank from its GPU's place among the GPUs it sees: TensorRT-LLM's Mapping puts the
    TP ranks innermost (rank = pp_rank × tp + tp_rank); under attention DP each rank is its own DP rank."""
    tp = max(settings.tp, 1)
    parts = {"tp": position % tp, "pp": position // tp}
    if settings.enable_dp_attention:
        parts["dp"] = position % tp
    return parts


__all__ = [
    "DEFAULT_PORT",
    "RANKS_BY_GPU_ORDER",
    "TITLE_PREFIX",
    "complete_settings",
    "rank_of_device",
]
