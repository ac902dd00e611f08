"""`kvtop cluster --json`: a node's engine read from its kvtop exporter carries the KV usage the exporter serves
(`kvtop_rank_kv_usage_ratio`, its highest rank's); it read null on every kvtop node (session 58's operator run
against a real Prometheus scraping two `kvtop export --demo`), though the engines section had it."""

from __future__ import annotations

import json

import pytest

from kvtop.cli import main


def test_a_kvtop_nodes_engine_says_its_kv_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cluster", "--demo-cluster", "--json"]) == 0
    view = json.loads(capsys.readouterr().out)
    # the same series read per engine piece (`engines[].nodes[]`): each node's part of each engine
    pieces = {(p["instance"], p["engine_id"]): p["kv_usage_fraction"] for e in view["engines"] for p in e["nodes"]}
    kvtop_engines = [e for n in view["nodes"] for e in n["engines"] if e["source"] == "kvtop"]
    assert len(kvtop_engines) >= 10
    for engine in kvtop_engines:
        assert engine["kv_usage_fraction"] == pieces[(engine["instance"], engine["engine"])]
    # a node of a multi-node engine without its API server reports no usage (h20-b, h100-pp-b); every other says it
    said = [e["kv_usage_fraction"] for e in kvtop_engines if e["kv_usage_fraction"] is not None]
    assert len(said) == len(kvtop_engines) - 2 and all(0 < usage <= 1 for usage in said)
