"""What the tightest rank cost every rank's pool, as `kvtop explain` says it (docs/engines/trtllm.md §5, §21).

TensorRT-LLM MIN-reduces max_tokens over its ranks (§4.1, §4.2): the rank with the least free memory sizes every
pool. Where the log prints each rank's budget line, the spread between them is memory held on the tightest GPU
besides the engine (shaamil-etched's trtllm-bench start at TP 8: 3.52 GiB on one GPU in all 63 of its runs), which a
plan cannot know from the launch line.
"""

from __future__ import annotations

from kvtop.domain.engine_log import EngineLog, Measured
from kvtop.domain.engines.trtllm.eras import DEFAULT_FRACTION, Backend, as_engine_fraction
from kvtop.domain.engines.trtllm.log_records import TrtllmRankLog
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.explanation import Logged
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.wording import gib


def _budgets(rank: TrtllmRankLog, backend: Backend) -> list[Measured]:
    """The budget lines a record holds: the profiling lines' (PyTorch backend), else the C++ runtime's free memory."""
    if backend == "pytorch":
        return [p.available for p in rank.profiles if p.available]
    return [m.available for m in rank.cpp_memory]


def least_rank_notes(
    log: EngineLog, logged: Logged, settings: LaunchSettings, backend: Backend, bytes_per_token: int
) -> list[str]:
    """For a pool sized from the least of several ranks' budget lines: which one, and, where they differ, how many
    tokens each pool would have held sized from the most free rank's (the C++ runtime multiplies its free memory by
    the fraction as a C++ float; the PyTorch backend's line is the budget itself)."""
    if logged.ranks_seen < 2:
        return []
    notes = [f"sized from the least budget over {logged.ranks_seen} ranks ({logged.available_kv_rank}): "
             "TensorRT-LLM MIN-reduces max_tokens over every rank"]  # fmt: skip
    budgets = [m.value_bytes for r in log.ranks(TrtllmRankLog) for m in _budgets(r, backend)]
    least, most = min(budgets, default=0), max(budgets, default=0)
    if most > least and bytes_per_token > 0:
        version = ResolvedVersion(text=settings.engine_version)
        fraction = settings.free_gpu_memory_fraction or DEFAULT_FRACTION
        scale = 1.0 if backend == "pytorch" else as_engine_fraction(fraction, version, backend)
        tokens = int(scale * most / bytes_per_token) - int(scale * least / bytes_per_token)
        notes.append(f"the rank with the most ({gib(most)}) had {gib(most - least)} more than the tightest: sized "
                     f"from it, every rank's pool would hold about {tokens:,} tokens more; what holds the difference "
                     "on the tightest GPU is not in the launch line (another process, or buffers that rank alone holds: "
                     "docs/engines/trtllm.md §5, §21)")  # fmt: skip
    return notes
