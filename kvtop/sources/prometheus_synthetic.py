"""An in-process stand-in for a Prometheus server: exposition pages scraped as targets, answering over
httpx.MockTransport exactly the instant queries kvtop sends (the cluster reader's `QUERIES` and the node
reader's selectors), with the aggregations computed as PromQL would.

It feeds the demo cluster (`kvtop cluster --demo`, every node a demo scenario's `kvtop export` page) and
the scale benchmark; the tests check it against a real Prometheus (tests/integration). It is no PromQL
engine: a query it does not know is answered `bad_data`, as a server answers a query it cannot parse.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import httpx
from prometheus_client.parser import text_string_to_metric_families

from kvtop.sources.prometheus import ALL_QUERIES

Series = list[tuple[dict[str, str], float]]
_SELECTOR = re.compile(r"([A-Za-z_:][\w:]*)?\{(.*)\}")
_DCGM_FB = "DCGM_FI_DEV_FB_(USED|FREE|RESERVED)"
_DCGM_HOST = ("instance", "Hostname", "hostname")
_FIGURES = tuple(f"kvtop_gpu_memory_{kind}_bytes" for kind in ("used", "total", "reserved", "free")) + tuple(
    f"DCGM_FI_DEV_FB_{kind}" for kind in ("USED", "FREE", "RESERVED")
)
_MATCHER = re.compile(r'([A-Za-z_]\w*)(=~|=)"((?:[^"\\]|\\.)*)"')


@dataclass(frozen=True)
class ScrapeTarget:
    """One scrape target: its page as the exporter serves it, whether the last scrape worked, its age."""

    job: str
    instance: str
    page: str
    up: bool = True
    age_s: float = 5.0  # time() - timestamp(up)


def _unquote(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n"}.get(m.group(1), m.group(1)), text)


def parse_targets(targets: Sequence[ScrapeTarget]) -> Series:
    """Every sample of every target that is up, labelled with its job and instance (empty labels dropped)."""
    out: Series = []
    for target in targets:
        if not target.up:
            continue  # a failed scrape leaves stale markers: its series vanish
        for family in text_string_to_metric_families(target.page):
            for sample in family.samples:
                # an empty label is no label in Prometheus: it stores and answers without it
                labels = {k: v for k, v in sample.labels.items() if v != ""}
                labels.update({"__name__": sample.name, "job": target.job, "instance": target.instance})
                out.append((labels, sample.value))
    return out


def _identity(labels: dict[str, str]) -> tuple[tuple[str, str], ...]:
    """A series' labels but its name: what `and`, `or` and `unless` match on."""
    return tuple(sorted((k, v) for k, v in labels.items() if k != "__name__"))


class SyntheticPrometheus:
    """Answers kvtop's queries over the series of `targets` (parsed once) at time `now` (epoch)."""

    def __init__(self, targets: Sequence[ScrapeTarget], *, now: float) -> None:
        self.targets = list(targets)
        self.now = now
        self._series = parse_targets(self.targets)
        self._answers: dict[str, Series] = {}
        self._by_query = {expr: key for key, expr in ALL_QUERIES.items()}

    def series(self) -> Series:
        return self._series

    def _named(self, pattern: str) -> Series:
        return [(labels, value) for labels, value in self._series if re.fullmatch(pattern, labels["__name__"])]

    def _groups(self, series: Series, by: tuple[str, ...]) -> dict[tuple[str, ...], Series]:
        groups: dict[tuple[str, ...], Series] = {}
        for labels, value in series:
            groups.setdefault(tuple(labels.get(k, "") for k in by), []).append((labels, value))
        return groups

    def _aggregate(self, name: str, by: tuple[str, ...], op: Callable[[list[float]], float], series: Series | None = None) -> Series:
        """`op by (by) (name)` (or over `series`): a grouping label a series lacks is absent from its group's."""
        groups = self._groups(self._named(name) if series is None else series, by)
        return [({k: v for k, v in zip(by, key, strict=True) if v}, op([v for _, v in members]))
                for key, members in groups.items()]  # fmt: skip

    def _with_all(self, pattern: str, names: tuple[str, ...]) -> Series:
        """`{__name__=~pattern} >= 0 and names[0] >= 0 and …`: the series that are figures (not negative, not
        NaN) whose labels but the name are those of a figure of every one of `names`."""
        having = [{_identity(labels) for labels, v in self._named(name) if v >= 0} for name in names]
        return [(labels, v) for labels, v in self._named(pattern)
                if v >= 0 and all(_identity(labels) in ids for ids in having)]  # fmt: skip

    def _lies(self, pattern: str, names: tuple[str, ...]) -> Series:
        """`{__name__=~pattern} < 0 or names[0] != names[0] or …`: negative samples, then NaN ones; each `or`
        adds a series only where none with its labels but the name is in the answer so far."""
        found = [(labels, v) for labels, v in self._named(pattern) if v < 0]
        for name in names:
            seen = {_identity(labels) for labels, _ in found}
            found += [(labels, v) for labels, v in self._named(name) if v != v and _identity(labels) not in seen]
        return found

    def _bottom1(self, series: Series, by: tuple[str, ...]) -> Series:
        """`bottomk by (by) (1, …)`: the series with the least value of each group, its labels kept."""
        return [min(members, key=lambda m: m[1]) for members in self._groups(series, by).values()]

    def answer(self, key: str) -> Series:
        """The answer to `QUERIES[key]`, computed once per instance."""
        if key not in self._answers:
            self._answers[key] = self._compute(key)
        return self._answers[key]

    def _compute(self, key: str) -> Series:
        capacity = "kvtop_rank_token_capacity"
        if key == "up":
            return [({"__name__": "up", "job": t.job, "instance": t.instance}, 1.0 if t.up else 0.0) for t in self.targets]
        if key == "age":
            return [({"job": t.job, "instance": t.instance}, t.age_s) for t in self.targets]
        if key == "snapshot_age":
            latest = self._aggregate("kvtop_snapshot_timestamp_seconds", ("instance",), max)
            return [(labels, self.now - value) for labels, value in latest]
        if key == "unexplained":
            return self._aggregate("kvtop_rank_unexplained_bytes", ("instance",), sum)
        if key == "findings":
            return self._aggregate("kvtop_findings", ("instance", "severity"), sum)
        if key == "gpu_states":
            return self._aggregate("kvtop_gpu_info", ("instance", "state"), len)
        if key == "gpu_memory":
            both = self._with_all("kvtop_gpu_memory_(used|total)_bytes", ("kvtop_gpu_memory_used_bytes", "kvtop_gpu_memory_total_bytes"))
            return self._aggregate("", ("instance", "__name__"), sum, both)
        if key == "dcgm_gpus":
            by_gpu = self._aggregate(_DCGM_FB, (*_DCGM_HOST, "gpu"), len)
            return self._aggregate("", _DCGM_HOST, len, by_gpu)
        if key == "dcgm_memory":
            both = self._with_all(_DCGM_FB, ("DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE"))
            return self._aggregate("", (*_DCGM_HOST, "__name__"), sum, both)
        if key == "gpu_lies":
            return self._lies(f"kvtop_gpu_memory_(total|used|reserved|free)_bytes|{_DCGM_FB}", _FIGURES)
        if key == "usage":
            return self._aggregate("kvtop_rank_kv_usage_ratio", ("instance", "engine"), max)
        if key == "capacity":
            return self._bottom1(self._named(capacity), ("instance", "engine", "source"))
        if key == "terms":
            explained = [(labels, v) for labels, v in self._named(capacity) if labels.get("source") == "explained"]
            tightest = {(l["instance"], l.get("engine", ""), l.get("rank", "")) for l, _ in self._bottom1(explained, ("instance", "engine"))}  # noqa: E741
            return [
                (labels, value) for labels, value in self._named("kvtop_rank_capacity_change_tokens")
                if (labels["instance"], labels.get("engine", ""), labels.get("rank", "")) in tightest
            ]  # fmt: skip
        match = re.search(r'__name__=~"([^"]+)"', ALL_QUERIES[key])
        return self._named(match.group(1) if match else re.escape(ALL_QUERIES[key]))

    def select(self, query: str) -> Series | None:
        """An instant selector (`name{label="v"}`, `{__name__=~"re",label="v"}`) over the series; None when
        the query is no selector."""
        found = _SELECTOR.fullmatch(query)
        if found is None:
            return None
        matchers = [(label, op, _unquote(value)) for label, op, value in _MATCHER.findall(found.group(2))]
        if found.group(1):
            matchers.append(("__name__", "=", found.group(1)))
        return [
            (labels, value) for labels, value in self._series
            if all(re.fullmatch(v, labels.get(k, "")) if op == "=~" else labels.get(k, "") == v for k, op, v in matchers)
        ]  # fmt: skip

    def handler(self, request: httpx.Request) -> httpx.Response:
        query = request.url.params.get("query", "")
        key = self._by_query.get(query)
        series = self.answer(key) if key is not None else self.select(query)
        if series is None:
            return httpx.Response(400, json={"status": "error", "errorType": "bad_data",
                                             "error": f"query not known to the synthetic server: {query[:80]}"})  # fmt: skip
        result = [{"metric": labels, "value": [self.now, repr(float(value))]} for labels, value in series]
        return httpx.Response(200, json={"status": "success", "data": {"resultType": "vector", "result": result}})

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handler)
