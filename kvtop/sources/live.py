"""The live node: NVML, the process table and the engines' endpoints, joined with predictions.

`LiveSource.collect()` reads NVML, attributes every GPU process to an engine rank, reads each
engine's live state, predicts each engine's ledger from its own launch command and returns one
`NodeSnapshot`. `EnginePredictor` is that prediction step, shared with the demo node so both
predict the same way. `open_node_source` picks the source the TUI and the commands use: the demo
node when asked for, else the live node; without an NVIDIA driver the TUI shows the demo node
(saying so) and a headless command refuses, naming --demo.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from kvtop.domain.calibration.estimate import calibrated_ledger
from kvtop.domain.engine_log import EngineLog
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.errors import KvtopError
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.ledger import Ledger
from kvtop.domain.model import ModelSpec
from kvtop.domain.node import NodeSnapshot, build_snapshot
from kvtop.domain.observe import (
    EngineCounters,
    EngineInstance,
    GpuObservation,
    NodeObservation,
    NvmlState,
    ProcessRole,
)
from kvtop.domain.ports import SnapshotSource
from kvtop.domain.pressure import with_counter_history
from kvtop.sources.host_memory import read_host_memory
from kvtop.sources.hub import load_model
from kvtop.sources.nvml import NvmlSource
from kvtop.sources.processes import ProcessTable, PsutilProcessTable, attribute_node

if TYPE_CHECKING:
    import httpx

ModelLoaderFn = Callable[[str], ModelSpec]
_NO_DRIVER = {
    NvmlState.LIBRARY_NOT_FOUND: "no NVIDIA driver (NVML library not found)",
    NvmlState.NO_DRIVER: "no NVIDIA driver (kernel driver not loaded)",
}


class EnginePredictor:
    """Predicts each engine's ledger from its launch settings and its GPUs' memory.

    Ledgers (and the reasons there is none) are cached per (model ref, settings, GPU total,
    GPU name), so a refresh re-predicts only what changed. A model that cannot be resolved,
    or a layout the model cannot run, becomes the reason string, never an exception.
    """

    def __init__(self, model_loader: ModelLoaderFn = load_model) -> None:
        self._load_model = model_loader
        self._cache: dict[tuple[str, str, int, str | None], Ledger | str] = {}

    def ledgers(self, node: NodeObservation) -> dict[str, Ledger | str]:
        """engine_id → its Ledger, or one line saying why there is none. An engine is sized by the
        GPUs of its ranks, or of its other processes (a server alone) when it has no rank."""
        rank_gpus: dict[str, list[GpuObservation]] = {}
        process_gpus: dict[str, list[GpuObservation]] = {}
        for gpu in node.gpus:
            for process in gpu.processes:
                if process.engine_id is not None:
                    process_gpus.setdefault(process.engine_id, []).append(gpu)
                    if process.rank is not None:
                        rank_gpus.setdefault(process.engine_id, []).append(gpu)
        return {
            engine.engine_id: self.ledger(
                engine, rank_gpus.get(engine.engine_id) or process_gpus.get(engine.engine_id, [])
            )
            for engine in node.engines
        }

    def ledger(self, engine: EngineInstance, gpus: list[GpuObservation]) -> Ledger | str:
        """The ledger of `engine`, whose ranks run on `gpus` (the smallest GPU sizes the prediction)."""
        settings = engine.settings
        if settings is None:
            return engine.settings_message or "no prediction: the launch command could not be read"
        if settings.engine_version is None and engine.live.version:  # the endpoint's version sets the era
            settings = settings.model_copy(update={"engine_version": engine.live.version})
        ref = engine.model or settings.model
        if not ref:
            return "no prediction: the launch command names no model"
        sized = [gpu for gpu in gpus if gpu.total_bytes]
        if not sized:
            return "no prediction: the memory of this engine's GPUs could not be read"
        gpu = min(sized, key=lambda candidate: candidate.total_bytes or 0)
        total = gpu.total_bytes or 0
        key = (ref, settings.model_dump_json(), total, gpu.name)
        if key not in self._cache:
            self._cache[key] = self._predict(ref, settings, total, gpu.name)
        return self._cache[key]

    def _predict(self, ref: str, settings: LaunchSettings, total: int, gpu_name: str | None) -> Ledger | str:
        try:
            model = self._load_model(ref)
            draft = draft_model(settings, self._load_model)
            # the clean prediction: NVML's total and GPU name, every pre-load term calibrated (docs/calibration.md)
            return calibrated_ledger(model, settings, gpu_total_bytes=total, gpu_name=gpu_name, draft=draft)
        except KvtopError as error:
            return f"no prediction for {ref}: {error}"


def draft_model(settings: LaunchSettings, loader: ModelLoaderFn) -> ModelSpec | None:
    """The speculative draft the launch names (`--speculative-draft-model-path`, a vLLM `model`…), read with
    the same loader as the model; None where it names none or it cannot be read (its weights are then a
    named not-modelled term of the ledger, never a guess)."""
    from kvtop.domain.deployment import SpecKind

    setup = engine_rules(settings.engine).deployment.setup(settings)
    if setup.spec_kind is not SpecKind.DRAFT_MODEL or not setup.draft_model:
        return None
    try:
        return loader(setup.draft_model)
    except KvtopError:
        return None


def logged_token_capacity(log: EngineLog) -> int | None:
    """The token capacity a startup log states (by its engine's own lines), or None."""
    if log.engine is None:
        return None
    return engine_rules(log.engine).explainer.logged_token_capacity(log)


def with_logged_capacity(
    node: NodeObservation, log: EngineLog, ledgers: Mapping[str, Ledger | str]
) -> tuple[NodeObservation, str | None]:
    """Give the log's token capacity to the engine it belongs to when its endpoints report none.

    The engine is the only one of the log's kind (narrowed by the log's model path when several
    are), and the KV pools the log printed must be what that engine's model gives (its predicted
    `ledgers`): a log of another model is not attached. Returns the node and a notice when the log
    matched no engine, several, or another model.
    """
    capacity = logged_token_capacity(log)
    if capacity is None:
        return node, f"the engine log {log.source} states no token capacity"
    candidates = [engine for engine in node.engines if engine.kind == log.engine]
    if len(candidates) > 1 and log.model_path:
        by_model = [e for e in candidates if e.model and Path(e.model).name == Path(log.model_path).name]
        candidates = by_model or candidates
    if len(candidates) != 1:
        return (
            node,
            f"the engine log {log.source} matches {len(candidates)} running {log.engine} engines: not attached",
        )
    target = candidates[0]
    if target.live.token_capacity is not None:
        return node, None
    ledger = ledgers.get(target.engine_id)
    if isinstance(ledger, Ledger):
        try:
            checks = engine_rules(ledger.settings.engine).explainer.pool_size_checks(
                log, ledger.model, ledger.settings, ledger.load_mtp
            )
        except KvtopError as error:  # the geometry cannot be rebuilt for these settings: not checked
            return node, f"the engine log {log.source} could not be checked against {target.engine_id} ({error}): not attached"
        differ = [check.name for check in checks if not check.within_rounding]
        if differ:
            return node, (
                f"the engine log {log.source} printed a KV {'/'.join(differ)} that {ledger.model.name} "
                f"does not give ({target.engine_id}): a log of another model or layout, not attached"
            )
    live = target.live.model_copy(update={
        "token_capacity": capacity, "token_capacity_logged": True,
        "notes": (*target.live.notes, f"token capacity from the engine log {log.source}"),
    })  # fmt: skip
    engines = tuple(e.model_copy(update={"live": live}) if e is target else e for e in node.engines)
    return node.model_copy(update={"engines": engines}), None


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


def join_notices(*notices: str | None) -> str | None:
    """The notices that are set, as one line."""
    present = [notice for notice in notices if notice]
    return "; ".join(present) if present else None


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
    from kvtop.sources.demo import DemoSource
    from kvtop.sources.scenario import DEFAULT_SCENARIO

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
