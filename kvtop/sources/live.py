"""The live node: NVML, the process table and the engines' endpoints, joined with predictions.

`LiveSource.collect()` reads NVML, attributes every GPU process to an engine rank, reads each
engine's live state, predicts each engine's ledger from its own launch command
(`kvtop.domain.predictor.EnginePredictor`, shared with the demo node) and returns one `NodeSnapshot`.
Which node to read, live or demo, is chosen in `kvtop.commands.node_source`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from kvtop.domain.engine_log import EngineLog
from kvtop.domain.logged_capacity import with_logged_capacity
from kvtop.domain.node import NodeSnapshot, build_snapshot, join_notices
from kvtop.domain.observe import EngineCounters, NodeObservation, NvmlState, ProcessRole
from kvtop.domain.predictor import EnginePredictor, ModelLoaderFn
from kvtop.domain.pressure import with_counter_history
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


class LiveSource:
    """This node, read through NVML, the OS process table and the engines' endpoints."""

    label = "nvml"

    def __init__(
        self,
        nvml: NvmlSource | None = None,
        table: ProcessTable | None = None,
        model_loader: ModelLoaderFn = load_model,
        http_timeout_s: float = 1.0,
        engine_log: Path | None = None,
        *,
        http_client: httpx.Client | None = None,
        deadline_s: float | None = None,
    ) -> None:
        self._nvml = nvml if nvml is not None else NvmlSource()
        self._http_client = http_client  # None: a client per engine read; tests pass a MockTransport one
        self._table = table if table is not None else PsutilProcessTable()
        self._predictor = EnginePredictor(model_loader)
        self._http_timeout_s = http_timeout_s
        self._deadline_s = deadline_s  # every engine endpoint of one collection within it (None: no bound)
        self._log = read_log(engine_log) if engine_log is not None else None
        self._counters: dict[str, tuple[EngineCounters, ...]] = {}  # each engine's recent counters

    def collect(self) -> NodeSnapshot:
        """One observation of the whole node with every engine's predicted ledger (blocking)."""
        from kvtop.sources.bounded_http import Deadline  # httpx only when the live node is read
        from kvtop.sources.engine_http import with_live_state

        node = self._nvml.read()
        if node.nvml_state is not NvmlState.OK:
            return build_snapshot(node, {}, source=self.label, notice=node.nvml_message)
        node = attribute_node(node, self._table).model_copy(update={"host_memory": read_host_memory()})
        if node.engines:
            deadline = Deadline(self._deadline_s) if self._deadline_s is not None else None
            node = with_live_state(
                node, client=self._http_client, timeout_s=self._http_timeout_s, deadline=deadline
            )
            node, self._counters = with_counter_history(node, self._counters)  # rates need the last reading
        ledgers = self._predictor.ledgers(node)
        log_notice = None
        if self._log is not None:
            node, log_notice = with_logged_capacity(node, self._log, ledgers)
        notice = join_notices(_ownerless_notice(node), log_notice)
        return build_snapshot(node, ledgers, source=self.label, notice=notice)

    def close(self) -> None:
        self._nvml.close()


def read_log(path: Path) -> EngineLog:
    """Parse an engine startup log (an InputError names an unreadable file)."""
    from kvtop.sources.engine_logs import read_engine_log

    return read_engine_log(path)


def _ownerless_notice(node: NodeObservation) -> str | None:
    """A notice when GPU memory is held by pids this namespace cannot see (the usual container case)."""
    hidden = node.processes_with_role(ProcessRole.UNATTRIBUTED)
    if not hidden:
        return None
    return (f"{len(hidden)} GPU process(es) are not visible or not readable here: run kvtop with the host's "
            "PID namespace (--pid=host) or as root to attribute them")  # fmt: skip


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
