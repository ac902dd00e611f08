"""Draft-model KV kvtop does not model beside a hybrid or sliding-window target (reader R5's #2 and #11, session 72).

vLLM gives a draft model's attention layers a KV spec of their own (their heads and head size). Beside a target with
state (Mamba / GDN) or sliding-window groups it unifies the pages (v1/core/kv_cache_utils.py v0.24.0
unify_kv_cache_spec_page_size :1049-1094): the largest page sets it, and a spec of a smaller page has its block size
scaled by the ratio (:1069-1083), so a drafter whose bytes a token differ holds blocks of another token count. kvtop merges the drafter's layers into the target's full pool on one block
size, right only where a draft layer's bytes a token are the target full layer's (Qwen3.6-27B's 4 × 256 beside
z-lab's DFlash 8 × 128: 2,048 B each in fp8); otherwise it would average a page vLLM never builds, so it refuses by
name. At PP > 1 its projected groups (pp_groups.py) do not count a drafter's own kind: refused there too.
"""

from __future__ import annotations

from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.kv import KvBook

SOURCE = "v1/core/kv_cache_utils.py v0.24.0 unify_kv_cache_spec_page_size :1049-1094"


def check_draft_cell(draft_cell: float | None, plain: KvBook, with_draft: KvBook, pp: int) -> None:
    """Refuse a draft model's KV where the target has state or sliding-window pools and a draft layer's bytes a token
    (`draft_cell`, None: the target's) are not the target's full layer's, or its own-spec layers meet PP > 1."""
    full = plain.pool("full")
    if draft_cell is None or full is None or not any(plain.pool(name) for name in ("state", "swa")):
        return
    target_cell = full.bytes_per_layer_token
    if abs(draft_cell - target_cell) > 1e-6:
        raise UnsupportedModelError(
            f"the draft's layers hold {draft_cell:,.0f} B a token where the target's full-attention layers hold "
            f"{target_cell:,.0f} B, beside the target's state or sliding-window groups: vLLM scales the smaller "
            f"page's block to the largest page ({SOURCE}), which kvtop does not model",
            field="--speculative-config",
        )
    drafted = with_draft.pool("full")
    if pp > 1 and drafted is not None and drafted.own_spec_layers:
        raise UnsupportedModelError(
            "a draft's layers of their own KV spec beside a hybrid target at --pipeline-parallel-size > 1: its own "
            "group kind on the last stage is not modelled by kvtop (pp_groups.py projects the target's kinds alone)",
            field="--pipeline-parallel-size",
        )
