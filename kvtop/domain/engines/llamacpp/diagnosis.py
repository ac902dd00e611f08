"""How llama.cpp's rules price a cause and what its fixes are (docs/engines/llamacpp.md §5).

llama.cpp's cache is sized by `-c`, not by free memory: memory another process holds does not shrink
a restart's cache, it makes the allocation fail. So a co-tenant costs no tokens until a restart would
not fit, and the fixes are a smaller `-c`, a quantised cache type (`-ctk q8_0 -ctv q8_0`), or fewer slots.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from kvtop.domain.diagnose_findings import Finding, LayoutOptions, LedgerRule, Thresholds
from kvtop.domain.engines.least_free import restart_capacity as restart_capacity  # -c's cells, or 0
from kvtop.domain.engines.least_free import restart_ledger as restart_ledger
from kvtop.domain.engines.llamacpp.cells import CELL_PAD
from kvtop.domain.engines.llamacpp.flags import cache_types
from kvtop.domain.engines.llamacpp.placement import KvPlacement, host_bytes, planned
from kvtop.domain.engines.restart import restart_without_kv
from kvtop.domain.ledger_values import Ledger
from kvtop.domain.rounding import round_down

if TYPE_CHECKING:
    from kvtop.domain.diagnose_engine import EngineOnNode


def spread_evidence(ledger: Ledger, tokens: int, ranks: str) -> str:
    return f"llama.cpp allocates the -c it is given on one GPU: −{tokens:,} tokens means the allocation would fail"


def fp8_kv_dtype(ledger: Ledger) -> str:
    """llama.cpp has no FP8 cache type: its 8-bit cache is `q8_0`."""
    return "q8_0"


def layout_alternatives(ledger: Ledger, attn_tp: int) -> LayoutOptions:
    """None: llama.cpp has no TP ranks (its split modes are not modelled)."""
    return LayoutOptions(none_because="not modelled: llama.cpp's split modes (kvtop plans one device)")


def reported_kv_memory(ledger: Ledger, reported_kv_pool_bytes: int | None) -> int | None:
    return None


def absolute_budget(ledger: Ledger, kv_bytes: int) -> dict[str, int | float] | None:
    """The context whose cache takes `kv_bytes` of GPU memory: `-c` cells (whole 256-cell steps); a cell's GPU
    share is its layers' on the GPU (placement.py: none under -nkvo, when no context answers)."""
    model, settings = ledger.model, ledger.settings
    every = KvPlacement(host_layers=tuple(range(model.num_layers)), why="")
    k_type, v_type = cache_types(settings)
    one = {kind: 1 for kind in set(model.layer_attention)}
    total = host_bytes(model, every, one, k_type, v_type)
    on_gpu = total - host_bytes(model, planned(model, settings), one, k_type, v_type)
    per_cell = ledger.kv_bytes_per_token * on_gpu // total if total else ledger.kv_bytes_per_token
    cells = round_down(kv_bytes // per_cell, CELL_PAD) if per_cell else 0
    return {"context_length": cells} if cells >= CELL_PAD else None


def reserve_finding(engine: EngineOnNode, thresholds: Thresholds) -> Finding | None:
    """None: llama.cpp keeps no share of memory in reserve."""
    return None


def restart_finding(engine: EngineOnNode) -> Finding | None:
    """`restart_will_not_fit`: the cache `-c` asks for no longer fits beside the weights on the GPU as it is now."""
    return restart_without_kv(
        engine, leaves="would fail to allocate its KV cache",
        fix=lambda _, gpu: f"free memory on GPU {gpu}, or a smaller -c, or -ctk q8_0 -ctv q8_0",
        evidence=("llama.cpp allocates the whole -c at start: 'failed to allocate buffer for kv cache'",),
    )  # fmt: skip


ledger_rules: Sequence[LedgerRule] = ()
