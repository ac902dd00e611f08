"""Which severities are advice is one test (`cluster.is_advice`), which every cluster count and view calls (session 69:
`severity.lower() in ADVICE` was written out four times in kvtop's cluster code, two of them negated).

A node exporting kvtop_findings{severity="warning"} 2 and {severity="INFO"} 3 (Prometheus keeps the label's case as the
exporter wrote it) has 2 faults and 3 advice in each place that counts them."""

from __future__ import annotations

import re
from pathlib import Path

from kvtop.domain.cluster import ClusterNode, is_advice
from kvtop.domain.cluster_findings import ExportedCounts, counted_kind

KVTOP = Path(__file__).resolve().parents[2] / "kvtop"


def test_one_test_says_what_is_advice_and_every_count_agrees() -> None:
    assert is_advice("info") and is_advice("INFO") and not is_advice("warning") and not is_advice("critical")
    node = ClusterNode(name="n1", findings={"warning": 2, "INFO": 3})
    assert (node.findings_total, node.advice_total) == (2, 3)
    assert ExportedCounts.of("n1", node).faults == (("warning", 2),)
    assert (counted_kind(3, "INFO"), counted_kind(2, "warning")) == ("3 advice", "2 findings")


def test_the_membership_is_written_once() -> None:
    written = [
        str(path.relative_to(KVTOP))
        for path in KVTOP.rglob("*.py")
        for line in path.read_text(encoding="utf-8").splitlines()
        if re.search(r"\bin ADVICE\b", line)
    ]
    assert written == ["domain/cluster.py"]  # in `is_advice` alone
