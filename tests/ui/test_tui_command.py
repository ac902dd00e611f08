"""`kvtop` with no subcommand (kvtop/commands/tui.py): the source it builds and the options it refuses."""

from __future__ import annotations

import argparse

import pytest

from kvtop.commands.tui import _is_demo, _signal_sender, build_source, run_tui
from kvtop.domain.errors import InputError
from kvtop.domain.node import NodeSnapshot


def options(**overrides: object) -> argparse.Namespace:
    values: dict[str, object] = {
        "demo": None,
        "theme": None,
        "read_only": False,
        "engine_log": None,
        "interval": 1.0,
        "prometheus": None,
    }
    values.update(overrides)
    return argparse.Namespace(**values)


def test_demo_builds_the_simulated_node():
    source = build_source(options(demo="default"))
    assert source.label.startswith("demo:")
    snapshot = source.collect()
    assert isinstance(snapshot, NodeSnapshot)
    assert snapshot.observation.gpus


def test_prometheus_routes_to_the_cluster_view_which_reads_its_token_first(tmp_path):
    """`kvtop --prometheus URL` opens the cluster app; only that path reads --token-file."""
    with pytest.raises(InputError, match="--token-file: cannot read the token file"):
        run_tui(options(prometheus="http://127.0.0.1:9", token_file=str(tmp_path / "missing")))
    source = build_source(options(demo="default", prometheus="http://127.0.0.1:9"))
    assert source.label.startswith("demo:")  # the node source itself no longer refuses


@pytest.mark.parametrize("interval", [0, 0.0001])
def test_an_interval_under_the_floor_is_refused_before_anything_starts(interval):
    """The floor argparse and config.toml's reader apply (0.1 s), here too, for a value set in code."""
    with pytest.raises(InputError, match=r"--interval: must be at least 0\.1 s"):
        run_tui(options(demo="default", interval=interval))


def test_a_demo_node_gets_a_signal_sender_that_sends_nothing(monkeypatch, tmp_path):
    from kvtop.sources.signals import PsutilSignalSender, SimulatedSignalSender

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    source = build_source(options(demo="llama70b-tp8-foreign-gpu3"))
    assert _is_demo(source)
    assert isinstance(_signal_sender(source, simulated=True), SimulatedSignalSender)
    assert isinstance(_signal_sender(source, simulated=False), PsutilSignalSender)


def test_a_settings_file_kvtop_cannot_read_stops_the_tui_with_one_line(tmp_path, capsys) -> None:
    from kvtop.cli import main

    bad = tmp_path / "kvtop.toml"
    bad.write_text("interval_s = 'soon'\n")
    assert main(["--config", str(bad), "--demo"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kvtop: error: interval_s: ") and str(bad) in err and err.count("\n") == 1
