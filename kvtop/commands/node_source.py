"""One assembler for every node, live or demo, and the choice of which node to read.

A node source is a `NodeObserver` (what the node reports: `kvtop.sources.live.LiveObservations`, or a
demo scenario's `kvtop.sources.demo.DemoObservations`) joined by `NodeSource`, the one assembler:
predict each engine's ledger (`EnginePredictor`), attach an engine log's token capacity, join the
snapshot (`build_snapshot`). A demo computes none of these figures: it only reports, so a demo node is
shown exactly as a live one would be, labelled `demo:<scenario>`. Composed here, in the composition
root, so neither source imports the other. Without an NVIDIA driver the TUI shows the demo node
(saying so) and a headless command refuses, naming --demo.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.errors import KvtopError
from kvtop.domain.host_desktop import HostDesktop
from kvtop.domain.ledger import Ledger
from kvtop.domain.logged_capacity import log_offered_to, with_logged_capacity
from kvtop.domain.node import NodeSnapshot, build_snapshot, join_notices, ownerless_notice
from kvtop.domain.observe import NodeObservation
from kvtop.domain.ports import ModelLoader, NodeObserver, SnapshotSource
from kvtop.domain.predictor import EnginePredictor
from kvtop.sources.demo import DemoObservations
from kvtop.sources.engine_logs import read_engine_log
from kvtop.sources.host_desktop import read_host_desktop
from kvtop.sources.hub import load_model
from kvtop.sources.live import LiveObservations, missing_driver
from kvtop.sources.nvml import NvmlSource
from kvtop.sources.processes import ProcessTable
from kvtop.sources.scenario import DEFAULT_SCENARIO, Scenario, load_scenario, scenario_path

if TYPE_CHECKING:
    import httpx

    from kvtop.domain.calibration.node import NodeMeasure

StoreWriter = Callable[["NodeMeasure"], "str | None"]
"""Appends one start's measure to the local calibration store; a one-line notice when it cannot."""


class NodeSource:
    """A node's snapshots (`SnapshotSource`): what `observer` reports, each engine predicted once per
    change (the predictor's cache), an engine log's capacity attached, joined into one `NodeSnapshot`.

    With `remember` (a live node whose calibration store is on), the start the engine log records is
    explained once it is attached to its engine, and what it measured is kept in the store, as
    `kvtop explain` keeps it: later plans for the same model × GPU × release use it."""

    def __init__(
        self, observer: NodeObserver, *, engine_log: Path | None = None, remember: StoreWriter | None = None
    ) -> None:
        self.observer = observer
        self.label = observer.label
        self._predictor = EnginePredictor(observer.load_model)
        self._log = read_engine_log(engine_log, field="--engine-log") if engine_log is not None else None
        # the release the log states (its version line, else what its lines or dates imply), read once: the engine
        # the log is of is predicted at it, as `kvtop explain` reads the same log
        log = self._log
        self._log_release = engine_rules(log.engine).resolve_version(log) if log and log.engine else None
        self._remember = remember

    @property
    def notice(self) -> str | None:
        return self.observer.notice

    def collect(self) -> NodeSnapshot:
        """One snapshot of the node as it is now (blocking)."""
        return self.assemble(self.observer.observe())

    def assemble(self, node: NodeObservation) -> NodeSnapshot:
        """The snapshot of one observation: the node's notice, NVML's failure or the hidden processes'
        notice and the engine log's, every engine's ledger (none where NVML could not be read)."""
        if node.nvml_state.failed:
            return build_snapshot(node, {}, source=self.label, notice=join_notices(self.notice, node.nvml_message))
        releases = self._log_releases(node)
        ledgers = self._predictor.ledgers(node, releases)
        log_notice = None
        if self._log is not None:
            node, log_notice = with_logged_capacity(node, self._log, ledgers, self._log_release)
            if releases and not any(e.live.token_capacity_logged for e in node.engines):
                # not shown to be that engine's log (another model's pools): nor is its release; that engine alone
                ledgers = {**ledgers, **self._predictor.ledgers(node, only=frozenset(releases))}
            if self._remember is not None and any(e.live.token_capacity_logged for e in node.engines):
                log_notice = join_notices(log_notice, self._remember_start(node, ledgers))
        notice = join_notices(self.notice, ownerless_notice(node), log_notice)
        return build_snapshot(node, ledgers, source=self.label, notice=notice)

    def _log_releases(self, node: NodeObservation) -> dict[str, ResolvedVersion]:
        """engine_id → the release the engine log states, for the one engine the log is offered to (none when it
        states none, or no engine may take it before its ledger is read: none or several of its kind, or the engine
        reports its own capacity), so an engine is predicted once, at the release that is its own."""
        if self._log is None or self._log_release is None or self._log_release.text is None:
            return {}
        offered = log_offered_to(node, self._log)
        return {offered.engine_id: self._log_release} if offered is not None else {}

    def _remember_start(self, node: NodeObservation, ledgers: Mapping[str, Ledger | str]) -> str | None:
        """Explain the attached log's start with its engine's ledger and keep what it measured (once: the
        log does not change while the node is watched). A notice when it cannot be kept."""
        from kvtop.domain.calibration.node import measure_of_explanation  # only a node given a log explains
        from kvtop.domain.explain import explain
        from kvtop.domain.explain_request import ExplainRequest

        remember, self._remember = self._remember, None
        log = self._log
        attached = [e for e in node.engines if e.live.token_capacity_logged and log is not None and e.kind == log.engine]
        ledger = ledgers.get(attached[0].engine_id) if len(attached) == 1 else None
        if remember is None or log is None or not isinstance(ledger, Ledger):
            return None
        try:
            # the total the engine sized from, as NVML measured it (its total less the driver's reserved, which is
            # CUDA's and what a log prints), else NVML's own; its origin as the prediction said it
            total = ledger.measured.cuda_total_bytes or ledger.gpu_total_bytes
            result = explain(ExplainRequest(
                log=log, model=ledger.model, settings=ledger.settings, gpu_total_bytes=total,
                gpu_name=ledger.gpu_name, load_mtp=ledger.load_mtp, version=ledger.version,
                gpu_total_origin=ledger.gpu_total_origin,
            ))  # fmt: skip
        except KvtopError as error:
            return f"the engine log {log.source} was not kept in the calibration store ({error})"
        measure = measure_of_explanation(result, date=log.first_date or time.strftime("%Y-%m-%d"))
        return remember(measure) if measure is not None else None

    def close(self) -> None:
        self.observer.close()


class LiveSource(NodeSource):
    """This node, read through NVML, the OS process table and the engines' endpoints."""

    def __init__(
        self,
        nvml: NvmlSource | None = None,
        table: ProcessTable | None = None,
        model_loader: ModelLoader = load_model,
        http_timeout_s: float = 1.0,
        engine_log: Path | None = None,
        *,
        http_client: httpx.Client | None = None,
        deadline_s: float | None = None,
        remember: StoreWriter | None = None,
        desktop_reader: Callable[[], HostDesktop | None] = read_host_desktop,
    ) -> None:
        observer = LiveObservations(
            nvml, table, model_loader, http_timeout_s, http_client=http_client, deadline_s=deadline_s,
            desktop_reader=desktop_reader,
        )  # fmt: skip
        super().__init__(observer, engine_log=engine_log, remember=remember)


class DemoSource(NodeSource):
    """A simulated node: a scenario's observations through the same assembler. `clock` gives the time;
    one tick per `period_s`; the same tick always gives the same snapshot."""

    def __init__(
        self,
        scenario: Scenario,
        *,
        clock: Callable[[], float] = time.time,
        period_s: float = 1.0,
        notice: str | None = None,
        engine_log: Path | None = None,
        origin: str | None = None,
    ) -> None:
        self.demo = DemoObservations(scenario, clock=clock, period_s=period_s, notice=notice, origin=origin)
        self.scenario = scenario
        super().__init__(self.demo, engine_log=engine_log)

    @classmethod
    def open(cls, ref: str, **options: Any) -> DemoSource:
        """The demo node of a scenario name ('default' included) or .json path."""
        return cls(load_scenario(ref), origin=str(scenario_path(ref)), **options)

    def tick(self) -> int:
        """The tick the demo's clock is in now."""
        return self.demo.tick()

    def collect(self) -> NodeSnapshot:
        return self.collect_at(self.tick(), taken_at=self.demo.now())

    def collect_at(self, tick: int, *, taken_at: float | None = None) -> NodeSnapshot:
        """The node as it is at `tick` (deterministic: the same tick gives the same snapshot)."""
        return self.assemble(self.demo.observe_at(tick, taken_at=taken_at))


def open_node_source(
    demo: str | None,
    *,
    engine_log: Path | None = None,
    http_timeout_s: float = 1.0,
    nvml: NvmlSource | None = None,
    demo_without_driver: bool = False,
    deadline_s: float | None = None,
    remember: StoreWriter | None = None,
) -> SnapshotSource:
    """The node to show: the demo scenario `demo` (a name, a path or 'default') when given, else
    this node, read live.

    On a machine without an NVIDIA driver there is no node to read. The TUI
    (`demo_without_driver=True`) then shows the default demo node with a notice saying so; a
    headless command gets a KvtopError naming --demo, so that a script never takes a simulated
    node for this one. `remember` keeps a live node's logged start in the calibration store (never a
    demo's: a simulated start measured nothing).
    """
    if demo is not None:
        return DemoSource.open(demo, engine_log=engine_log)
    reader = nvml if nvml is not None else NvmlSource()
    reason = missing_driver(reader)
    if reason is not None and demo_without_driver:
        notice = f"{reason}: a demo node"  # the header names the scenario already (its source, demo:<scenario>)
        return DemoSource.open(DEFAULT_SCENARIO, notice=notice, engine_log=engine_log)
    if reason is not None:
        raise KvtopError(
            f"{reason}: no node to read on this machine; add --demo [SCENARIO] for a simulated node"
        )
    return LiveSource(
        nvml=reader, http_timeout_s=http_timeout_s, engine_log=engine_log, deadline_s=deadline_s, remember=remember
    )
