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

from kvtop.sources.prometheus import QUERIES

Series = list[tuple[dict[str, str], float]]
_SELECTOR = re.compile(r"([A-Za-z_:][\w:]*)?\{(.*)\}")
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


class SyntheticPrometheus:
    """Answers kvtop's queries over the series of `targets` (parsed once) at time `now` (epoch)."""

    def __init__(self, targets: Sequence[ScrapeTarget], *, now: float) -> None:
        self.targets = list(targets)
        self.now = now
        self._series = parse_targets(self.targets)
        self._answers: dict[str, Series] = {}
        self._by_query = {expr: key for key, expr in QUERIES.items()}

    def series(self) -> Series:
        return self._series

    def _named(self, pattern: str) -> Series:
        return [(labels, value) for labels, value in self._series if re.fullmatch(pattern, labels["__name__"])]

    def _groups(self, series: Series, by: tuple[str, ...]) -> dict[tuple[str, ...], Series]:
        groups: dict[tuple[str, ...], Series] = {}
        for labels, value in series:
            groups.setdefault(tuple(labels.get(k, "") for k in by), []).append((labels, value))
        return groups

    def _aggregate(self, name: str, by: tuple[str, ...], op: Callable[[list[float]], float]) -> Series:
        groups = self._groups(self._named(name), by)
        return [(dict(zip(by, key, strict=True)), op([v for _, v in members])) for key, members in groups.items()]

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
        match = re.search(r'__name__=~"([^"]+)"', QUERIES[key])
        return self._named(match.group(1) if match else re.escape(QUERIES[key]))

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
