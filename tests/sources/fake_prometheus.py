"""A fake Prometheus HTTP API for httpx.MockTransport, fed with recorded exposition pages.

Each target is a page (DCGM exporter, engine /metrics, kvtop's exporter) scraped as
`{job, instance}`; the fake answers exactly the instant queries `kvtop.sources.prometheus.QUERIES`
sends, computing the server-side aggregations the way PromQL would.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import httpx
from prometheus_client.parser import text_string_to_metric_families

from kvtop.sources.prometheus import QUERIES

NOW = 1_750_000_100.0
Series = list[tuple[dict[str, str], float]]


@dataclass
class Target:
    job: str
    instance: str
    page: str
    up: bool = True
    age_s: float = 5.0  # time() - timestamp(up)


@dataclass
class FakePrometheus:
    targets: list[Target] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)
    headers: list[httpx.Headers] = field(default_factory=list)
    _parsed: Series | None = field(default=None, repr=False)

    def series(self) -> Series:
        """Every sample of every up target, labelled with its job and instance (parsed once)."""
        if self._parsed is not None:
            return self._parsed
        out: Series = []
        for target in self.targets:
            if not target.up:
                continue  # a failed scrape leaves stale markers: its series vanish
            for family in text_string_to_metric_families(target.page):
                for sample in family.samples:
                    labels = {
                        **sample.labels,
                        "__name__": sample.name,
                        "job": target.job,
                        "instance": target.instance,
                    }
                    out.append((labels, sample.value))
        self._parsed = out
        return out

    def _named(self, pattern: str) -> Series:
        return [
            (labels, value) for labels, value in self.series() if re.fullmatch(pattern, labels["__name__"])
        ]

    def _aggregate(self, name: str, by: tuple[str, ...], op: str) -> Series:
        groups: dict[tuple[str, ...], list[float]] = {}
        for labels, value in self._named(name):
            groups.setdefault(tuple(labels.get(k, "") for k in by), []).append(value)
        reduce = {"sum": sum, "min": min, "max": max}[op]
        return [(dict(zip(by, key, strict=True)), reduce(values)) for key, values in groups.items()]

    def answer(self, key: str) -> Series:
        if key == "up":
            return [
                ({"__name__": "up", "job": t.job, "instance": t.instance}, 1.0 if t.up else 0.0)
                for t in self.targets
            ]
        if key == "age":
            return [({"job": t.job, "instance": t.instance}, t.age_s) for t in self.targets]
        if key == "snapshot_age":
            return [
                (labels, NOW - value)
                for labels, value in self._aggregate("kvtop_snapshot_timestamp_seconds", ("instance",), "max")
            ]
        if key == "unexplained":
            return self._aggregate("kvtop_rank_unexplained_bytes", ("instance",), "sum")
        if key == "findings":
            return self._aggregate("kvtop_findings", ("instance", "severity"), "sum")
        if key == "capacity":
            return self._aggregate("kvtop_rank_token_capacity", ("instance", "engine", "source"), "min")
        expr = QUERIES[key]
        match = re.search(r'__name__=~"([^"]+)"', expr)
        return self._named(match.group(1) if match else re.escape(expr))

    def handler(self, request: httpx.Request) -> httpx.Response:
        query = request.url.params["query"]
        self.queries.append(query)
        self.headers.append(request.headers)
        key = next(k for k, expr in QUERIES.items() if expr == query)
        result = [
            {"metric": labels, "value": [NOW, repr(float(value))]} for labels, value in self.answer(key)
        ]
        return httpx.Response(
            200, json={"status": "success", "data": {"resultType": "vector", "result": result}}
        )

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handler)
