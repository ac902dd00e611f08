"""One node of the cluster as a `NodeSnapshot`, read back from a Prometheus server's HTTP API.

`PrometheusNodeSource(client, node_name)` is a `SnapshotSource` for the TUI's drill-down: it
finds the node's kvtop exporter by `kvtop_node_info{node}` and rebuilds its GPUs and engine
ranks from the `kvtop_gpu_*` and `kvtop_rank_*` series (bytes); a node without kvtop's exporter
gets its GPUs from DCGM's framebuffer series (MiB, host label `Hostname` or `hostname`, else
the node is named by its `instance`). Prometheus carries no predicted ledger, so every engine
has `ledger=None` with `ledger_error` "its ledger stays on the node" (`wording.LEDGER_ON_NODE`) and the exporter's predicted figure as
`EngineView.exported` ("prediction not exported" where it published none); a worker's pid is not exported
either (`RankView.pid` is 0, which no worker has). Read-only: it only sends instant queries.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TypeVar

from kvtop.domain.capacity import CapacitySource
from kvtop.domain.engines.registry import ENGINE_IDS
from kvtop.domain.errors import KvtopError
from kvtop.domain.exported_prediction import EXPORTER, ExportedPrediction
from kvtop.domain.incident import age
from kvtop.domain.node import EngineView, NodeSnapshot, RankObserved, RankView
from kvtop.domain.observe import (
    EngineInstance,
    EngineLive,
    EngineRank,
    GpuObservation,
    GpuState,
    MemoryApi,
    NodeObservation,
    NvmlState,
)
from kvtop.domain.wording import LEDGER_ON_NODE
from kvtop.sources.prometheus import DEFAULT_STALE_AFTER_S, ENGINE_REPORTED, PrometheusClient, Series
from kvtop.sources.prometheus_engines import served_model
from kvtop.units import MIB

NOT_EXPORTED = "prediction not exported"
UNKNOWN_PID = 0  # Prometheus carries no worker pid; pid 0 is the kernel's, never a worker's
_KVTOP_SERIES = (
    "kvtop_(snapshot_timestamp_seconds|gpu_info|gpu_memory_(total|used|reserved|free)_bytes|engine_info"
    "|rank_(observed_bytes|token_capacity|kv_usage_ratio))"
)
_DCGM_SERIES = "DCGM_FI_DEV_FB_(USED|FREE|RESERVED)"
_DCGM_FIELDS = {
    "DCGM_FI_DEV_FB_USED": "used",
    "DCGM_FI_DEV_FB_FREE": "free",
    "DCGM_FI_DEV_FB_RESERVED": "reserved",
}
_E = TypeVar("_E", GpuState, NvmlState)
_RANK = re.compile(r"dp(\d+)-tp(\d+)-pp(\d+)(?:-ep(\d+))?")


class NodeSeriesMissing(KvtopError):
    """Prometheus holds no kvtop or DCGM series for the node now (its targets down, or the name wrong)."""


def promql_string(value: str) -> str:
    """`value` as a PromQL double-quoted string (backslash, quote and newline escaped)."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def _selector(name_regex: str, label: str, value: str) -> str:
    return f'{{__name__=~"{name_regex}",{label}={promql_string(value)}}}'


@dataclass
class _Gpu:
    """What accumulates for one GPU while its series are read (bytes)."""

    uuid: str | None
    name: str | None
    state: str | None = None
    memory: dict[str, int] = field(default_factory=dict)  # total/used/reserved/free → bytes

    def observation(
        self, index: int, state: GpuState, message: str | None, memory_api: MemoryApi | None
    ) -> GpuObservation:
        m = self.memory
        return GpuObservation(
            index=index, uuid=self.uuid, name=self.name, total_bytes=m.get("total"), used_bytes=m.get("used"),
            free_bytes=m.get("free"), reserved_bytes=m.get("reserved"),
            memory_api=memory_api, state=state, state_message=message,
        )  # fmt: skip


@dataclass
class _Rank:
    """What accumulates for one engine rank while its series are read."""

    engine_id: str
    instance: str
    rank: EngineRank
    gpu_index: int
    observed: dict[str, int] = field(default_factory=dict)  # kind → bytes
    capacity: dict[str, int] = field(default_factory=dict)  # source → tokens
    kv_usage: float | None = None


class PrometheusNodeSource:
    """Collects one node of the cluster from Prometheus (`collect()` blocks: call it from a worker)."""

    def __init__(self, client: PrometheusClient, node_name: str, *, stale_after_s: float = DEFAULT_STALE_AFTER_S,
                 clock: Callable[[], float] = time.time) -> None:  # fmt: skip
        self.client = client
        self.node_name = node_name
        self.stale_after_s = stale_after_s
        self._clock = clock
        self.label = f"prometheus:{client.shown_url} node {node_name}"

    def collect(self) -> NodeSnapshot:
        info = self.client.query(f"kvtop_node_info{{node={promql_string(self.node_name)}}}")
        instances = sorted({labels["instance"] for labels, _ in info if labels.get("instance")})
        kvtop: Series = []
        for instance in instances:
            kvtop += self.client.query(_selector(_KVTOP_SERIES, "instance", instance))
        if any(labels["__name__"].startswith("kvtop_gpu_") for labels, _ in kvtop):
            return self._from_kvtop(info, kvtop)
        dcgm = self._dcgm()
        if dcgm:
            return self._from_dcgm(dcgm, has_kvtop=bool(instances))
        if info:  # the exporter answers but lists no GPU (its NVML state says why)
            return self._from_kvtop(info, kvtop)
        raise NodeSeriesMissing(
            f"prometheus {self.client.shown_url} holds no kvtop or DCGM GPU series for node "
            f"{self.node_name!r} now (its targets may be down)"
        )

    def _dcgm(self) -> Series:
        """DCGM's framebuffer series of the node: by its host label, else by its instance."""
        for label in ("Hostname", "hostname", "instance"):
            found = self.client.query(_selector(_DCGM_SERIES, label, self.node_name))
            if found:
                return found
        return []

    def _from_kvtop(self, info: Series, series: Series) -> NodeSnapshot:
        node_labels = info[0][0]
        nvml_state = _enum(NvmlState, node_labels.get("nvml_state"), NvmlState.ERROR)
        instance = node_labels.get("instance", "?")
        taken = [
            value for labels, value in series if labels["__name__"] == "kvtop_snapshot_timestamp_seconds"
        ]
        taken_at = max(taken) if taken else self._clock()
        observation = NodeObservation(
            taken_at=taken_at, nvml_state=nvml_state,
            nvml_message=None if nvml_state is NvmlState.OK else f"as {EXPORTER} on {instance} reports it",
            driver_version=node_labels.get("driver_version") or None, gpus=_kvtop_gpus(series),
        )  # fmt: skip
        engines = _engine_views(series, observation)
        age_s = self._clock() - taken_at
        notice = f"read through Prometheus: {LEDGER_ON_NODE}; no processes"
        if taken and age_s > self.stale_after_s:
            notice = f"{EXPORTER}'s snapshot is {age(age_s)} old · " + notice
        return NodeSnapshot(observation=observation, engines=engines, source=self.label, notice=notice)

    def _from_dcgm(self, series: Series, *, has_kvtop: bool) -> NodeSnapshot:
        gpus: dict[int, _Gpu] = {}
        for labels, value in series:
            index = _int(labels.get("gpu"))
            if index is not None:
                gpu = gpus.setdefault(
                    index, _Gpu(labels.get("UUID") or None, labels.get("modelName") or None)
                )
                gpu.memory[_DCGM_FIELDS[labels["__name__"]]] = int(value) * MIB
        observed = []
        for index, gpu in sorted(gpus.items()):
            m = gpu.memory
            if "used" in m and "free" in m:  # DCGM's total: used + free + reserved
                m["total"] = m["used"] + m["free"] + m.get("reserved", 0)
                observed.append(gpu.observation(index, GpuState.OK, None, None))
            else:
                message = "DCGM exports no used and free figures for this GPU"
                observed.append(gpu.observation(index, GpuState.ERROR, message, None))
        notice = "read through Prometheus from DCGM" + (
            f" ({EXPORTER} lists no GPU)" if has_kvtop else " (no kvtop exporter on this node)"
        )
        observation = NodeObservation(taken_at=self._clock(), gpus=tuple(observed))
        return NodeSnapshot(observation=observation, source=self.label, notice=notice)


def _int(text: str | None) -> int | None:
    return int(text) if text is not None and text.isdigit() else None


def _enum(kind: type[_E], value: str | None, fallback: _E) -> _E:
    """`kind(value)`, or `fallback` for a value this kvtop does not know."""
    try:
        return kind(value)
    except ValueError:
        return fallback


def _kvtop_gpus(series: Series) -> tuple[GpuObservation, ...]:
    """One GpuObservation per GPU of `kvtop_gpu_info` and `kvtop_gpu_memory_*_bytes` (bytes)."""
    facts: dict[int, _Gpu] = {}
    for labels, value in series:
        name = labels["__name__"]
        index = _int(labels.get("gpu"))
        if index is None or not name.startswith("kvtop_gpu_"):
            continue
        gpu = facts.setdefault(index, _Gpu(labels.get("uuid") or None, labels.get("name") or None))
        if name == "kvtop_gpu_info":
            gpu.state = labels.get("state")
        else:
            gpu.memory[name.removeprefix("kvtop_gpu_memory_").removesuffix("_bytes")] = int(value)
    gpus = []
    for index, gpu in sorted(facts.items()):
        state = _enum(GpuState, gpu.state, GpuState.ERROR)
        message = (
            None
            if state is GpuState.OK
            else f"{EXPORTER} reports {gpu.state or 'no state'} (details on the node)"
        )
        api = MemoryApi.V2 if "reserved" in gpu.memory else None  # NVML v2 alone reports reserved
        gpus.append(gpu.observation(index, state, message, api))
    return tuple(gpus)


def _ranks(series: Series) -> tuple[list[_Rank], dict[str, str | None]]:
    """The ranks the `kvtop_rank_*` series describe, and each engine's model its `kvtop_engine_info` names, in one
    pass over the series."""
    ranks: dict[tuple[str, str, int], _Rank] = {}
    models: dict[str, str | None] = {}
    for labels, value in series:
        name = labels["__name__"]
        if name == "kvtop_engine_info":
            models[labels.get("engine", "?")] = served_model(labels)
        if not name.startswith("kvtop_rank_"):
            continue
        layout, index = _RANK.fullmatch(labels.get("rank", "")), _int(labels.get("gpu"))
        if layout is None or index is None:
            continue
        dp, tp, pp, ep = layout.groups()
        key = (labels.get("engine", "?"), layout.group(0), index)
        rank = ranks.get(key)
        if rank is None:
            position = EngineRank(dp=int(dp), tp=int(tp), pp=int(pp), ep=int(ep) if ep else None)
            rank = ranks[key] = _Rank(key[0], labels.get("instance", ""), position, index)
        if name == "kvtop_rank_observed_bytes":
            rank.observed[labels.get("kind", "?")] = int(value)
        elif name == "kvtop_rank_token_capacity":
            rank.capacity[labels.get("source", "?")] = int(value)
        elif name == "kvtop_rank_kv_usage_ratio":
            rank.kv_usage = value
    return sorted(ranks.values(), key=lambda r: (r.engine_id, r.gpu_index)), models


def _engine(engine_id: str, instance: str, ranks: Iterable[_Rank], model: str | None) -> EngineInstance | None:
    kind, _, pid = engine_id.partition(":")
    if kind not in ENGINE_IDS:
        return None
    live_capacity = [c for r in ranks for s, c in r.capacity.items() if s in ENGINE_REPORTED]
    usage = [r.kv_usage for r in ranks if r.kv_usage is not None]
    live = EngineLive(
        token_capacity=min(live_capacity) if live_capacity else None, kv_usage_fraction=max(usage) if usage else None,
        notes=(f"live figures as {EXPORTER} read them, through Prometheus",),
    )  # fmt: skip
    host = instance.rsplit(":", 1)[0] if ":" in instance else instance
    return EngineInstance(
        engine_id=engine_id, kind=kind, server_pid=int(pid) if pid.isdigit() else UNKNOWN_PID, host=host,
        port=0, live=live, model=model,
    )  # fmt: skip


def _engine_views(series: Series, observation: NodeObservation) -> tuple[EngineView, ...]:
    by_engine: dict[str, list[_Rank]] = {}
    ranks, models = _ranks(series)  # the model as the cluster's rows say it (`prometheus_engines.served_model`)
    for rank in ranks:
        by_engine.setdefault(rank.engine_id, []).append(rank)
    views = []
    for engine_id, ranks in sorted(by_engine.items()):
        engine = _engine(engine_id, ranks[0].instance, ranks, models.get(engine_id))
        if engine is None:
            continue
        predicted = [r.capacity["predicted"] for r in ranks if "predicted" in r.capacity]
        views.append(EngineView(
            engine=engine, ledger=None, ledger_error=LEDGER_ON_NODE if predicted else NOT_EXPORTED,
            exported=ExportedPrediction(tokens=min(predicted)) if predicted else None,
            ranks=tuple(_rank_view(r, observation.gpu(r.gpu_index), engine) for r in ranks),
            capacity_source=_stated_by(ranks),
        ))  # fmt: skip
    return tuple(views)


def _stated_by(ranks: Iterable[_Rank]) -> CapacitySource:
    """Who states the engine's figure (`EngineLive.token_capacity`, the least rank's) as the exporter labelled it:
    a demo node's 'simulated', a log's 'logged', else 'live'. The node's header said "/ 407,587 live" of a demo
    engine the cluster's engine list calls "407,587 simulated" (session 67's walk)."""
    reported = [(tokens, source) for r in ranks for source, tokens in r.capacity.items() if source in ENGINE_REPORTED]
    return CapacitySource(min(reported)[1]) if reported else CapacitySource.LIVE


def _rank_view(rank: _Rank, gpu: GpuObservation | None, engine: EngineInstance) -> RankView:
    live = [c for s, c in rank.capacity.items() if s in ENGINE_REPORTED]
    observed = RankObserved(
        process_bytes=rank.observed.get("process"),
        gpu_total_bytes=gpu.total_bytes if gpu else None, gpu_used_bytes=gpu.used_bytes if gpu else None,
        gpu_reserved_bytes=gpu.reserved_bytes if gpu else None, gpu_free_bytes=gpu.free_bytes if gpu else None,
        foreign_bytes=rank.observed.get("foreign", 0), orphan_bytes=rank.observed.get("orphan", 0),
        unattributed_bytes=rank.observed.get("unattributed", 0),
        token_capacity=min(live) if live else None, kv_usage_fraction=rank.kv_usage,
    )  # fmt: skip
    return RankView(
        engine_id=engine.engine_id, rank=rank.rank, gpu_index=rank.gpu_index, pid=UNKNOWN_PID,
        observed=observed, predicted=None,
    )  # fmt: skip
