"""The fake Prometheus the tests use: kvtop's own synthetic server (kvtop/sources/prometheus_synthetic.py),
remembering each query and its headers so a test can check what kvtop asked and sent.

Each target is a recorded exposition page (DCGM exporter, engine /metrics, kvtop's exporter) scraped as
`{job, instance}`; tests/integration checks the same answers against a real Prometheus.
"""

from __future__ import annotations

from collections.abc import Sequence

import httpx

from kvtop.sources.prometheus_synthetic import ScrapeTarget, SyntheticPrometheus

NOW = 1_750_000_100.0
Target = ScrapeTarget


class FakePrometheus(SyntheticPrometheus):
    def __init__(self, targets: Sequence[ScrapeTarget] = (), *, now: float = NOW) -> None:
        super().__init__(targets, now=now)
        self.queries: list[str] = []
        self.headers: list[httpx.Headers] = []

    def handler(self, request: httpx.Request) -> httpx.Response:
        self.queries.append(request.url.params["query"])
        self.headers.append(request.headers)
        return super().handler(request)
