"""The KV memory a refused vLLM start's `estimated maximum model length` pins (docs/engines/vllm.md §4.2).

vLLM's admission error prints the KV memory to two decimals of GiB, but also "the estimated maximum model length is
N": the longest L whose blocks, cdiv(L, block), fit the memory its check counts (`_estimate_max_model_len_from_groups`,
v0.33.0 v1/core/kv_cache_planning.py). Where one request's blocks are its length's (one full-attention group), N is
a whole number of blocks, exactly: the memory the check counted held N ÷ block blocks and not one more. From v0.29.0
the check counts the memory less one block (the null block, `admission_reserved_blocks`), so the pool the worker
would allocate holds one block more than N says. Read as two decimals alone, the memory's central value can sit
blocks away from what vLLM counted (case spark-vllm-docker-396: 22.5 GiB makes 11,891 blocks of MiniMax-M2.7 at
TP 2, the log's 190,272 tokens 11,892 counted + 1 held back): the printed length settles it.
"""

from __future__ import annotations

from kvtop.domain.engine_log import EngineLog, Measured
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.eras import admission_reserved_blocks
from kvtop.domain.engines.vllm.log_records import VllmRankLog
from kvtop.domain.ledger import Ledger
from kvtop.domain.wording import gib_range


def printed_estimate(log: EngineLog) -> int | None:
    """The admission error's `estimated maximum model length is N`, where the log kept it."""
    return log.first(
        VllmRankLog,
        lambda r: next((e.estimated_max_model_len for e in r.admission_errors if e.estimated_max_model_len), None),
    )


def pinned_memory(
    available: Measured, ledger: Ledger, estimate: int, version: ResolvedVersion
) -> tuple[Measured | None, str]:
    """The KV memory within the printed figure's rounding that makes vLLM's estimate `estimate`, and what was read;
    None where the ledger's request is not its length's blocks or the two disagree (said, the printed one kept)."""
    engine = ledger.engine
    block, per_block = engine.page_size, engine.block_bytes  # the budget's block: page × group size (budget.py)
    if not block or not per_block or engine.estimated_max_model_len is None or estimate % block:
        return None, "the log's estimated maximum model length is not a whole number of one group's blocks: not read"
    held = admission_reserved_blocks(version)
    pool = estimate // block + held  # blocks the memory made: those the check counted, and the one it held back
    low, high = max(available.low_bytes, pool * per_block), min(available.high_bytes, (pool + 1) * per_block - 1)
    counted = f"the log's estimated maximum model length {estimate:,} is {estimate // block:,} blocks of {block} counted"
    counted += f" + {held} held back (the null block, v0.29.0+)" if held else ""
    if low > high:
        return None, (f"{counted}, which {available.text} GiB cannot make at kvtop's {per_block:,} B a block: the "
                      "model, TP, KV dtype or release kvtop was told differ from the run's; the printed memory kept")
    pinned = Measured(
        value_bytes=(low + high) // 2, low_bytes=low, high_bytes=high, decimals=available.decimals,
        text=available.text, unit=available.unit,
    )  # fmt: skip
    said = f"{counted}: a pool of {pool:,} blocks, {gib_range(low, high, digits=4)} of KV memory"
    return pinned, said
