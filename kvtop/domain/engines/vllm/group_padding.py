"""The padding layers vLLM adds to a hybrid's KV cache groups (docs/engines/vllm.md §4.1 step 6), in its own words.

`_get_kv_cache_groups_uniform_page_size` splits each kind's n layers into cdiv(n, group_size) groups of group_size
slots; the slots no layer fills are padding, and it warns "Add %d padding layers, may waste at most %.2f%% KV cache
memory" (padding ÷ n; v1/core/kv_cache_utils.py:1195-1212 at v0.24.0, v1/core/kv_cache_planning.py:570-586 at
v0.34.0), once per KV spec. A drafter's attention layers of the target's spec count among the full-attention ones
(MTP: Qwen3.6-27B's 16 + 1 against 48 GDN layers is a group size of 17, and 3 padding slots); a drafter's layers of a
spec of their own (`KvPool.own_spec_layers`, a DFlash drafter) are a kind apart and warned on apart (Qwen3.6-27B's 16
beside a 5-layer DFlash drafter in groups of 5: 'Add 4 padding layers, may waste at most 25.00%' for the 16, none
for the 5).
"""

from __future__ import annotations

from kvtop.domain.kv import KvBook, PoolName
from kvtop.domain.rounding import ceil_div

# the KV book's pool whose layers a group kind holds
KIND_POOL: dict[str, PoolName] = {"full": "full", "mamba": "state", "swa": "swa", "chunked": "swa", "cross": "cross"}


def padding_note(kv: KvBook, groups: list[tuple[str, int]], group_size: int) -> str:
    """vLLM's padding warning for each group kind whose groups hold more slots than it has layers; "" where none.
    `groups`: (kind, groups of that kind) as the budget grouped them, each of `group_size` slots; "" too where the
    groups are not one kind a pool (--disable-hybrid-kv-cache-manager's one group of full and windowed layers)."""
    grouped = {KIND_POOL.get(kind) for kind, _ in groups}
    held = {pool.name for pool in kv.pools if pool.name in KIND_POOL.values()}
    if grouped != held or len(grouped) != len(groups):
        return ""
    words = []
    for kind, count in groups:
        pool = kv.pool(KIND_POOL[kind])  # every kind is KIND_POOL's: the check above
        if pool is None or not pool.layers:
            continue
        own = pool.own_spec_layers if kind == "full" else 0  # a drafter's own spec: its groups apart
        specs = [(pool.layers - own, count - ceil_div(own, group_size), ""), (own, ceil_div(own, group_size), ", drafter")]
        for layers, spec_groups, whose in specs:
            padding = spec_groups * group_size - layers if layers else 0
            if padding > 0:
                words.append(
                    f"'Add {padding} padding layers, may waste at most {padding / layers * 100:.2f}% KV cache "
                    f"memory' ({kind}{whose}: {spec_groups} groups of {group_size} for {layers} layers)"
                )
    return "; ".join(words)

