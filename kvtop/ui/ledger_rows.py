"""The rank ledger as rows: predicted beside observed, row by row, down to the unexplained bytes.

Both columns add up to the GPU total. Predicted: the worker's parts as the explained ledger has
them (weights + KV pool + req_to_token + graphs/activations + context: the pool others' memory
shrank is already the smaller one, so the rows are the tokens the waterfall ends on) make the
predicted worker; then the rows the prediction takes as given from NVML (other
processes, driver reserved), and free is what is left. SGLang's context is "total − free before
load" (its free memory excludes the driver-reserved bytes NVML keeps outside every process), so
those bytes move from its context row to the driver-reserved row; vLLM budgets a fraction of
the total and its context is the worker's own. Observed: worker + others + driver
reserved + free. `unexplained` is the worker's bytes no row accounts for: above the predicted
worker, or below it by more than the graphs + activations reserve (a reserve not yet claimed
stays free, and the free row shows it). Every row can be read as tokens at this rank's one
exchange rate, bar the KV pool where the engine reports its tokens: there the engine's count. A probe of the GPU adds its own rows: tokens proven, bytes per token measured,
and whether memory came back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kvtop.domain.capacity import CapacitySource, capacity_said
from kvtop.domain.deployment import Charge
from kvtop.domain.diagnose_findings import Finding
from kvtop.domain.ledger_words import component_words
from kvtop.domain.node import NodeSnapshot, RankView, WorkerPrediction, outside_bytes
from kvtop.domain.observe import GpuObservation
from kvtop.domain.probe import ProbeOutcome, ProbeResult

#: Probe outcomes that allocated and measured (the others allocated nothing worth a figure).
MEASURED_OUTCOMES = frozenset({ProbeOutcome.OK, ProbeOutcome.TARGET_NOT_MET, ProbeOutcome.OUT_OF_MEMORY})
#: Findings that price bytes other processes hold on one GPU, by the row those bytes sit in.
OUTSIDE_RULES = {
    "co_tenant": "foreign (co-tenants)",
    "orphan_worker": "orphan engine workers",
    "unattributed_bytes": "unattributed (hidden)",
}


@dataclass(frozen=True)
class LedgerRow:
    label: str
    predicted_bytes: int | None
    observed_bytes: int | None
    kind: str = "item"  # "item", "total", "gap", "gpu"
    reported_tokens: int | None = None  # the engine's own count for the row (the KV pool's), shown for its tokens


@dataclass(frozen=True)
class OutsideCost:
    """What a finding says bytes held by others on this GPU cost the KV pool (the engine's own rule)."""

    row: str
    finding: str  # the finding's title, as the pane heads it (never its rule's id)
    tokens: int


@dataclass(frozen=True)
class RankLedgerView:
    """One GPU's ledger: rows plus the rank's exchange rate (None where nothing is predicted)."""

    gpu: GpuObservation
    rank: RankView | None
    rows: tuple[LedgerRow, ...]
    outside_costs: tuple[OutsideCost, ...] = ()
    capacity_source: CapacitySource = CapacitySource.LIVE  # who states the rank's token figure (its engine's)

    # the per-token figures are the rank's ledger's (`RankLedger`), read, not copied
    @property
    def kv_bytes_per_token(self) -> int | None:
        """The rank's predicted KV bytes per token; None where nothing is predicted."""
        predicted = self.rank.predicted if self.rank else None
        return predicted.kv_bytes_per_token if predicted else None

    @property
    def kv_unit(self) -> str:
        """What one of `kv_bytes_per_token` is: the cell's unit, else 'per token'."""
        cell = self.rank.predicted.kv_cell if self.rank and self.rank.predicted else None
        return cell.unit if cell else "per token"

    @property
    def tokens_per_gib(self) -> float | None:
        """The rank's exchange rate per GiB (`RankLedger.tokens_per_gib`); None where nothing is predicted."""
        predicted = self.rank.predicted if self.rank else None
        return (predicted.tokens_per_gib or None) if predicted else None

    @property
    def tokens_per_gb(self) -> float | None:
        """The same rate per GB (`RankLedger.tokens_per_gb`); None where nothing is predicted."""
        predicted = self.rank.predicted if self.rank else None
        return (predicted.tokens_per_gb or None) if predicted else None

    def tokens(self, num_bytes: int | None) -> int | None:
        """Bytes read as tokens of KV on this rank (`RankLedger.tokens_in`: whole pages, truncated toward zero)."""
        predicted = self.rank.predicted if self.rank else None
        return None if num_bytes is None or predicted is None else predicted.tokens_in(num_bytes)


def _outside_rows(gpu: GpuObservation, rank: RankView | None, given: bool) -> list[LedgerRow]:
    """Other processes, what NVML counts used beyond them, driver reserved. `given`: the
    prediction takes these as NVML has them (the predicted column repeats them)."""
    outside = rank.observed.outside if rank else outside_bytes(gpu, None)  # the split the snapshot made once
    worker = rank.observed.process_bytes if rank and rank.observed.process_bytes is not None else 0
    rows = [
        LedgerRow("foreign (co-tenants)", outside.foreign if given else None, outside.foreign),
        LedgerRow("orphan engine workers", outside.orphan if given else None, outside.orphan),
        LedgerRow("unattributed (hidden)", outside.unattributed if given else None, outside.unattributed),
    ]
    if outside.server:  # the engine's own server process (its CUDA context): the engine's, no rank's
        rows.append(LedgerRow("engine server process", outside.server if given else None, outside.server))
    if gpu.used_bytes is not None:
        other = outside.used_by_no_process(gpu.used_bytes, worker)
        if other:
            rows.append(LedgerRow("other used (no process)", other if given else None, other))
    return rows


def _worker_rows(rank: RankView, source: CapacitySource) -> tuple[list[LedgerRow], WorkerPrediction | None]:
    predicted, observed = rank.predicted, rank.observed
    prediction = rank.worker_prediction
    if predicted is None or prediction is None:
        return [LedgerRow(f"worker pid {rank.pid}", None, observed.process_bytes, "total")], None
    rows = [
        LedgerRow(f"weights · {component_words(row.component, rank.engine_id)}", row.bytes, None)
        for row in predicted.weights.rows
    ]
    rows.append(LedgerRow("weights", predicted.weights_bytes, observed.weights_bytes, "total"))
    for term in predicted.terms:  # the deployment's resident terms: a draft, redundant experts, LoRA slots
        if term.charge is Charge.RESIDENT and term.modelled and term.bytes:
            rows.append(LedgerRow(term.label.split(" (")[0], term.bytes, None))
    live_pool, derived = rank.observed_kv_pool
    # its tokens are the engine's own count where it reports one: bytes ÷ the rate read 1,228,931 beside the
    # 1,229,052 the summary has the engine report (one question, two numbers)
    reported = observed.token_capacity
    rows.append(LedgerRow(f"KV pool ({capacity_said(source, compact=True)} tok × B)" if derived else "KV pool", predicted.token_pool_bytes, live_pool,
                          reported_tokens=reported))  # fmt: skip
    if predicted.state_pool_bytes:
        rows.append(LedgerRow("state pools (per request)", predicted.state_pool_bytes, None))
    if predicted.req_to_token_bytes:  # SGLang's request → token table; an engine without one shows no row
        rows.append(LedgerRow("request→token table", predicted.req_to_token_bytes, None))
    rows.append(LedgerRow("graphs + activations", prediction.activations_bytes, None))
    rows.append(LedgerRow("context, NCCL", prediction.context_bytes, None))
    rows.append(
        LedgerRow(f"= worker pid {rank.pid}", prediction.worker_bytes, observed.process_bytes, "total")
    )
    gap = rank.unexplained_bytes
    rows.append(LedgerRow("unexplained bytes", None, gap, "gap"))  # bytes: the waterfall's tokens say "engine vs prediction"
    return rows, prediction


def outside_costs(
    snapshot: NodeSnapshot, gpu_index: int, findings: Sequence[Finding]
) -> tuple[OutsideCost, ...]:
    """The token cost diagnose gave the bytes others hold on this GPU (per rank of its engine).

    `findings` are the ones the worker diagnosed on this snapshot: nothing is diagnosed again here.
    """
    engine = snapshot.engine_of_gpu(gpu_index)
    if engine is None or engine.ledger is None:
        return ()
    return tuple(
        OutsideCost(OUTSIDE_RULES[f.rule], f.title, f.tokens)
        for f in findings
        if f.rule in OUTSIDE_RULES
        and f.gpus == (gpu_index,)
        and f.tokens
        and f.engine_id == engine.engine.engine_id
    )


def rank_ledger(
    snapshot: NodeSnapshot, gpu_index: int, findings: Sequence[Finding] = ()
) -> RankLedgerView | None:
    """The ledger of the GPU with this NVML index (None if the snapshot has no such GPU)."""
    gpu = snapshot.observation.gpu(gpu_index)
    if gpu is None:
        return None
    rank = snapshot.rank_on_gpu(gpu_index)
    engine = snapshot.engine_of_gpu(gpu_index)
    source = engine.capacity_source if engine else CapacitySource.LIVE
    rows, prediction = _worker_rows(rank, source) if rank else ([], None)
    given: list[LedgerRow] = []  # the rows after the worker, as the prediction takes them
    if gpu.used_bytes is None and rank is None:  # nothing could be read (a lost GPU)
        given = [LedgerRow(label, None, None) for label in ("foreign (co-tenants)", "driver reserved")]
    else:
        given = _outside_rows(gpu, rank, given=prediction is not None)
        reserved_predicted = None if prediction is None else gpu.reserved_bytes
        given.append(LedgerRow("driver reserved", reserved_predicted, gpu.reserved_bytes))
    rows += given
    predicted_total = engine.ledger.gpu_total_bytes if prediction and engine and engine.ledger else None
    predicted_free = rank.predicted_free_bytes(predicted_total) if rank and predicted_total is not None else None
    rows.append(LedgerRow("free", predicted_free, gpu.free_bytes))
    rows.append(LedgerRow("GPU total", predicted_total, gpu.total_bytes, "gpu"))
    return RankLedgerView(
        gpu=gpu,
        rank=rank,
        rows=tuple(rows),
        outside_costs=outside_costs(snapshot, gpu_index, findings) if prediction else (),
        capacity_source=source,
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
    elif result.budget_tokens is not None:
        planned_tokens = f"≤ {result.budget_tokens:,}"
    else:
        planned_tokens = "fill"
    per_token = "—"
    if result.measured is not None:
        delta = result.measured_vs_predicted_said
        per_token = f"{result.measured.bytes_per_token:,}" + ("" if delta is None else f" ({delta})")
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
