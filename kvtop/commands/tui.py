"""`kvtop` with no subcommand: build the real source and model loader, then run the TUI.

This is where the app meets the outside world: the UI itself never imports a concrete source.
`--demo [SCENARIO]` runs on a simulated node; without it kvtop watches this node live (or, with
no NVIDIA driver, the default demo node with a notice saying so: the TUI may, a headless command
never does). Unless `--read-only`, the app is handed the probe runner for `P` (kvtop.sources.probe)
and a signal sender for the process panel (kvtop.sources.signals, logging to its action log). On a
demo node both stand in for the real thing: the probe runs on this machine's CPU with the demo GPU's
free memory as its limit, and signals are logged but never sent (the demo's pids are not this machine's).
"""

from __future__ import annotations

import argparse
import importlib.util
import threading
from pathlib import Path

from kvtop.domain.calibration.node import NodeMeasure
from kvtop.domain.ports import SignalSender, SnapshotSource
from kvtop.domain.probe import ProbeRequest, ProbeResult

#: What the TUI says instead of offering a probe when torch is not installed.
NO_TORCH = "the probe allocates with torch, which is not installed here: pip install 'kvtop-ledger[probe]'"


def build_source(args: argparse.Namespace) -> SnapshotSource:
    """The node the options ask for: a demo scenario, or this node."""
    from kvtop.commands.node_source import open_node_source
    from kvtop.sources.calibration_store import append_measure, store_disabled

    engine_log = getattr(args, "engine_log", None)
    remember = None if store_disabled(bool(getattr(args, "no_calibration_store", False))) else append_measure
    return open_node_source(
        args.demo, engine_log=Path(engine_log) if engine_log else None, demo_without_driver=True, remember=remember
    )


def run_tui(args: argparse.Namespace) -> int:
    """Run the app until the operator quits; the exit status is the app's return code (0)."""
    from kvtop.commands.tui_settings import interval_of, preferences_store, theme_named_where_given
    from kvtop.sources.hub import load_model
    from kvtop.ui.app import KvtopApp
    from kvtop.ui.heap import settle_heap

    store = preferences_store(args)
    preferences = store.load()  # a file kvtop cannot read is an error naming it, before anything opens
    interval = interval_of(args, preferences)
    if getattr(args, "prometheus", None) or getattr(args, "demo_cluster", None):
        from kvtop.commands.tui_cluster import run_cluster_tui

        return run_cluster_tui(args)
    source = build_source(args)
    read_only = bool(getattr(args, "read_only", False))
    simulated = _is_demo(source)
    torch_missing = importlib.util.find_spec("torch") is None
    probe_runner = None if read_only or torch_missing else _probe_runner
    measures, store_notice = ((), None) if simulated else _node_measures(args)
    with theme_named_where_given(args, store):
        app = KvtopApp(
            source, load_model, theme=getattr(args, "theme", None) or preferences.theme, read_only=read_only,
            interval_s=interval, probe_runner=probe_runner, probe_simulated=simulated,
            probe_unavailable=NO_TORCH if torch_missing and not read_only else None,
            signal_sender=None if read_only else _signal_sender(source, simulated),
            preferences=preferences, preferences_store=store,
            node_measures=measures, startup_notice=store_notice,
        )  # fmt: skip
    settle_heap()
    app.run()
    return app.return_code or 0


def _node_measures(args: argparse.Namespace) -> tuple[tuple[NodeMeasure, ...], str | None]:
    """This node's earlier starts from the local calibration store, for the planner (none when it is off), and
    the one line a store with unreadable lines gives (the app says it on its screen; planned without them)."""
    from kvtop.sources.calibration_store import read_store, store_disabled

    if store_disabled(bool(getattr(args, "no_calibration_store", False))):
        return (), None
    store = read_store()
    return store.measures, store.notice


def _is_demo(source: SnapshotSource) -> bool:
    """A simulated node: its GPUs and pids are not this machine's."""
    from kvtop.commands.node_source import DemoSource

    return isinstance(source, DemoSource)


def _signal_sender(source: SnapshotSource, simulated: bool) -> SignalSender:
    """psutil on this node; on a demo node a sender that logs and sends nothing."""
    from kvtop.sources.signals import ActionLog, PsutilSignalSender, SimulatedSignalSender, default_action_log

    log = ActionLog(default_action_log())
    return SimulatedSignalSender(log, source.label) if simulated else PsutilSignalSender(log)


def _probe_runner(request: ProbeRequest, cancel: threading.Event) -> ProbeResult:
    """The real probe for `P`, with NVML's free memory read before and after the child runs."""
    from kvtop.commands.probe_gpu import free_memory_reader, gpu_index_of
    from kvtop.sources.probe import run_probe

    index = gpu_index_of(request.device)
    reader = free_memory_reader(index) if index is not None else None
    return run_probe(request, cancel=cancel, free_memory_reader=reader)
