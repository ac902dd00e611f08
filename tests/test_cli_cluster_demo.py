"""`kvtop cluster --demo-cluster`: the simulated cluster through the synthetic Prometheus, as a user runs it.

The demo cluster (examples/clusters/demo.json) has what issue 31 asks for: a TP16 two-node SGLang engine,
a PP2 vLLM engine over two nodes and a Dynamo-style prefill/decode pair, each one engine with its
tightest rank and the node it is on. Expected figures are the scenarios' own facts (their launch
commands, their co-tenant's GPU); tests/sources/test_cluster_engines.py checks the numbers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtop.cli import main


def engine(view: dict, rendezvous: str) -> dict:
    return next(e for e in view["engines"] if e["rendezvous"] == rendezvous)


def test_the_tp16_sglang_engine_over_two_nodes_is_one_engine_with_its_tightest_rank(demo_json: dict) -> None:
    sglang = engine(demo_json, "10.0.1.10:5000")  # --dist-init-addr of both launches
    assert (sglang["kind"], sglang["layout"], sglang["nnodes"]) == ("sglang", "TP16", 2)
    assert [(n["node"], n["ranks"], n["serves_api"]) for n in sglang["nodes"]] == [
        ("h20-a", "TP0–TP7", True), ("h20-b", "TP8–TP15", False),
    ]  # fmt: skip
    # the co-tenant of dsv3-tp16-sglang-node1 sits on its GPU 3
    assert (sglang["tightest"]["node"], sglang["tightest"]["gpu"]) == ("h20-b", "3")
    # the co-tenant, and the gap between kvtop's prediction and what SGLang measured (test_cluster_engines)
    assert [(t["cause"], t["node"]) for t in sglang["terms"]] == [("other_processes", "h20-b"), ("engine_vs_prediction", None)]
    assert sglang["clean_tokens"] + sum(t["tokens"] for t in sglang["terms"]) == sglang["actual_tokens"]


def test_the_demo_cluster_names_no_sample_a_lie(demo_json: dict) -> None:
    """Before: the synthetic server's `time()` was read before the pages were collected, so every node's
    snapshot was dated in its future ("snapshot_age sample … is dated in the future": 10 ignored)."""
    assert demo_json["ignored"] == []
    assert all(node["age_seconds"] is not None and node["age_seconds"] >= 0 for node in demo_json["nodes"])


def test_the_pp2_vllm_engine_over_two_nodes(demo_json: dict) -> None:
    vllm = engine(demo_json, "10.0.2.10")  # --master-addr of both launches
    assert (vllm["kind"], vllm["layout"]) == ("vllm", "TP8 PP2")
    assert [n["ranks"] for n in vllm["nodes"]] == ["PP0 TP0–TP7", "PP1 TP0–TP7"]
    assert vllm["tightest"]["node"] in ("h100-pp-a", "h100-pp-b") and vllm["actual_source"] == "simulated"


def test_the_dynamo_style_pair_names_its_transfer_and_its_decode_finding(demo_json: dict) -> None:
    (pair,) = demo_json["disaggregated"]
    assert (pair["served_model"], pair["transfer"]) == ("llama-3-70b", ["NIXL"])
    assert len(pair["prefill"]) == len(pair["decode"]) == 1
    assert pair["finding"]["decode_requests"] < pair["finding"]["prefill_requests"]


def test_the_text_names_engines_their_nodes_and_the_pair(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cluster", "--demo-cluster"]) == 0
    text = capsys.readouterr().out
    assert "SGLang deepseek-ai/DeepSeek-V3 @10.0.1.10:5000 · TP16 over 2 nodes: h20-a TP0–TP7, API · h20-b TP8–TP15" in text
    assert "tightest rank: h20-b GPU 3" in text
    assert "llama-3-70b: prefill sglang:81000 on pd-prefill → KV over NIXL → decode sglang:82000 on pd-decode" in text
    assert "WARNING decode_pool_limits_concurrency" in text


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["--demo-cluster", "no-such-cluster"], "--demo-cluster"),
        (["--demo-cluster", "--prometheus", "http://prometheus.test:9090"], "--demo-cluster"),
    ],
)
def test_bad_demo_cluster_input_is_one_line(args: list[str], field: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cluster", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and field in err and "Traceback" not in err


def test_a_cluster_file_with_a_node_twice_names_the_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.json"
    node = {"name": "a", "scenario": "llama70b-tp8-sglang", "instance": "10.0.0.1:9401"}
    path.write_text(json.dumps({"nodes": [node, node]}))
    assert main(["cluster", "--demo-cluster", str(path)]) == 2
    assert "nodes" in capsys.readouterr().err


def test_a_node_whose_scenario_is_unknown_names_its_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"nodes": [{"name": "a", "scenario": "no-such-scenario", "instance": "10.0.0.1:9401"}]}))
    assert main(["cluster", "--demo-cluster", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kvtop: error: nodes[0].scenario: node 'a': ") and "no-such-scenario" in err


def test_the_demo_cluster_says_it_is_simulated_first(demo_json: dict, capsys: pytest.CaptureFixture[str]) -> None:
    # examples/clusters/demo.json: 10 nodes each serving a demo scenario's exporter page, and 2 demo engine pages
    # (engine_targets): 12 nodes, every one simulated
    assert (demo_json["nodes_simulated"], demo_json["simulated"], len(demo_json["nodes"])) == (12, True, 12)
    assert main(["cluster", "--demo-cluster"]) == 0
    head = capsys.readouterr().out.splitlines()[0]
    assert head == "http://prometheus.demo:9090: 12 nodes (simulated), 0 not up (worst first)"
