"""The live node's observations: NVML, the process table and the engines' endpoints.

`LiveObservations.observe()` reads NVML, attributes every GPU process to an engine rank and reads
each engine's live state. Predicting each engine's ledger and joining the snapshot is the one
assembler's job (`kvtop.commands.node_source`), the same for the live node and the demo.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from kvtop.domain.host_desktop import HostDesktop
from kvtop.domain.observe import EngineCounters, NodeObservation, NvmlState
from kvtop.domain.ports import ModelLoader
from kvtop.domain.pressure import with_counter_history
from kvtop.sources.host_desktop import read_host_desktop
from kvtop.sources.host_memory import read_host_memory
from kvtop.sources.hub import load_model
from kvtop.sources.nvml import NvmlSource
from kvtop.sources.processes import ProcessTable, PsutilProcessTable, attribute_node

if TYPE_CHECKING:
    import httpx

_NO_DRIVER = {
    NvmlState.LIBRARY_NOT_FOUND: "no NVIDIA driver (NVML library not found)",
    NvmlState.NO_DRIVER: "no NVIDIA driver (kernel driver not loaded)",
}


class LiveObservations:
    """What this node reports (a `NodeObserver`): NVML, the OS process table and the engines' endpoints.

    It predicts nothing: the assembler (`kvtop.commands.node_source`) does, with `load_model`.
    """

    label = "nvml"
    notice: str | None = None

    def __init__(
        self,
        nvml: NvmlSource | None = None,
        table: ProcessTable | None = None,
        model_loader: ModelLoader = load_model,
        http_timeout_s: float = 1.0,
        *,
        http_client: httpx.Client | None = None,
        deadline_s: float | None = None,
        desktop_reader: Callable[[], HostDesktop | None] = read_host_desktop,
    ) -> None:
        self._nvml = nvml if nvml is not None else NvmlSource()
        self._http_client = http_client  # None: a client per engine read; tests pass a MockTransport one
        self._table = table if table is not None else PsutilProcessTable()
        self.load_model = model_loader
        self._http_timeout_s = http_timeout_s
        self._deadline_s = deadline_s  # every engine endpoint of one collection within it (None: no bound)
        self._counters: dict[str, tuple[EngineCounters, ...]] = {}  # each engine's recent counters
        self._read_desktop = desktop_reader  # tests pass one over a fake /proc/version
        # read once (the kernel does not change under kvtop): the reading, None before the first
        self._desktop: tuple[HostDesktop | None] | None = None

    def observe(self) -> NodeObservation:
        """One observation of the whole node, processes attributed, endpoints read (blocking). NVML
        that cannot be read gives the bare failed observation (its state and message say why)."""
        from kvtop.sources.bounded_http import Deadline  # httpx only when the live node is read
        from kvtop.sources.engine_http import with_live_state

        node = self._nvml.read()
        if node.nvml_state.failed:
            return node
        if self._desktop is None:
            self._desktop = (self._read_desktop(),)
        node = attribute_node(node, self._table).model_copy(
            update={"host_memory": read_host_memory(), "desktop": self._desktop[0]}
        )
        if node.engines:
            deadline = Deadline(self._deadline_s) if self._deadline_s is not None else None
            node = with_live_state(
                node, client=self._http_client, timeout_s=self._http_timeout_s, deadline=deadline
            )
            node, self._counters = with_counter_history(node, self._counters)  # rates need the last reading
        return node

    def close(self) -> None:
        self._nvml.close()


def missing_driver(nvml: NvmlSource | None = None) -> str | None:
    """Why this machine has no NVIDIA driver to read (one line), or None when it has one.

    A driver that is present but refuses (permissions, a version mismatch) is not missing: the
    live node shows that state instead.
    """
    reader = nvml if nvml is not None else NvmlSource()
    try:
        return _NO_DRIVER.get(reader.read().nvml_state)
    finally:
        if nvml is None:
            reader.close()
