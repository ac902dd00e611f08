"""`kvtop` with no subcommand (kvtop/commands/tui.py): the source it builds and the options it refuses."""

from __future__ import annotations

import argparse

import pytest

from kvtop.commands.tui import build_source, run_tui
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


def test_prometheus_is_refused_with_the_command_that_does_it():
    with pytest.raises(InputError, match="kvtop cluster --prometheus URL"):
        build_source(options(prometheus="http://prometheus:9090"))


def test_a_non_positive_interval_is_refused_before_anything_starts():
    with pytest.raises(InputError, match="--interval: must be positive"):
        run_tui(options(demo="default", interval=0))
