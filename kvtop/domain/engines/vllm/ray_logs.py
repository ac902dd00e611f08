"""Logs of vLLM workers run as Ray actors: what Ray's log deduplication hides, and the estimate that stands in.

Ray prints the first of several workers' lines that differ only in numbers and folds the others into
`… [repeated Nx across cluster]` (RAY_DEDUP_LOGS=0 turns it off). On a KV-memory line (`Available KV
cache memory`, V0's "the rest of the memory reserved for KV Cache") N workers' figures are then not in
the log, while the engine sizes the pool from the least of all of them (docs/engines/vllm.md §1 step 4,
§11). A logged pool smaller than the least figure shown is what a hidden, tighter worker makes: that
worker's KV memory is the input the log lacks, and it is bounded (issue #28 item 7: estimated, not
"insufficient"): at most the least figure shown (the engine took the least), at least what one request
of max_model_len needs (the engine started: V0 `raise_if_cache_size_invalid`, V1
`_check_enough_kv_cache_memory`, §9). The logged pool is judged against that range, with the KV memory it
implies; a pool no value in it rebuilds is a mismatch.
"""

from __future__ import annotations

from kvtop.domain.engine_log import EngineLog
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.vllm.log_records import VllmRankLog
from kvtop.domain.explain_estimate import EstimateRun, rebuild_with_estimate
from kvtop.domain.explanation import EstimatedInput, Explanation
from kvtop.domain.model import LayerKind
from kvtop.domain.rounding import round_up
from kvtop.domain.wording import gib


def folded_kv_figures(log: EngineLog) -> int:
    """How many workers' KV-memory figures Ray's deduplication folded away."""
    return sum(sum(rank.ray_folded_kv_figures) for rank in log.ranks(VllmRankLog))


def hidden_tighter_worker(
    result: Explanation, log: EngineLog, run: EstimateRun, least_shown: int, least_rank: str | None
) -> Explanation:
    """A mismatch whose logged pool is below what the least figure shown (`least_shown` bytes, printed by
    `least_rank`) gives, in a log where Ray folded workers' KV-memory lines: rebuilt with the hidden worker's
    KV memory estimated within its bounds (see the module docstring)."""
    folded = folded_kv_figures(log)
    logged, least = result.logged.token_capacity, result.token_capacity_min
    if not folded or result.verdict != "mismatch" or logged is None or least is None or logged >= least:
        return result
    ledger = result.ledger
    if ledger is None or not ledger.kv_bytes_per_token:
        return _insufficient(result, folded, logged, least)
    page = ledger.engine.page_size or 1
    # one max_model_len request in whole blocks where every layer keeps KV for every token; a window or a
    # recurrent state needs less, so there the floor is one block
    whole = set(run.model.layer_attention) <= {LayerKind.FULL, LayerKind.NONE, LayerKind.SHARED}
    context = (run.settings.context_length or page) if whole else page
    floor = round_up(context, page) * ledger.kv_bytes_per_token
    where = f", {least_rank}" if least_rank and least_rank != "unranked" else ""
    estimate = EstimatedInput(
        field="available_kv_bytes",
        label="hidden worker's KV memory",
        low_bytes=min(floor, least_shown),
        value_bytes=least_shown,
        high_bytes=least_shown,
        source="assumed",
        basis=(
            f"Ray folded {folded} workers' KV-memory lines into `[repeated Nx across cluster]` (RAY_DEDUP_LOGS=0 "
            f"prints them); vLLM takes the least worker, so the hidden one had at most the least figure shown "
            f"({gib(least_shown)}{where}) and at least the {gib(floor)} {context:,} tokens need "
            f"(the engine started: one max_model_len request, or one block)"
        ),
    )
    note = (
        f"the logged {logged:,} tokens are fewer than the least KV memory shown gives "
        f"({least:,}–{result.token_capacity_max or least:,}): a worker whose line Ray folded away had less"
    )

    def at(value: int) -> MeasuredInputs:
        return MeasuredInputs(available_kv_bytes=value)

    return rebuild_with_estimate("vllm", result.logged, run, estimate, at, (*result.notes, note))


def _insufficient(result: Explanation, folded: int, logged: int, least: int) -> Explanation:
    """No geometry to estimate with: the hidden figures are what the log lacks."""
    missing = (
        f"the KV memory of the {folded} workers whose lines Ray's log deduplication folded into "
        f"`[repeated Nx across cluster]` (RAY_DEDUP_LOGS=0 prints them): vLLM sizes the pool from the least "
        f"worker, and the logged {logged:,} tokens are fewer than the least figure shown gives "
        f"({least:,}–{result.token_capacity_max or least:,})"
    )
    return result.model_copy(
        update={"verdict": "insufficient", "missing": (missing,), "gap_tokens": None,
                "cause": None}
    )
