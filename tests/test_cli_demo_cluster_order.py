"""`kvtop --demo-cluster cluster`: the option written before the command. An operator trial got
"no demo cluster 'cluster'" (argparse took the command for the demo's name, then ran the TUI with it), as
`kvtop --demo snapshot` once did; the demo cluster is examples/clusters/demo.json: ten nodes named there and two
engine metrics targets, each its own node named by its instance (twelve, as tests/ui/test_cluster_metrics_only.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtop.cli import main

DEMO = Path(__file__).resolve().parents[1] / "examples" / "clusters" / "demo.json"
DEMO_NODES = {node["name"] for node in json.loads(DEMO.read_text())["nodes"]} | {
    target["instance"] for target in json.loads(DEMO.read_text())["engine_targets"]
}


@pytest.mark.parametrize(
    "args",
    [
        ["--demo-cluster", "cluster", "--json"],  # no name: the default, 'demo'
        ["--demo-cluster", "demo", "cluster", "--json"],
        ["--demo-cluster=demo", "cluster", "--json"],
    ],
)
def test_demo_cluster_before_the_cluster_command_reads_the_demo(
    args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(args) == 0
    view = json.loads(capsys.readouterr().out)
    assert view["prometheus_url"] == "http://prometheus.demo:9090"  # the synthetic Prometheus, no server
    assert {node["name"] for node in view["nodes"]} == DEMO_NODES and len(DEMO_NODES) == 12


def test_a_demo_cluster_name_before_the_command_is_still_checked(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--demo-cluster", "no-such-cluster", "cluster"]) == 2
    err = capsys.readouterr().err.strip()
    assert (
        err.startswith("kvtop: error: --demo-cluster: no demo cluster 'no-such-cluster'")
        and len(err.splitlines()) == 1
    )


def test_demo_cluster_before_another_command_says_how_to_write_it(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--demo-cluster", "plan", "--model", "x"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("kvtop: error: --demo-cluster: `kvtop plan` reads no demo cluster (the cluster view: "
                   "kvtop --demo-cluster, or kvtop cluster --demo-cluster [NAME])")  # fmt: skip
