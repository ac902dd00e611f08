"""A whole cluster as values: one `ClusterNode` per host, read through a Prometheus server.

`sources/prometheus.py` fills these from DCGM-exporter series, vLLM/SGLang engine metrics and
kvtop's own exporter; `rank_nodes` orders them worst-first so the node that needs a person is
on top. Bytes are ints; an unread number is None, never a zero.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum

from pydantic import BaseModel, ConfigDict, computed_field

from kvtop.domain.cluster_engines import DisaggregatedGroup, JoinedEngine
from kvtop.domain.errors import KvtopError
from kvtop.domain.wording import percent, signed


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class PrometheusState(str, Enum):
    """The outcome of asking a Prometheus server (every failure is named)."""

    OK = "ok"
    UNREACHABLE = "unreachable"  # connection refused, DNS, TLS handshake
    TIMEOUT = "timeout"
    UNAUTHORIZED = "unauthorized"  # 401/403: token missing or refused
    HTTP_ERROR = "http_error"  # any other non-2xx answer
    QUERY_ERROR = "query_error"  # the server answered status=error
    BAD_PAYLOAD = "bad_payload"  # answered, but not the Prometheus API's JSON


# What a person does about a failure, by its state: said once, after the failure, wherever it is shown (the CLI's
# error line, the cluster TUI's header)
WHAT_TO_DO: Mapping[PrometheusState, str] = {
    PrometheusState.UNREACHABLE: "check the --prometheus URL and that Prometheus is running there",
}


class PrometheusError(KvtopError):
    """Prometheus could not answer; `state` names why, then what to do where that is known (`WHAT_TO_DO`); the
    message never holds the token."""

    def __init__(self, state: PrometheusState, message: str) -> None:
        self.state = state
        todo = WHAT_TO_DO.get(state)
        super().__init__(f"prometheus {state.value}: {message}" + (f"; {todo}" if todo else ""))


@dataclass(frozen=True)
class ClusterFailure:
    """Why the cluster's latest read failed: Prometheus's own named failure (`state`, a `PrometheusError`, whose
    reason names Prometheus and that state), or any other (`state` None: 'RuntimeError: …')."""

    reason: str
    state: PrometheusState | None = None

    @property
    def said(self) -> str:
        """The failure in one line, naming Prometheus once: 'prometheus unreachable: cannot reach …' as it is,
        any other as 'prometheus failing: RuntimeError: …'."""
        return self.reason if self.state is not None else f"prometheus failing: {self.reason}"


class TargetHealth(str, Enum):
    """A scrape target's state, worst first."""

    DOWN = "down"  # up == 0: the last scrape failed
    INVALID = "invalid"  # `up` is neither 0 nor 1: the server's answer cannot be believed
    STALE = "stale"  # its newest sample is older than the stale threshold
    UP = "up"


_HEALTH_ORDER = {TargetHealth.DOWN: 0, TargetHealth.INVALID: 1, TargetHealth.STALE: 2, TargetHealth.UP: 3}


class SampleLie(str, Enum):
    """Why a sample Prometheus answered was not used: it cannot be what its series measures."""

    NOT_A_NUMBER = "nan"  # NaN: no figure at all
    NEGATIVE = "negative"  # bytes, a count, tokens or an age below zero
    FUTURE = "future"  # a sample dated after the server's own clock (a negative age)
    NOT_UP_OR_DOWN = "not_0_or_1"  # `up` is 1 or 0, nothing else
    OUT_OF_RANGE = "out_of_range"  # a fraction outside 0–1


_LIE_WORDS = {
    SampleLie.NOT_A_NUMBER: "is NaN",
    SampleLie.NEGATIVE: "is negative",
    SampleLie.FUTURE: "is dated in the future (a negative age)",
    SampleLie.NOT_UP_OR_DOWN: "is neither 0 nor 1",
    SampleLie.OUT_OF_RANGE: "is outside 0–1",
}


class IgnoredSample(_Frozen):
    """One sample kvtop did not use, and why (a lying or broken server is named, never believed)."""

    query: str  # the key of the query that answered it (kvtop.sources.prometheus.QUERIES)
    instance: str
    lie: SampleLie
    value: str  # the sample as Prometheus wrote it

    @computed_field  # type: ignore[prop-decorator]
    @property
    def text(self) -> str:
        where = f" of {self.instance}" if self.instance else ""
        return f"{self.query} sample{where} {self.value} {_LIE_WORDS[self.lie]}: not used"
SEVERITY_WEIGHT = {"critical": 1000, "error": 1000, "warning": 10, "warn": 10, "info": 1}
ADVICE = ("info",)  # severities that are advice (trade-offs), not findings


def is_advice(severity: str) -> bool:
    """Whether a finding of this severity (as Prometheus labels it, any case) is advice, not a fault: the one test
    every cluster count and view reads (`ADVICE`)."""
    return severity.lower() in ADVICE


class ClusterTarget(_Frozen):
    """One scrape target (`up{job, instance}`) and how old its last sample is."""

    job: str
    instance: str
    health: TargetHealth
    age_seconds: float | None = None


class GpuSource(str, Enum):
    """Which exporter a GPU's figures came from."""

    KVTOP = "kvtop"  # kvtop's exporter: NVML v2 bytes (used excludes reserved)
    DCGM = "dcgm"  # DCGM exporter: framebuffer MiB, converted


#: kvtop GPU states (`kvtop_gpu_info{state}`) that are out of service: counted as GPUs, never as capacity
OUT_OF_SERVICE = ("lost", "error")


class ClusterGpu(_Frozen):
    """One GPU's memory as DCGM (MiB, converted) or kvtop's exporter (bytes) reported it."""

    gpu: str
    uuid: str | None = None
    name: str | None = None
    total_bytes: int | None = None  # DCGM: used + free + reserved
    used_bytes: int | None = None
    free_bytes: int | None = None
    reserved_bytes: int | None = None
    source: GpuSource
    state: str | None = None  # kvtop's GPU state ("ok", "lost", …); None where only DCGM reported it

    @property
    def lost(self) -> bool:
        """Out of service (lost or failing): counted among the node's GPUs, never as capacity."""
        return self.state in OUT_OF_SERVICE


class NodeGpus(_Frozen):
    """A node's GPUs as one exporter reports them, summed by Prometheus itself (`count by`, `sum by`):
    all the node list shows, without reading every GPU's series (a 1,000-node cluster has 8,000 GPUs).
    Where kvtop's exporter and DCGM both report a node, kvtop's figures are the node's."""

    source: GpuSource
    count: int  # GPUs reported (lost ones included); DCGM: distinct `gpu` labels, a MIG GPU counted once
    lost: int = 0  # out of service (kvtop's state lost or error; DCGM names none)
    # summed over the GPUs (DCGM: the MIG instances) that report both used and total; None when none does
    used_bytes: int | None = None
    total_bytes: int | None = None


class ClusterEngine(_Frozen):
    """One engine seen on a node: kvtop's per-rank capacity (tightest rank), or an engine's own metrics.

    Tokens are per rank of this engine: figures of two engines are never added (a rank of one model
    holds tokens of another size)."""

    instance: str
    engine: str  # kvtop's engine id ("sglang:4242") or the engine kind for engine metrics
    source: str  # "kvtop", or the engine id whose own metrics gave the figure
    clean_token_capacity: int | None = None  # kvtop: the launch on empty GPUs
    predicted_token_capacity: int | None = None  # kvtop: clean with every measured cause applied
    live_token_capacity: int | None = None  # live or logged, as the engine reports it
    kv_usage_fraction: float | None = None

    @property
    def from_engine_metrics(self) -> bool:
        """Its figures are the engine's own series in Prometheus (no kvtop exporter for it on the node)."""
        return self.source != "kvtop"

    @property
    def now_token_capacity(self) -> int | None:
        """What a rank holds now: the engine's own figure, else kvtop's prediction."""
        return self.live_token_capacity if self.live_token_capacity is not None else self.predicted_token_capacity

    @computed_field  # type: ignore[prop-decorator]
    @property
    def shortfall_tokens(self) -> int | None:
        """Clean minus now, per rank (positive: capacity missing); None where either is unknown."""
        now = self.now_token_capacity
        return None if now is None or self.clean_token_capacity is None else self.clean_token_capacity - now

    @property
    def shortfall_fraction(self) -> float:
        shortfall, clean = self.shortfall_tokens, self.clean_token_capacity
        return shortfall / clean if shortfall and clean else 0.0

    @property
    def shortfall_said(self) -> str | None:
        """'−13.8%', or '−464 tokens' where the share rounds to 0.0 % ('−0.0%' would say nothing); a typographic
        minus, as every change. None where nothing is missing (a rank at or above its clean figure) or unknown.
        The one spelling the cluster's table, `kvtop cluster` text and its JSON (`shortfall`) read."""
        short = self.shortfall_tokens
        if short is None or short <= 0:
            return None
        if round(self.shortfall_fraction * 100, 1) == 0:
            return f"{signed(-short)} tokens"
        return percent(-self.shortfall_fraction, 1)


class ClusterNode(_Frozen):
    """Everything the cluster view knows about one host."""

    name: str
    targets: tuple[ClusterTarget, ...] = ()
    gpu_summary: NodeGpus | None = None  # None: no exporter reports a GPU of the node
    # every GPU, only when asked for (`kvtop cluster --gpus`); None: not read (the summary holds the counts)
    gpus: tuple[ClusterGpu, ...] | None = None
    engines: tuple[ClusterEngine, ...] = ()
    unexplained_bytes: int | None = None  # summed over kvtop's ranks (negative: less than predicted)
    findings: Mapping[str, int] = {}  # open kvtop findings by severity
    notes: tuple[str, ...] = ()
    demo_scenario: str | None = None  # kvtop export serves this simulated node (--demo), not the host's GPUs

    @computed_field  # type: ignore[prop-decorator]
    @property
    def health(self) -> TargetHealth:
        """The worst of its targets (UP when Prometheus lists none for it)."""
        return min((t.health for t in self.targets), key=_HEALTH_ORDER.__getitem__, default=TargetHealth.UP)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def age_seconds(self) -> float | None:
        """The oldest newest-sample among its targets."""
        ages = [t.age_seconds for t in self.targets if t.age_seconds is not None]
        return max(ages) if ages else None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def findings_total(self) -> int:
        """Open findings of severity warning or worse (info findings are advice, not faults)."""
        return sum(count for severity, count in self.findings.items() if not is_advice(severity))

    @computed_field  # type: ignore[prop-decorator]
    @property
    def advice_total(self) -> int:
        return sum(count for severity, count in self.findings.items() if is_advice(severity))

    @computed_field  # type: ignore[prop-decorator]
    @property
    def gpus_lost(self) -> int:
        """GPUs kvtop's exporter reports lost or failing (whole GPUs out of service)."""
        return self.gpu_summary.lost if self.gpu_summary is not None else 0

    @property
    def worst_engine(self) -> ClusterEngine | None:
        """The engine missing the largest share of its clean capacity (else the first with a figure)."""
        known = [e for e in self.engines if e.now_token_capacity is not None]
        return max(known, key=lambda e: e.shortfall_fraction, default=None)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def capacity_shortfall_fraction(self) -> float:
        """The largest share of an engine's clean capacity missing now (engines are never summed)."""
        worst = self.worst_engine
        return worst.shortfall_fraction if worst is not None else 0.0

    @property
    def findings_weight(self) -> int:
        return sum(
            SEVERITY_WEIGHT.get(severity.lower(), 1) * count for severity, count in self.findings.items()
        )


class ClusterView(_Frozen):
    """The cluster at `taken_at` (epoch seconds), nodes worst-first."""

    prometheus_url: str  # without credentials
    taken_at: float
    nodes: tuple[ClusterNode, ...] = ()
    engines: tuple[JoinedEngine, ...] = ()  # every engine with its parts on every node, joined by its identity
    disaggregated: tuple[DisaggregatedGroup, ...] = ()  # prefill and decode engines by the model they serve
    # the queries that got no answer before the command's deadline ran out (the view is partial)
    missing: tuple[str, ...] = ()
    deadline_s: float | None = None  # the deadline that ran out, when some are missing
    ignored: tuple[IgnoredSample, ...] = ()  # samples that cannot be true, named and not used

    @computed_field  # type: ignore[prop-decorator]
    @property
    def nodes_not_up(self) -> int:
        return sum(1 for node in self.nodes if node.health is not TargetHealth.UP)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def nodes_simulated(self) -> int:
        """Nodes whose series a demo serves (`demo="1"`: `kvtop export --demo`, a demo engine page), not real GPUs."""
        return sum(1 for node in self.nodes if node.demo_scenario is not None)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def simulated(self) -> bool:
        """Every node is a demo (`kvtop cluster --demo-cluster`): the whole view is simulated, never "live"."""
        return bool(self.nodes) and self.nodes_simulated == len(self.nodes)


def worst_first_key(node: ClusterNode) -> tuple[int, int, int, int, float, str]:
    """Down, then stale targets; then more GPUs lost; then more unexplained bytes; then heavier
    findings; then the larger share of an engine's clean capacity missing; ties by name."""
    return (
        _HEALTH_ORDER[node.health],
        -node.gpus_lost,
        -max(node.unexplained_bytes or 0, 0),
        -node.findings_weight,
        -node.capacity_shortfall_fraction,
        node.name,
    )


def rank_nodes(nodes: Iterable[ClusterNode]) -> tuple[ClusterNode, ...]:
    """The nodes worst-first (see `worst_first_key`)."""
    return tuple(sorted(nodes, key=worst_first_key))
