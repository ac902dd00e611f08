"""`kvtop` with no subcommand: build the real source and model loader, then run the TUI.

This is where the app meets the outside world: the UI itself never imports a concrete source.
`--demo [SCENARIO]` runs on a simulated node; without it kvtop watches this node live (or, with
no NVIDIA driver, the default demo node with a notice saying so: the TUI may, a headless command
never does). Unless `--read-only`, the
app is handed the real probe runner for `P` (kvtop.sources.probe).
"""

from __future__ import annotations

import argparse
import threading
from pathlib import Path

from kvtop.domain.errors import InputError
from kvtop.domain.ports import SnapshotSource
from kvtop.domain.probe import ProbeRequest, ProbeResult


def build_source(args: argparse.Namespace) -> SnapshotSource:
    """The node the options ask for: a demo scenario, or this node."""
    from kvtop.sources.live import open_node_source

    engine_log = getattr(args, "engine_log", None)
    return open_node_source(
        args.demo, engine_log=Path(engine_log) if engine_log else None, demo_without_driver=True
    )


def run_tui(args: argparse.Namespace) -> int:
    """Run the app until the operator quits; the exit status is the app's return code (0)."""
    from kvtop.sources.hub import load_model
    from kvtop.ui.app import KvtopApp
    from kvtop.ui.heap import settle_heap

    interval = float(getattr(args, "interval", 1.0))
    if interval <= 0:
        raise InputError(f"must be positive (got {interval:g})", field="--interval")
    if getattr(args, "prometheus", None):
        from kvtop.commands.tui_cluster import run_cluster_tui

        return run_cluster_tui(args)
    source = build_source(args)
    read_only = bool(getattr(args, "read_only", False))
    probe_runner = None if read_only else _probe_runner
    app = KvtopApp(
        source, load_model, theme=getattr(args, "theme", None), read_only=read_only,
        interval_s=interval, probe_runner=probe_runner,
    )  # fmt: skip
    settle_heap()
    app.run()
    return app.return_code or 0


def _probe_runner(request: ProbeRequest, cancel: threading.Event) -> ProbeResult:
    """The real probe for `P`, with NVML's free memory read before and after the child runs."""
    from kvtop.commands.probe_gpu import free_memory_reader, gpu_index_of
    from kvtop.sources.probe import run_probe

    index = gpu_index_of(request.device)
    reader = free_memory_reader(index) if index is not None else None
    return run_probe(request, cancel=cancel, free_memory_reader=reader)
