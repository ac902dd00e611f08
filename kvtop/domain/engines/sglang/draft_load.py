"""An MTP draft's own embedding and LM head, resident when SGLang profiles the target's KV pool, by release
(docs/engines/sglang.md §19.1).

The draft class of a model's own next-n layers (qwen3_5_mtp.py, deepseek_nextn.py, …) builds an embedding and an LM
head of the target's shapes and loads them; `init_lm_head` → `set_embed_and_head` swaps in the target's and empties
the cache. From 0.5.14 the scheduler builds the draft worker before the pools (managers/scheduler.py
`init_model_worker`: `maybe_init_draft_worker` then `init_memory_pools`; the draft's `init_lm_head` runs in its
`alloc_memory_pool`, after the target's), so the target's profile sees them (0.5.14: speculative/eagle_worker_v2.py
:216-231; 0.5.22 the same, scheduler.py:1103-1107). Before it (read at 0.5.10, 0.5.12, 0.5.13) the target's
ModelRunner sizes its pool in its own `initialize`, before the draft exists: nothing of the draft is resident.
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.weights import WeightsBook

SOURCE = "managers/scheduler.py init_model_worker, speculative/eagle_worker_v2.py alloc_memory_pool → init_lm_head"
DRAFT_BEFORE_POOL_ERAS: Eras[bool] = Eras((
    Era("", False, "model_executor/model_runner.py initialize → init_memory_pool (read at 0.5.10, 0.5.12, 0.5.13)"),
    Era("0.5.14", True, f"{SOURCE} (read at 0.5.14, 0.5.22)"),
))  # fmt: skip
_OWN_COPIES = ("embedding", "lm_head")  # the target's rows the draft repeats (a tied head: the embedding alone)


def mtp_embed_head_bytes(weights: WeightsBook, version: ResolvedVersion) -> int:
    """Bytes of the MTP draft's own embedding and LM head at the target's profile (0 before 0.5.14): the
    target's rows of those components on this rank."""
    if not DRAFT_BEFORE_POOL_ERAS.at(version):
        return 0
    return sum(row.bytes for row in weights.rows if row.component in _OWN_COPIES)
