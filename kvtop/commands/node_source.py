"""Which node the TUI and the node commands read: the demo node when asked for, else this one, live.

Composed here, in the composition root, so neither source imports the other: without an NVIDIA driver
the TUI shows the demo node (saying so) and a headless command refuses, naming --demo.
"""

from __future__ import annotations

from pathlib import Path

from kvtop.domain.errors import KvtopError
from kvtop.domain.ports import SnapshotSource
from kvtop.sources.demo import DemoSource
from kvtop.sources.live import LiveSource, missing_driver
from kvtop.sources.nvml import NvmlSource
from kvtop.sources.scenario import DEFAULT_SCENARIO


def open_node_source(
    demo: str | None,
    *,
    engine_log: Path | None = None,
    http_timeout_s: float = 1.0,
    nvml: NvmlSource | None = None,
    demo_without_driver: bool = False,
    deadline_s: float | None = None,
) -> SnapshotSource:
    """The node to show: the demo scenario `demo` (a name, a path or 'default') when given, else
    this node, read live.

    On a machine without an NVIDIA driver there is no node to read. The TUI
    (`demo_without_driver=True`) then shows the default demo node with a notice saying so; a
    headless command gets a KvtopError naming --demo, so that a script never takes a simulated
    node for this one.
    """
    if demo is not None:
        return DemoSource.open(demo, engine_log=engine_log)
    reader = nvml if nvml is not None else NvmlSource()
    reason = missing_driver(reader)
    if reason is not None and demo_without_driver:
        notice = f"{reason}: showing the demo node '{DEFAULT_SCENARIO}'"
        return DemoSource.open(DEFAULT_SCENARIO, notice=notice, engine_log=engine_log)
    if reason is not None:
        raise KvtopError(
            f"{reason}: no node to read on this machine; add --demo [SCENARIO] for a simulated node"
        )
    return LiveSource(
        nvml=reader, http_timeout_s=http_timeout_s, engine_log=engine_log, deadline_s=deadline_s
    )
