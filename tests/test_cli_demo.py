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
    assert snapshot.notice is not None and snapshot.notice.endswith(": a demo node")
    assert source.label == "demo:llama70b-tp8-sglang"
    assert snapshot.observation.nvml_state.value == "demo"


@pytest.mark.parametrize("where", ["after", "before"])
def test_under_demo_the_json_says_demo(
    no_driver: type[pynvml.NVMLError], where: str, capsys: pytest.CaptureFixture[str]
) -> None:
    demo = ["--demo", "gpu5-lost"]
    snapshot_args = [*demo, "snapshot", "--json"] if where == "before" else ["snapshot", "--json", *demo]
    assert main(snapshot_args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["source"] == "demo:gpu5-lost" and out["simulated"] is True
    assert out["nvml"] == {
        "state": "demo",
        "message": "a simulated node (demo scenario 'gpu5-lost'): no NVIDIA driver was read",
        "driver_version": None,  # the scenario's driver is not claimed as this machine's
    }
    assert main(["diagnose", "--json", *demo]) == 1  # GPU 5 is lost: a critical finding
    out = json.loads(capsys.readouterr().out)
    assert out["source"] == "demo:gpu5-lost" and out["simulated"] is True


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
    from kvtop.commands.render_cluster import cluster_json
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
    text = _text(view)
    # the first line says how many of the nodes are demos (each row says which); JSON carries it typed
    assert text.startswith("http://prometheus.test:9090: 2 nodes (1 of 2 simulated), 0 not up (worst first)\n")
    data = cluster_json(view)
    assert (data["nodes_simulated"], data["simulated"]) == (1, False)
    node_lines = text.split("\n\n")[0].splitlines()[1:]  # the engines follow after a blank line
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


def test_a_real_node_is_not_simulated(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The field is false where NVML was read (one fake A100, no engine): a script can test it either way."""
    from kvtop.commands.node_source import LiveSource
    from kvtop.sources.nvml import NvmlSource
    from tests.fakes.fake_process_table import FakeProcessTable
    from tests.fakes.fake_pynvml import gpu_from_mib

    gpu = gpu_from_mib("NVIDIA A100-SXM4-80GB", 0, total_mib=81_920, reserved_mib=557, used_mib=0, bus_id="00000000:07:00.0")
    nvml = NvmlSource(nvml_module=FakePynvml([gpu]), clock=lambda: 1_700_000_100.0)
    live = LiveSource(nvml=nvml, table=FakeProcessTable.of([]))
    monkeypatch.setattr("kvtop.commands.node_source.open_node_source", lambda *args, **kwargs: live)
    for command in ("snapshot", "diagnose"):
        assert main([command, "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert (out["source"], out["simulated"]) == ("nvml", False)
        assert main([command]) == 0
        assert "simulated" not in capsys.readouterr().out.splitlines()[0]


def test_export_of_a_demo_says_so_on_its_first_line(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """`kvtop export --demo`: its one line (stderr; stdout stays empty) says simulated before the URL it serves."""

    def interrupted(self: object) -> None:
        raise KeyboardInterrupt  # Ctrl-C at once: the served page is checked in tests/sources/test_exporter.py

    monkeypatch.setattr("kvtop.sources.exporter.Exporter.wait", interrupted)
    assert main(["export", "--demo", "gpu5-lost", "--listen", "127.0.0.1:0"]) == 0
    out, err = capsys.readouterr()
    first = err.splitlines()[0]
    assert out == "" and first.startswith('kvtop export: serving demo:gpu5-lost (a simulated node: every series carries demo="1") on http://127.0.0.1:')
