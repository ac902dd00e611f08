"""`kvtop cluster --demo-cluster`: the demo's engine seen only through its own metrics (issue 31).

examples/clusters/engine_pages/vllm-dp4-api{0,1}.prom are two API servers' pages of one vLLM engine at DP4
(hybrid balancing), built from the recorded NIM Qwen3-VL page's series (tests/data/samples/vllm_metrics) with
`demo="1"` on each series; engine core 3 sized 31,250 blocks of 16 (the others the page's 34,470). Expected:
31,250 × 16 = 500,000 tokens and 34,470 × 16 = 551,520, by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtop.cli import main
from kvtop.commands.demo_cluster import load_cluster


def test_the_metrics_only_engine_states_capacity_layout_and_tightest_rank(demo_json: dict) -> None:
    vllm = next(e for e in demo_json["engines"] if e["served_model"] == "qwen3-vl-235b-awq")
    assert vllm["engine_metrics_only"] is True
    assert (vllm["layout"], vllm["nnodes"], vllm["actual_tokens"]) == ("DP4, TP, PP not reported", 2, 31_250 * 16)
    assert [(n["node"], n["ranks"], n["capacity"]) for n in vllm["nodes"]] == [
        ("10.0.5.10:8000", "DP0–DP1", {"live": 34_470 * 16}), ("10.0.5.11:8000", "DP2–DP3", {"live": 500_000}),
    ]  # fmt: skip
    assert vllm["tightest"] == {"node": "10.0.5.11:8000", "gpu": None, "rank": "dp3", "tokens": 500_000, "clear": True}
    nodes = {n["name"]: n for n in demo_json["nodes"]}
    assert nodes["10.0.5.11:8000"]["demo_scenario"] == "engine metrics page"  # a demo, never a real engine


def test_the_text_row_says_where_the_figure_comes_from(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cluster", "--demo-cluster"]) == 0
    text = capsys.readouterr().out
    assert ("vLLM qwen3-vl-235b-awq @10.0.5.10:8000 · DP4, TP, PP not reported over 2 nodes: 10.0.5.10:8000 DP0–DP1, API · "
            "10.0.5.11:8000 DP2–DP3") in text  # fmt: skip
    assert "tightest rank: 10.0.5.11:8000 (dp3) · engine holds 500,000 tokens per rank (engine metrics)" in text
    assert "simulated: a demo engine's own /metrics page" in text


@pytest.mark.parametrize("page", ["no-such.prom", "../demo.json"])
def test_an_engine_page_not_beside_the_cluster_file_names_its_field(tmp_path: Path, page: str) -> None:
    (tmp_path / "demo.json").write_text("{}")
    folder = tmp_path / "clusters"
    folder.mkdir()
    path = folder / "c.json"
    node = {"name": "a", "scenario": "llama70b-tp8-sglang", "instance": "10.0.0.1:9401"}
    path.write_text(json.dumps({"nodes": [node], "engine_targets": [{"job": "vllm", "instance": "10.0.0.2:8000", "page": page}]}))
    with pytest.raises(Exception, match="no engine page") as raised:
        load_cluster(str(path))
    assert getattr(raised.value, "field", None) == "engine_targets[0].page"
