"""The rank ledger as rows: predicted beside observed, row by row, down to the unexplained bytes.

Predicted rows add up to the worker's predicted resident bytes (weights + KV pool + req_to_token +
runtime reserve + context); observed rows add up to the GPU's total (worker + others + driver
reserved + free). Every row can be read as tokens at this rank's exchange rate. A probe of the
GPU adds its own rows: tokens proven, bytes per token measured, and whether memory came back.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvtop.domain.node import NodeSnapshot, RankView
from kvtop.domain.observe import GpuObservation
from kvtop.domain.probe import ProbeOutcome, ProbeResult

GIB = 1 << 30
#: Probe outcomes that allocated and measured (the others allocated nothing worth a figure).
MEASURED_OUTCOMES = frozenset({ProbeOutcome.OK, ProbeOutcome.TARGET_NOT_MET, ProbeOutcome.OUT_OF_MEMORY})


@dataclass(frozen=True)
class LedgerRow:
    label: str
    predicted_bytes: int | None
    observed_bytes: int | None
    kind: str = "item"  # "item", "total", "gap", "gpu"


@dataclass(frozen=True)
class RankLedgerView:
    """One GPU's ledger: rows plus the rank's exchange rate (None where nothing is predicted)."""

    gpu: GpuObservation
    rank: RankView | None
    rows: tuple[LedgerRow, ...]
    kv_bytes_per_token: int | None

    @property
    def tokens_per_gib(self) -> float | None:
        return GIB / self.kv_bytes_per_token if self.kv_bytes_per_token else None

    def tokens(self, num_bytes: int | None) -> int | None:
        """Bytes read as tokens of KV on this rank (truncated toward zero)."""
        if num_bytes is None or not self.kv_bytes_per_token:
            return None
        return int(num_bytes / self.kv_bytes_per_token)


def observed_kv_pool_bytes(rank: RankView) -> tuple[int | None, bool]:
    """The KV pool the engine holds: as it reports it, else its live token count × bytes per token.

    The flag says whether the figure is derived (tokens × bytes) rather than reported.
    """
    observed, predicted = rank.observed, rank.predicted
    if observed.kv_pool_bytes is not None:
        return observed.kv_pool_bytes, False
    if observed.token_capacity is not None and predicted is not None:
        return observed.token_capacity * predicted.kv_bytes_per_token, True
    return None, False


def _gpu_rows(gpu: GpuObservation, rank: RankView | None) -> list[LedgerRow]:
    observed = rank.observed if rank else None
    if gpu.used_bytes is None and observed is None:  # nothing could be read (a lost GPU)
        return [LedgerRow(label, None, None) for label in ("foreign (co-tenants)", "driver reserved")]
    foreign = observed.foreign_bytes if observed else sum(p.used_bytes or 0 for p in gpu.processes)
    orphan = observed.orphan_bytes if observed else 0
    unattributed = observed.unattributed_bytes if observed else 0
    worker = observed.process_bytes if observed and observed.process_bytes is not None else 0
    rows = [
        LedgerRow("foreign (co-tenants)", None, foreign),
        LedgerRow("orphan engine workers", None, orphan),
        LedgerRow("unattributed (hidden)", None, unattributed),
    ]
    if gpu.used_bytes is not None:
        other = gpu.used_bytes - worker - foreign - orphan - unattributed
        if other:
            rows.append(LedgerRow("other used (no process)", None, other))
    rows.append(LedgerRow("driver reserved", None, gpu.reserved_bytes))
    return rows


def rank_ledger(snapshot: NodeSnapshot, gpu_index: int) -> RankLedgerView | None:
    """The ledger of the GPU with this NVML index (None if the snapshot has no such GPU)."""
    gpu = snapshot.observation.gpu(gpu_index)
    if gpu is None:
        return None
    rank = snapshot.rank_on_gpu(gpu_index)
    engine = snapshot.engine_of_gpu(gpu_index)
    predicted = rank.predicted if rank else None
    rows: list[LedgerRow] = []
    if rank is not None and predicted is not None:
        observed = rank.observed
        rows += [LedgerRow(f"weights · {row.component}", row.bytes, None) for row in predicted.weights.rows]
        rows.append(LedgerRow("weights", predicted.weights_bytes, observed.weights_bytes, "total"))
        token_pools = predicted.kv_pool_bytes - predicted.state_pool_bytes
        live_pool, derived = observed_kv_pool_bytes(rank)
        rows.append(LedgerRow("KV pool (live tok × B)" if derived else "KV pool", token_pools, live_pool))
        if predicted.state_pool_bytes:
            rows.append(LedgerRow("state pools (per request)", predicted.state_pool_bytes, None))
        rows.append(LedgerRow("req_to_token", predicted.req_to_token_bytes, None))
        rows.append(
            LedgerRow("graphs + activations", predicted.reserve_bytes - predicted.req_to_token_bytes, None)
        )
        rows.append(LedgerRow("context, NCCL", predicted.context_bytes, None))
        rows.append(
            LedgerRow(
                f"= worker pid {rank.pid}", rank.predicted_resident_bytes, observed.process_bytes, "total"
            )
        )
        if rank.attributed_outside_bytes:
            rows.append(LedgerRow("− held by others", -rank.attributed_outside_bytes, None))
        rows.append(LedgerRow("unexplained", None, rank.unexplained_bytes, "gap"))
    elif rank is not None:
        rows.append(LedgerRow(f"worker pid {rank.pid}", None, rank.observed.process_bytes, "total"))
    rows += _gpu_rows(gpu, rank)
    total = gpu.total_bytes
    predicted_free = None
    if total is not None and rank is not None and rank.predicted_resident_bytes is not None:
        predicted_free = total - rank.predicted_resident_bytes
    rows.append(LedgerRow("free", predicted_free, gpu.free_bytes))
    predicted_total = engine.ledger.gpu_total_bytes if predicted and engine and engine.ledger else None
    rows.append(LedgerRow("GPU total", predicted_total, total, "gpu"))
    return RankLedgerView(
        gpu=gpu,
        rank=rank,
        rows=tuple(rows),
        kv_bytes_per_token=predicted.kv_bytes_per_token if predicted else None,
    )


@dataclass(frozen=True)
class ProbeRow:
    """One row of the probe section, planned beside measured, as shown (the section is text)."""

    label: str
    planned: str
    measured: str
    alarm: bool = False  # memory that did not come back


def probe_rows(result: ProbeResult) -> tuple[ProbeRow, ...]:
    """Tokens proven, bytes per token measured, released — what a probe adds to the ledger."""
    measured = result.outcome in MEASURED_OUTCOMES
    predicted = result.bytes_per_token_predicted
    if result.target_tokens is not None:
        planned_tokens = f"{result.target_tokens:,}"
    elif result.budget_bytes is not None and predicted > 0:
        planned_tokens = f"≤ {max(0, result.budget_bytes) // predicted:,}"
    else:
        planned_tokens = "fill"
    per_token = "—"
    if result.bytes_per_token_measured is not None:
        delta = result.measured_vs_predicted
        per_token = f"{result.bytes_per_token_measured:,.1f}" + ("" if delta is None else f" ({delta:+.2%})")
    return (
        ProbeRow("probe: tokens proven", planned_tokens, f"{result.tokens_allocated:,}" if measured else "—"),
        ProbeRow("probe: bytes/token measured", f"{predicted:,}" if predicted else "—", per_token),
        ProbeRow(
            "probe: released",
            "yes",
            "yes" if result.released else "NO — NOT RELEASED",
            alarm=not result.released,
        ),
    )
