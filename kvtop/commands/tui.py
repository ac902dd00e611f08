"""`kvtop` with no subcommand: build the real source and model loader, then run the TUI.

This is where the app meets the outside world: the UI itself never imports a concrete source.
`--demo [SCENARIO]` runs on a simulated node; without it kvtop watches this node live (or, with
no NVIDIA driver, the default demo node with a notice saying so). Unless `--read-only`, the
app is handed the real probe runner for `P` (kvtop.sources.probe).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from kvtop.domain.errors import InputError
from kvtop.domain.ports import SnapshotSource


def build_source(args: argparse.Namespace) -> SnapshotSource:
    """The node the options ask for: a demo scenario, or this node."""
    from kvtop.sources.live import open_node_source

    if getattr(args, "prometheus", None):
        raise InputError(
            "the TUI shows one node; for a whole cluster run `kvtop cluster --prometheus URL`",
            field="--prometheus",
        )
    engine_log = getattr(args, "engine_log", None)
    return open_node_source(args.demo, engine_log=Path(engine_log) if engine_log else None)


def run_tui(args: argparse.Namespace) -> int:
    """Run the app until the operator quits; the exit status is the app's return code (0)."""
    from kvtop.sources.hub import load_model
    from kvtop.sources.probe import run_probe
    from kvtop.ui.app import KvtopApp

    interval = float(getattr(args, "interval", 1.0))
    if interval <= 0:
        raise InputError(f"must be positive (got {interval:g})", field="--interval")
    source = build_source(args)
    read_only = bool(getattr(args, "read_only", False))
    probe_runner = None if read_only else (lambda request, cancel: run_probe(request, cancel=cancel))
    app = KvtopApp(
        source, load_model, theme=getattr(args, "theme", None), read_only=read_only,
        interval_s=interval, probe_runner=probe_runner,
    )  # fmt: skip
    app.run()
    return app.return_code or 0
