"""What the tightest rank cost every rank's pool, as `kvtop explain` says it (docs/engines/trtllm.md §5, §21).

TensorRT-LLM MIN-reduces max_tokens over its ranks (§4.1, §4.2): the rank with the least free memory sizes every
pool. Where the log prints each rank's budget line, the spread between them is memory held on the tightest GPU
besides the engine (shaamil-etched's trtllm-bench start at TP 8: 57.87 GiB free on one GPU against 61.38–61.64 on
the seven others, in all 63 of its runs), which a plan cannot know from the launch line. What it cost is counted
against the next tightest rank, where the MIN would fall had the tightest held as much, not against the most free.
"""

from __future__ import annotations

from kvtop.domain.engine_log import EngineLog
from kvtop.domain.engines.trtllm.eras import DEFAULT_FRACTION, Backend, as_engine_fraction
from kvtop.domain.engines.trtllm.log_records import TrtllmRankLog
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.explanation import Logged
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.wording import gib


def _rank_budgets(rank: TrtllmRankLog, backend: Backend) -> list[int]:
    """Bytes of each rank's budget a record holds: its first profiling line's (PyTorch backend, as explain reads it),
    else the least of its C++ `Memory usage …` lines, or every such line where they carry no rank prefix (trtllm-bench's
    MPI workers: one line a rank, all in one record), of the log's last start only."""
    if backend == "pytorch":
        first = next((p.available for p in rank.profiles if p.available), None)
        return [first.value_bytes] if first is not None else []
    lines = [m.available.value_bytes for m in rank.last_start_cpp_memory]
    return lines if rank.rank.unranked or not lines else [min(lines)]


def least_rank_notes(
    log: EngineLog, logged: Logged, settings: LaunchSettings, backend: Backend, bytes_per_token: int
) -> list[str]:
    """For a pool sized from the least of several ranks' budget lines: which one, and, where the next tightest rank had
    more, how many tokens each pool would have held had the tightest rank held as much (the MIN then falls on the next
    tightest; the C++ runtime multiplies its free memory by the fraction as a C++ float; the PyTorch backend's line is
    the budget itself)."""
    if logged.ranks_seen < 2:
        return []
    notes = [f"sized from the least budget over {logged.ranks_seen} ranks ({logged.available_kv_rank}): "
             "TensorRT-LLM MIN-reduces max_tokens over every rank"]  # fmt: skip
    budgets = sorted(b for r in log.ranks(TrtllmRankLog) for b in _rank_budgets(r, backend))
    if len(budgets) < 2 or budgets[1] <= budgets[0] or bytes_per_token <= 0:
        return notes
    least, following, most = budgets[0], budgets[1], budgets[-1]
    version = ResolvedVersion(text=settings.engine_version)
    fraction = settings.free_gpu_memory_fraction or DEFAULT_FRACTION
    scale = 1.0 if backend == "pytorch" else as_engine_fraction(fraction, version, backend)
    tokens = int(scale * following / bytes_per_token) - int(scale * least / bytes_per_token)
    others = f", the most {gib(most)}" if most > following else ""
    notes.append(f"the next tightest rank had {gib(following)}, {gib(following - least)} more than the tightest"
                 f"{others}: had the tightest held as much, every rank's pool would hold about {tokens:,} tokens "
                 "more; what holds the difference on the tightest GPU is not in the launch line (another process, or "
                 "buffers that rank alone holds: docs/engines/trtllm.md §5/§21)")  # fmt: skip
    return notes
