"""Logs of vLLM workers run as Ray actors: what Ray's log deduplication hides.

Ray prints the first of several workers' lines that differ only in numbers and folds the others into
`… [repeated Nx across cluster]` (RAY_DEDUP_LOGS=0 turns it off). On a KV-memory line (`Available KV
cache memory`, V0's "the rest of the memory reserved for KV Cache") N workers' figures are then not in
the log, while the engine sizes the pool from the least of all of them (docs/engines/vllm.md §1 step 4,
§11). A logged pool smaller than the least figure shown is what a hidden, tighter worker makes: the log
lacks that worker's figure, which is said, rather than called a mismatch.
"""

from __future__ import annotations

from kvtop.domain.engine_log import EngineLog
from kvtop.domain.engines.vllm.log_records import VllmRankLog
from kvtop.domain.explanation import Explanation
from kvtop.domain.wording import gib


def folded_kv_figures(log: EngineLog) -> int:
    """How many workers' KV-memory figures Ray's deduplication folded away."""
    return sum(sum(rank.ray_folded_kv_figures) for rank in log.ranks(VllmRankLog))


def hidden_tighter_worker(result: Explanation, log: EngineLog) -> Explanation:
    """A mismatch whose logged pool is below what the least figure shown gives, in a log where Ray folded
    workers' KV-memory lines: `insufficient`, naming the hidden figures and the memory the pool implies."""
    folded = folded_kv_figures(log)
    logged, least = result.logged.token_capacity, result.token_capacity_min
    if not folded or result.verdict != "mismatch" or logged is None or least is None or logged >= least:
        return result
    implied = f"; the logged pool implies about {gib(logged * result.kv_bytes_per_token)} on it" if result.kv_bytes_per_token else ""
    missing = (
        f"the KV memory of the {folded} workers whose lines Ray's log deduplication folded into "
        f"`[repeated Nx across cluster]` (RAY_DEDUP_LOGS=0 prints them): vLLM sizes the pool from the least "
        f"worker, and the logged {logged:,} tokens are fewer than the least figure shown gives "
        f"({least:,}–{result.token_capacity_max or least:,}){implied}"
    )
    return result.model_copy(
        update={"verdict": "insufficient", "missing": (missing,), "gap_tokens": None, "gap_bytes": None, "cause": None}
    )
