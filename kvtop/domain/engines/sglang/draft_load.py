"""An MTP draft's own embedding and LM head, resident when SGLang profiles the target's KV pool, by release
(docs/engines/sglang.md §19.1).

The draft class of a model's own next-n layers (qwen3_5_mtp.py, deepseek_nextn.py, …) builds an embedding and an LM
head of the target's shapes and loads them; `init_lm_head` → `set_embed_and_head` swaps in the target's and empties
the cache. From 0.5.14 the scheduler builds the draft worker before the pools (managers/scheduler.py
`init_model_worker`: `maybe_init_draft_worker` then `init_memory_pools`; the draft's `init_lm_head` runs in its
`alloc_memory_pool`, after the target's), so the target's profile sees them (0.5.14: speculative/eagle_worker_v2.py
:216-231; 0.5.22 the same, scheduler.py:1103-1107). Before it (read at 0.5.10, 0.5.12, 0.5.13) the target's
ModelRunner sizes its pool in its own `initialize`, before the draft exists: the draft's layers, its own embedding and
LM head and its own KV pool (the target's memory_pool_config) all come out of what the target's pool leaves
(0.5.13: managers/scheduler.py init_model_worker → maybe_init_draft_worker after init_tp_model_worker;
speculative/eagle_worker_v2.py:171-199, the draft's TpModelWorker then init_lm_head).
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras
from kvtop.domain.weights import WeightsBook

SOURCE = "managers/scheduler.py init_model_worker, speculative/eagle_worker_v2.py alloc_memory_pool → init_lm_head"
DRAFT_BEFORE_POOL_ERAS: Eras[bool] = Eras((
    Era("", False, "model_executor/model_runner.py initialize → init_memory_pool (0.5.13 :784) in the target's "
        "worker, before managers/scheduler.py init_model_worker → maybe_init_draft_worker (0.5.13 :816-818) builds the "
        "draft (read at 0.5.10, 0.5.12, 0.5.13)"),
    Era("0.5.14", True, f"{SOURCE} (read at 0.5.14, 0.5.22)"),
))  # fmt: skip
_OWN_COPIES = ("embedding", "lm_head")  # the target's rows the draft repeats (a tied head: the embedding alone)


def mtp_embed_head_bytes(weights: WeightsBook) -> int:
    """Bytes of the MTP draft's own embedding and LM head: the target's rows of those components on this rank
    (before the target's pool from 0.5.14, after it before: `DRAFT_BEFORE_POOL_ERAS`)."""
    return sum(row.bytes for row in weights.rows if row.component in _OWN_COPIES)
