"""A demo is never a node: without an NVIDIA driver the headless commands refuse (exit 2, one line
naming --demo) instead of reading the demo node as this one; under --demo every output says so.

"No driver" is the fake pynvml (tests/fakes/fake_pynvml.py) raising the real pynvml errors that
NVML raises without a library or a kernel module, so these tests read the same on a GPU node.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import pynvml
import pytest

from kvtop.cli import main
from kvtop.commands.node_source import DemoSource
from kvtop.commands.tui import build_source
from tests.fakes.fake_pynvml import FakePynvml

HEADLESS = {
    "snapshot": ["snapshot"],
    "snapshot --json": ["snapshot", "--json"],
    "diagnose": ["diagnose"],
    "diagnose --json": ["diagnose", "--json"],
    "export": ["export", "--listen", "127.0.0.1:0"],
    "probe": ["probe", "--model", "llama-3-70b", "--tp", "8", "--gpu", "0", "--tokens", "1000"],
}


@pytest.fixture(params=[pynvml.NVMLError_LibraryNotFound, pynvml.NVMLError_DriverNotLoaded])
def no_driver(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> type[pynvml.NVMLError]:
    """pynvml as a machine without an NVIDIA driver has it; nothing may be served or allocated."""
    monkeypatch.setitem(sys.modules, "pynvml", FakePynvml([], init_error=request.param))

    def must_not_run(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a headless command went on without a driver")

    monkeypatch.setattr("kvtop.sources.exporter.Exporter", must_not_run)
    monkeypatch.setattr("kvtop.commands.probe.run_probe", must_not_run)
    return request.param


@pytest.mark.parametrize("command", HEADLESS)
def test_without_a_driver_each_headless_command_exits_2_naming_demo(
    no_driver: type[pynvml.NVMLError], command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(HEADLESS[command]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1, err
    reason = (
        "no NVIDIA driver (NVML library not found)"
        if no_driver is pynvml.NVMLError_LibraryNotFound
        else "no NVIDIA driver (kernel driver not loaded)"
    )
    assert err.startswith(f"kvtop: error: {reason}: no ") and "--demo" in err  # probe too: one form


def test_the_tui_may_still_open_the_demo_node_saying_so(no_driver: type[pynvml.NVMLError]) -> None:
    source = build_source(argparse.Namespace(demo=None, engine_log=None))
    assert isinstance(source, DemoSource)
    snapshot = source.collect()
    assert snapshot.notice is not None and snapshot.notice.endswith("showing the demo node 'llama70b-tp8-sglang'")
    assert snapshot.observation.nvml_state.value == "demo"


@pytest.mark.parametrize("where", ["after", "before"])
def test_under_demo_the_json_says_demo(
    no_driver: type[pynvml.NVMLError], where: str, capsys: pytest.CaptureFixture[str]
) -> None:
    demo = ["--demo", "gpu5-lost"]
    snapshot_args = [*demo, "snapshot", "--json"] if where == "before" else ["snapshot", "--json", *demo]
    assert main(snapshot_args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["source"] == "demo:gpu5-lost"
    assert out["nvml"] == {
        "state": "demo",
        "message": "a simulated node (demo scenario 'gpu5-lost'): no NVIDIA driver was read",
        "driver_version": None,  # the scenario's driver is not claimed as this machine's
    }
    assert main(["diagnose", "--json", *demo]) == 1  # GPU 5 is lost: a critical finding
    assert json.loads(capsys.readouterr().out)["source"] == "demo:gpu5-lost"


def test_under_demo_the_text_headers_say_simulated(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["snapshot", "--demo"]) == 0
    head = capsys.readouterr().out.splitlines()[0]
    assert head.startswith("kvtop snapshot · demo:llama70b-tp8-sglang (a simulated node, not this machine) · ")
    assert main(["diagnose", "--demo"]) == 0
    head = capsys.readouterr().out.splitlines()[0]
    assert head.startswith("kvtop diagnose — demo:llama70b-tp8-sglang (a simulated node, not this machine): ")


def test_the_probe_refuses_a_demo_node(capsys: pytest.CaptureFixture[str]) -> None:
    """The probe allocates real memory; a simulated node has none, so --demo is refused, not ignored."""
    args = ["--demo", "probe", "--model", "llama-3-70b", "--tp", "8", "--device", "cpu", "--memory-limit", "1GiB"]
    assert main([*args, "--tokens", "16"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith("kvtop: error: --demo: a --demo node has no memory to allocate; --device cpu")


def test_the_cluster_view_marks_a_node_whose_exporter_serves_a_demo() -> None:
    """`kvtop export --demo` on one node, a real node beside it: the cluster says which is simulated."""
    from kvtop.commands.cluster import _text
    from kvtop.sources.prometheus import ClusterReader, PrometheusClient
    from kvtop.ui.widgets.cluster_table import node_cells
    from tests.sources.fake_prometheus import NOW, FakePrometheus, Target
    from tests.sources.test_prometheus import kvtop_page

    demo_page = _exported(DemoSource.open("llama70b-tp8-sglang"), "demo-node")
    targets = [Target("kvtop", "10.0.0.1:9401", demo_page), Target("kvtop", "10.0.0.2:9401", kvtop_page("real-node"))]
    fake = FakePrometheus(targets)
    client = PrometheusClient("http://prometheus.test:9090", transport=fake.transport())
    view = ClusterReader(client, clock=lambda: NOW).read()
    nodes = {node.name: node for node in view.nodes}
    assert nodes["demo-node"].demo_scenario == "llama70b-tp8-sglang" and nodes["real-node"].demo_scenario is None
    assert "simulated: kvtop export serves the demo scenario 'llama70b-tp8-sglang'" in nodes["demo-node"].notes[0]
    node_lines = _text(view).split("\n\n")[0].splitlines()[1:]  # the engines follow after a blank line
    rows = {line.split()[0]: line for line in node_lines if not line.startswith(" ")}
    assert rows["demo-node"].startswith("demo-node (demo) ") and "(demo)" not in rows["real-node"]
    assert node_cells(nodes["demo-node"])[0].text == "demo-node (demo)"
    assert node_cells(nodes["real-node"])[0].text == "real-node"


def _exported(source: DemoSource, node: str) -> str:
    from prometheus_client import CollectorRegistry, generate_latest

    from kvtop.sources.exporter import SnapshotCollector
    from tests.sources.fake_prometheus import NOW

    collector = SnapshotCollector(source, node=node, clock=lambda: NOW)
    collector.refresh()
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    return generate_latest(registry).decode()
