"""The node as kvtop shows it: every rank's observed bytes beside its predicted ledger.

`build_snapshot` joins a `NodeObservation` (what NVML, psutil and the engines say) with one
predicted `Ledger` per engine. Everything here is a frozen value that the TUI, `snapshot`,
`diagnose` and the exporter consume alike.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict

from kvtop.domain.capacity import CapacitySource, CapacityWaterfall
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.exported_prediction import ExportedPrediction
from kvtop.domain.ledger import Ledger, RankLedger
from kvtop.domain.observe import (
    EngineInstance,
    EngineRank,
    GpuObservation,
    GpuProcess,
    NodeObservation,
    NvmlState,
    ProcessRole,
)
from kvtop.domain.predicted_split import PredictedSplit
from kvtop.domain.redact import RedactedModel, RedactedStr
from kvtop.domain.waterfall import EngineCapacity, RankActual, engine_capacity
from kvtop.domain.weights import WeightRow, WeightsBook
from kvtop.domain.wording import counted

#: How much less free memory the tightest rank needs than the next to be marked (see `tightest_rank`).
TIGHTEST_MARGIN_FRACTION = 0.01
TIGHTEST_MARGIN_MIN_BYTES = 256 << 20


class RankObserved(BaseModel):
    """What the node says about one engine rank's GPU now."""

    model_config = ConfigDict(frozen=True)

    process_bytes: int | None  # the engine worker's own memory (NVML per process)
    gpu_total_bytes: int | None
    gpu_used_bytes: int | None
    gpu_reserved_bytes: int | None
    gpu_free_bytes: int | None
    foreign_bytes: int = 0  # co-tenants and other engines' processes on the same GPU
    orphan_bytes: int = 0  # engine workers whose server is gone
    unattributed_bytes: int = 0  # pids kvtop cannot see (containers)
    server_bytes: int = 0  # this engine's server processes here (their own CUDA context): no rank's
    token_capacity: int | None = None  # as the engine reports it (metrics / server info / log)
    token_capacity_logged: bool = False  # that figure is the startup log's (--engine-log), not the endpoint's
    kv_usage_fraction: float | None = None
    weights_bytes: int | None = None  # as the engine reports it
    kv_pool_bytes: int | None = None  # as the engine reports it

    @property
    def outside(self) -> OutsideBytes:
        """The split `outside_bytes` made of the other processes on this rank's GPU."""
        return OutsideBytes(self.foreign_bytes, self.orphan_bytes, self.unattributed_bytes, self.server_bytes)


class WorkerPrediction(NamedTuple):
    """The predicted worker as NVML counts it per process on its GPU (a tuple: the list asks every tick)."""

    context_bytes: int  # the ledger's context less the driver-reserved bytes moved out of it
    reserved_bytes: int | None  # driver reserved moved out of the context (None: not split)
    worker_bytes: int  # resident − driver reserved moved out
    activations_bytes: int  # graphs + activations: a reserve the worker may not have claimed yet


class ObservedPool(NamedTuple):
    """The KV pool the engine holds as kvtop can tell it."""

    bytes: int | None  # None: the engine reports neither its pool nor its live token count
    derived: bool  # True: its live token count × the predicted bytes per token, not a figure it reports


class WorkerSplit(NamedTuple):
    """The observed worker's bytes as weights | KV pool | the rest, as far as the figures allow."""

    weights_bytes: int
    kv_pool_bytes: int
    rest_bytes: int  # runtime: graphs, activations, context (or the worker nothing splits, below)
    split: bool  # False: no prediction and the engine reported not both figures, so the rest is unsplit


class RankView(BaseModel):
    model_config = ConfigDict(frozen=True)

    engine_id: str
    engine_kind: str = ""  # the engine's id (kvtop.domain.engines.registry)
    rank: EngineRank
    gpu_index: int
    pid: int
    observed: RankObserved
    # The explained ledger's rank (`EngineView.explained`: every measured cause applied, the state the
    # capacity waterfall ends on), so the byte view and the token view are one answer; the clean
    # ledger's only before the waterfall is built. See `build_snapshot` for its context.
    predicted: RankLedger | None
    capacity: CapacityWaterfall | None = None  # clean → named causes → what the engine holds (None: no ledger)

    @property
    def predicted_resident_bytes(self) -> int | None:
        """Weights + the deployment's resident terms (draft, LoRA slots…) + KV pools + req_to_token + runtime
        reserve + context, as predicted."""
        p = self.predicted
        if p is None:
            return None
        return p.weights_bytes + p.resident_terms_bytes + p.kv_pool_bytes + p.reserve_bytes + p.context_bytes

    @property  # not cached: `model_copy` (the explained rank set later) would carry a stale value along
    def worker_prediction(self) -> WorkerPrediction | None:
        """The predicted resident bytes as NVML would count this worker's process.

        SGLang's context measured is "total − free before load", which holds the driver's reserved bytes;
        NVML counts those apart from every process, so they move out of the worker. A calibrated context holds none
        (the ledger split them out, `RankLedger.driver_reserved_bytes`): nothing moves.
        """
        predicted, resident = self.predicted, self.predicted_resident_bytes
        if predicted is None or resident is None:
            return None
        holds_reserved = (self.engine_kind and engine_rules(self.engine_kind).context_holds_driver_reserved
                          and not predicted.driver_reserved_bytes)  # fmt: skip
        reserved = self.observed.gpu_reserved_bytes if holds_reserved else None
        if reserved is None or reserved > predicted.context_bytes:
            reserved = None  # nothing to move: the context keeps what the ledger said
        moved = reserved or 0
        return WorkerPrediction(
            context_bytes=predicted.context_bytes - moved,
            reserved_bytes=reserved,
            worker_bytes=resident - moved,
            activations_bytes=predicted.reserve_bytes - predicted.req_to_token_bytes,
        )

    @property
    def predicted_used_bytes(self) -> int | None:
        """NVML's `used` as the prediction has it: the predicted worker beside what NVML counts beyond the worker now
        (other processes, the engine's server, memory no process holds: the rank ledger's rows taken as given)."""
        prediction = self.worker_prediction
        if prediction is None:
            return None
        outside = self.observed.outside
        return prediction.worker_bytes + outside.others_bytes + outside.server + self._no_process_bytes

    @property
    def _no_process_bytes(self) -> int:
        """NVML's `used` no listed process holds, taken as given (0 where NVML gave no `used`)."""
        observed = self.observed
        used = observed.gpu_used_bytes
        return 0 if used is None else observed.outside.used_by_no_process(used, observed.process_bytes or 0)

    def predicted_free_bytes(self, gpu_total_bytes: int) -> int | None:
        """What the prediction leaves free of `gpu_total_bytes` (the ledger's GPU total): less its `used` and the
        driver-reserved bytes NVML keeps apart."""
        used = self.predicted_used_bytes
        return None if used is None else gpu_total_bytes - used - self._reserved_bytes

    @property
    def _reserved_bytes(self) -> int:
        """NVML's driver reserved; where NVML v1 says none, the ledger's split-out share stands in."""
        reserved = self.observed.gpu_reserved_bytes
        if reserved is None and self.predicted is not None:
            reserved = self.predicted.driver_reserved_bytes
        return reserved or 0

    def predicted_split(self, gpu_total_bytes: int) -> PredictedSplit | None:
        """`gpu_total_bytes` as the prediction splits it (the predicted memory bar's segments); None: no ledger."""
        predicted, prediction, free = self.predicted, self.worker_prediction, self.predicted_free_bytes(gpu_total_bytes)
        if predicted is None or prediction is None or free is None:
            return None
        weights = predicted.weights_bytes + predicted.resident_terms_bytes
        outside = self.observed.outside
        return PredictedSplit(
            weights, predicted.kv_pool_bytes, prediction.worker_bytes - weights - predicted.kv_pool_bytes,
            outside.server, self._reserved_bytes + self._no_process_bytes, outside.foreign + outside.unattributed, outside.orphan, free,
        )  # fmt: skip

    @property
    def observed_kv_pool(self) -> ObservedPool:
        """The KV pool as the engine reports it, else its live token count × the predicted bytes per token."""
        observed, predicted = self.observed, self.predicted
        if observed.kv_pool_bytes is not None:
            return ObservedPool(observed.kv_pool_bytes, derived=False)
        if observed.token_capacity is not None and predicted is not None:
            return ObservedPool(observed.token_capacity * predicted.kv_bytes_per_token, derived=True)
        return ObservedPool(None, derived=False)

    @property
    def worker_split(self) -> WorkerSplit | None:
        """The worker's NVML bytes as weights | KV pool | the rest: the engine's own figures where it reports them,
        else the predicted ones, each capped by what the worker has left (None: NVML gave no per-process figure)."""
        worker, predicted = self.observed.process_bytes, self.predicted
        if worker is None:
            return None
        seen_weights, seen_pool = self.observed.weights_bytes, self.observed_kv_pool.bytes
        weights = min(seen_weights or (predicted.weights_bytes if predicted else 0), worker)
        pool = min(seen_pool or (predicted.kv_pool_bytes if predicted else 0), worker - weights)
        split = predicted is not None or (seen_weights is not None and seen_pool is not None)
        return WorkerSplit(weights, pool, worker - weights - pool, split)

    @property
    def unexplained_bytes(self) -> int | None:
        """Worker bytes no predicted figure explains: above the predicted worker, or below it by
        more than its graphs + activations reserve (a reserve not claimed yet is free memory)."""
        prediction = self.worker_prediction
        if self.observed.process_bytes is None or prediction is None:
            return None
        gap = self.observed.process_bytes - prediction.worker_bytes
        return gap if gap > 0 else min(0, gap + prediction.activations_bytes)


class EngineView(RedactedModel):
    engine: EngineInstance
    ledger: Ledger | None  # on empty GPUs: the clean prediction
    ledger_error: RedactedStr | None = None  # why there is no prediction (model not found, not modelled…)
    ranks: tuple[RankView, ...] = ()
    # the ledger with every measured cause applied (the waterfall's explained state): the planner's
    # before, and the basis every fix is priced on
    explained: Ledger | None = None
    # who states the engine's own token figure (`CapacitySource.of_reading`): every view's word for it
    capacity_source: CapacitySource = CapacitySource.LIVE
    exported: ExportedPrediction | None = None  # read through Prometheus: the exporter's figure, its ledger not here

    @property
    def live_disagrees(self) -> bool:
        """The engine's own token figure differs from kvtop's (the explained ledger's, else the clean one's, else the
        exporter's read through Prometheus): the header's bold warning; False where either is missing."""
        predicted, exported = self.explained or self.ledger, self.exported
        expected = predicted.token_capacity if predicted is not None else exported.tokens if exported else None
        live = self.engine.live.token_capacity
        return expected is not None and live is not None and live != expected

    @property
    def tightest_rank(self) -> RankView | None:
        """The rank with clearly the least free memory (under SGLang it sizes every rank), else None.

        Rule: of two or more ranks with a free-memory figure, the least free one is the tightest
        only when the next least free has at least `TIGHTEST_MARGIN_FRACTION` (1%) of its GPU's
        total more free (0.85 GB on an H100 80GB; never less than `TIGHTEST_MARGIN_MIN_BYTES`).
        Free memory of a healthy node drifts by megabytes tick to tick; a mark that followed the
        drift would jump between GPUs and name no cause. One rank alone is never "tightest".
        """
        ranks = sorted(
            (r for r in self.ranks if r.observed.gpu_free_bytes is not None),
            key=lambda r: r.observed.gpu_free_bytes or 0,
        )
        if len(ranks) < 2:
            return None
        tightest, runner_up = ranks[0], ranks[1]
        total = tightest.observed.gpu_total_bytes or 0
        margin = max(TIGHTEST_MARGIN_MIN_BYTES, int(total * TIGHTEST_MARGIN_FRACTION))
        gap = (runner_up.observed.gpu_free_bytes or 0) - (tightest.observed.gpu_free_bytes or 0)
        return tightest if gap >= margin else None


class NodeSnapshot(RedactedModel):
    observation: NodeObservation
    engines: tuple[EngineView, ...] = ()
    source: RedactedStr = "nvml"  # "nvml", "demo:<scenario>", "prometheus:<url>"
    notice: RedactedStr | None = None  # e.g. "no NVIDIA driver (NVML library not found): a demo node"

    @property
    def simulated(self) -> bool:
        """A demo scenario (`--demo`), not this machine's GPUs: every output says so (text's first line, JSON's
        `"simulated": true`)."""
        return self.observation.nvml_state is NvmlState.DEMO

    def rank_on_gpu(self, gpu_index: int) -> RankView | None:
        found = self.ranks_by_gpu.get(gpu_index)
        return found[1] if found else None

    def engine_of_gpu(self, gpu_index: int) -> EngineView | None:
        found = self.ranks_by_gpu.get(gpu_index)
        return found[0] if found else None

    @cached_property
    def ranks_by_gpu(self) -> dict[int, tuple[EngineView, RankView]]:
        """Each GPU's first engine rank, in engine order (built once: the UI asks per GPU per tick)."""
        index: dict[int, tuple[EngineView, RankView]] = {}
        for view in self.engines:
            for rank in view.ranks:
                index.setdefault(rank.gpu_index, (view, rank))
        return index


class OutsideBytes(NamedTuple):
    """Bytes on one GPU held by processes other than an engine's rank worker, by kind."""

    foreign: int  # co-tenants, and the workers and servers of other engines
    orphan: int  # engine workers whose server is gone
    unattributed: int  # pids kvtop cannot see (containers)
    server: int = 0  # engine servers' own memory (vLLM's API server CUDA context): their engine's, no rank's

    @property
    def others_bytes(self) -> int:
        """What processes that are not the engine's hold: foreign, orphan and unattributed (its server aside)."""
        return self.foreign + self.orphan + self.unattributed

    def used_by_no_process(self, used_bytes: int, worker_bytes: int) -> int:
        """NVML's `used` beyond the worker and every other process it lists: memory no process holds (negative
        where the per-process figures add up to more than `used`)."""
        return used_bytes - worker_bytes - self.others_bytes - self.server


_OTHER_ENGINE_ROLES = (ProcessRole.ENGINE_WORKER, ProcessRole.ENGINE_SERVER)


def outside_bytes(gpu: GpuObservation, engine_id: str | None) -> OutsideBytes:
    """What processes other than engine `engine_id`'s workers hold on `gpu` (None: no engine asked about).

    One split for every reader (ranks, bars, the rank ledger): another engine's processes are
    foreign to this one; an engine server's own memory is its engine's (`server`); any other
    engine process on a GPU where no engine is asked about is not foreign.
    """
    foreign = orphan = unattributed = server = 0
    for p in gpu.processes:
        held = p.used_bytes or 0
        if p.role is ProcessRole.ENGINE_SERVER and (engine_id is None or p.engine_id == engine_id):
            server += held
        elif (
            p.role is ProcessRole.CO_TENANT
            or p.role in _OTHER_ENGINE_ROLES
            and engine_id is not None
            and p.engine_id != engine_id
        ):
            foreign += held
        elif p.role is ProcessRole.ORPHAN:
            orphan += held
        elif p.role is ProcessRole.UNATTRIBUTED:
            unattributed += held
    return OutsideBytes(foreign, orphan, unattributed, server)


def _ledger_rank(ledger: Ledger, rank: EngineRank) -> RankLedger | None:
    stage = [r for r in ledger.ranks if r.pp_rank == rank.pp and r.tp_rank == rank.tp]
    return stage[0] if stage else (ledger.ranks[0] if ledger.ranks else None)


def _observed(gpu: GpuObservation, process: GpuProcess, engine: EngineInstance) -> RankObserved:
    live = engine.live
    live_rank = next((r for r in live.ranks if r.pid == process.pid), None)
    outside = outside_bytes(gpu, engine.engine_id)
    return RankObserved(
        process_bytes=process.used_bytes,
        gpu_total_bytes=gpu.total_bytes,
        gpu_used_bytes=gpu.used_bytes,
        gpu_reserved_bytes=gpu.reserved_bytes,
        gpu_free_bytes=gpu.free_bytes,
        foreign_bytes=outside.foreign,
        orphan_bytes=outside.orphan,
        unattributed_bytes=outside.unattributed,
        server_bytes=outside.server,
        token_capacity=(
            live_rank.token_capacity if live_rank and live_rank.token_capacity else live.token_capacity
        ),
        token_capacity_logged=not (live_rank and live_rank.token_capacity) and live.token_capacity_logged,
        kv_usage_fraction=(
            live_rank.kv_usage_fraction
            if live_rank and live_rank.kv_usage_fraction is not None
            else live.kv_usage_fraction
        ),
        weights_bytes=live.weight_bytes,
        kv_pool_bytes=live.kv_cache_bytes,
    )


def build_snapshot(
    observation: NodeObservation,
    ledgers: Mapping[str, Ledger | str],
    *,
    source: str = "nvml",
    notice: str | None = None,
) -> NodeSnapshot:
    """Join observation and predictions; `ledgers[engine_id]` is a Ledger or why there is none."""
    views = []
    for engine in observation.engines:
        prediction = ledgers.get(engine.engine_id, "no prediction (the model could not be resolved)")
        ledger = prediction if isinstance(prediction, Ledger) else None
        ranks = []
        for gpu, process in observation.engine_processes(engine.engine_id):
            if process.role is not ProcessRole.ENGINE_WORKER or process.rank is None:
                continue
            ranks.append(
                RankView(
                    engine_id=engine.engine_id,
                    engine_kind=engine.kind,
                    rank=process.rank,
                    gpu_index=gpu.index,
                    pid=process.pid,
                    observed=_observed(gpu, process, engine),
                    predicted=_ledger_rank(ledger, process.rank) if ledger else None,
                )  # fmt: skip
            )
        explained = None
        stated_by = CapacitySource.of_reading(engine.live.token_capacity_logged, observation.nvml_state is NvmlState.DEMO)
        if ledger is not None and ranks:
            capacity = _capacity(observation, engine, ledger, ranks, stated_by)
            explained = capacity.explained
            heavier = _weights_shift(ledger, explained)
            ranks = [
                r.model_copy(
                    update={
                        "capacity": capacity.waterfalls.get(r.gpu_index),
                        "predicted": _explained_rank(explained, r, heavier),
                    }
                )
                for r in ranks
            ]
        views.append(
            EngineView(
                engine=engine,
                ledger=ledger,
                ledger_error=None if ledger else str(prediction),
                ranks=tuple(sorted(ranks, key=lambda r: r.gpu_index)),
                explained=explained,
                capacity_source=stated_by,
            )
        )
    return NodeSnapshot(observation=observation, engines=tuple(views), source=source, notice=notice)


def join_notices(*notices: str | None) -> str | None:
    """The notices that are set, as one line."""
    present = [notice for notice in notices if notice]
    return "; ".join(present) if present else None


def ownerless_notice(node: NodeObservation) -> str | None:
    """A notice when GPU memory is held by pids this namespace cannot see (the usual container case)."""
    hidden = node.processes_with_role(ProcessRole.UNATTRIBUTED)
    if not hidden:
        return None
    held = f"{counted(len(hidden), 'GPU process', 'GPU processes')} {'is' if len(hidden) == 1 else 'are'}"
    return (f"{held} not visible or not readable here: run kvtop with the host's "
            "PID namespace (--pid=host) or as root to attribute them")  # fmt: skip


def _capacity(
    observation: NodeObservation,
    engine: EngineInstance,
    ledger: Ledger,
    ranks: Sequence[RankView],
    source: CapacitySource,
) -> EngineCapacity:
    """The engine's waterfalls: its GPUs, its workers' start, what its endpoint (or log, or demo scenario) states."""
    gpus = [gpu for index in sorted({r.gpu_index for r in ranks}) if (gpu := observation.gpu(index)) is not None]
    starts = [p.start_time for _, p in observation.engine_processes(engine.engine_id) if p.start_time is not None]
    actuals = [RankActual(gpu_index=r.gpu_index, tokens=r.observed.token_capacity, source=source) for r in ranks]
    return engine_capacity(
        ledger,
        gpus,
        engine.engine_id,
        actuals,
        started_at=min(starts) if starts else None,
        reported_weights_bytes=engine.live.weight_bytes,
        reported_kv_pool_bytes=engine.live.kv_cache_bytes,
    )


#: The weights row that holds what the engine reports above kvtop's book (the waterfall's weights term).
REPORTED_WEIGHTS_ROW = "reported_above_prediction"


def _weights_shift(clean: Ledger, explained: Ledger) -> int:
    """The weights the explained ledger was solved with above the clean one's (the waterfall's weights term)."""
    before = clean.measured.weights_bytes or clean.weights_bytes
    after = explained.measured.weights_bytes or explained.weights_bytes
    return max(0, after - before)


def _explained_rank(explained: Ledger, rank: RankView, heavier: int = 0) -> RankLedger | None:
    """The explained ledger's row for `rank`, with the worker's own context (the clean row's) and the
    weights it was solved with.

    The explained ledger is solved with the free memory before load that bytes others held there
    took away (the waterfall's outside terms), and its context is "total − free before load": on
    the least free GPU it counts those bytes. NVML counts them in their holders' processes, not in
    this worker, so the row keeps the context the clean ledger has (CUDA context, NCCL) and the driver's share
    it split out of it. Weights the engine reports above kvtop's book (`heavier`) are solved in as a number, not a
    component: they join the book as one row, so the pool they shrank and the weights that shrank it sit side by side.
    Every other figure is the engine's own re-solve (a smaller pool, the tokens the waterfall ends on).
    """
    row = _ledger_rank(explained, rank.rank)
    if row is None or rank.predicted is None:
        return row
    clean = rank.predicted
    update: dict[str, object] = {"context_bytes": clean.context_bytes, "context_source": clean.context_source,
                                 "context_error_bytes": clean.context_error_bytes,
                                 "driver_reserved_bytes": clean.driver_reserved_bytes}  # fmt: skip
    if heavier:
        extra = WeightRow(component=REPORTED_WEIGHTS_ROW, params=0, bytes=heavier, shards=1, bytes_per_param=0.0,
                          note="the engine reports its weights this much above the prediction")  # fmt: skip
        update["weights"] = WeightsBook(rows=(*row.weights.rows, extra))
    return row.model_copy(update=update)
