"""The demo node's static plan: which processes a scenario puts on which GPU, and their bytes.

Built once per scenario from the real budget path (`calibrated_ledger`, with what the engine measured in
place) and the real process attribution; `DemoObservations` (demo.py) then moves the numbers a little every
tick. What the engines measured (CUDA's total, so the driver's reserve; what each rank held before its
weights; the runtime memory a profile charged) is data, the figures real starts of that shape logged
(`demo_starts`), never kvtop's fits: a refit moves kvtop's prediction of the node, not the node. An engine
shape the table lacks holds the context (and profiles the runtime) the clean prediction expects.
"""

from __future__ import annotations

import hashlib
import shlex
import uuid
from dataclasses import dataclass

from kvtop.domain.calibration.estimate import calibrated_ledger
from kvtop.domain.calibration.gpu_totals import CUDA_TOTAL_FITS, cuda_total_estimate
from kvtop.domain.calibration.start_overhead import start_overhead
from kvtop.domain.engine_simulation import StartFigures
from kvtop.domain.engines.registry import simulation
from kvtop.domain.engines.stated_release import endpoint_release
from kvtop.domain.errors import InputError, KvtopError
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.launch_line import parse_launch_command
from kvtop.domain.ledger import Ledger, RankLedger, layout_from_settings
from kvtop.domain.model import ModelSpec
from kvtop.domain.observe import (
    EndpointState,
    ReportedVersion,
)
from kvtop.domain.placement import place, span_of
from kvtop.domain.predictor import draft_model
from kvtop.domain.process_identity import PidNamespace
from kvtop.domain.span import ranks_per_node
from kvtop.domain.wording import GIB as _GIB
from kvtop.sources.demo_starts import EngineStart, start_table
from kvtop.sources.hub import load_model
from kvtop.sources.processes import ProcessRecord, endpoint_address
from kvtop.sources.scenario import EngineSpec, Scenario

# How long the demo's engines have been up when the demo opens: process start times are this far
# before the demo's clock, so ages read as on a node that has run a while (and two runs look alike).
DEMO_UPTIME_S = 2 * 86400 + 3 * 3600
ELSEWHERE = -1  # the key of an engine's GPU on another node in `taken_before_load` (no index here)
ENDPOINT_MESSAGES = {
    EndpointState.UNREACHABLE: "connection refused (is the server up, and listening on this address?)",
    EndpointState.TIMEOUT: "no answer within 1 s (the server is busy or hung)",
    EndpointState.HTTP_ERROR: "answered HTTP 404 (an older server without these routes?)",
    EndpointState.BAD_PAYLOAD: "answered, but not in the engine's format",
}


def unit_noise(seed: int, *parts: object) -> float:
    """A stable pseudo-random number in [0, 1) for (seed, parts): the same on every run and host."""
    digest = hashlib.blake2b(repr((seed, *parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


@dataclass(frozen=True)
class PlannedWorker:
    """One engine rank as the demo holds it: where it runs and the bytes it holds before jitter."""

    pid: int
    gpu_index: int
    engine_index: int
    ledger_rank: RankLedger
    base_bytes: int


@dataclass(frozen=True)
class PlannedEngine:
    """One engine: its launch settings, the ledger it really solved, and its endpoint's address."""

    spec: EngineSpec
    settings: LaunchSettings
    truth: Ledger
    base_url: str


class NodePlan:
    """Everything about a scenario that does not change from tick to tick."""

    def __init__(self, scenario: Scenario, source: str, *, opened_at: float) -> None:
        self.scenario = scenario
        self.engines_started = opened_at - DEMO_UPTIME_S  # when the engines' servers started
        self.source = source
        spec = scenario.gpu
        self.total_bytes = spec.total or gpu_total_bytes(spec.model)  # the model was checked when loaded
        self.gpu_name = spec.name or f"NVIDIA {spec.model}"
        # NVML's reserve: the scenario's, else nvidia-smi's total less CUDA's as a real start printed it
        # (the table of starts), else as calibrated for the GPU model (a GPU the table lacks)
        logged_total = start_table().cuda_total(spec.model)
        cuda_total = (logged_total.bytes if logged_total is not None
                      else cuda_total_estimate(self.gpu_name, self.total_bytes, CUDA_TOTAL_FITS).bytes)  # fmt: skip
        self.reserved = spec.reserved if spec.reserved is not None else max(self.total_bytes - cuda_total, 0)
        self.contexts: dict[int, int] = {}  # engine index → what each of its workers holds before its weights
        self.lost = {lost.gpu: lost.message for lost in scenario.lost_gpus}
        self.other_bytes = self._non_engine_bytes(before_engines_only=False)
        self.models: dict[str, ModelSpec] = {}
        self.records: dict[int, ProcessRecord] = {}
        self.engines: list[PlannedEngine] = []
        self.workers: list[PlannedWorker] = []
        taken: dict[int, int] = {}
        for index, engine in enumerate(scenario.engines):
            self._add_engine(index, engine, taken)
        for foreign in scenario.foreign_processes:
            self._add_record(ProcessRecord(
                pid=foreign.pid, parent_pid=foreign.parent_pid, name=foreign.cmdline[0].rsplit("/", 1)[-1][:15],
                cmdline=foreign.cmdline, user=foreign.user,
                start_time=self.engines_started + (-3600 if foreign.started_before_engines else 3600),
                uid=_uid(foreign.user), exe=_SIMULATED_EXE,
            ), "foreign_processes")  # fmt: skip
        for orphan in scenario.orphans:
            self._add_record(ProcessRecord(
                pid=orphan.pid, parent_pid=1, name=orphan.title[:15], cmdline=(orphan.title,), user=orphan.user,
                start_time=self.engines_started - 86400, uid=_uid(orphan.user), exe=_SIMULATED_EXE,
            ), "orphans")  # fmt: skip
        self.workers_by_gpu: dict[int, list[PlannedWorker]] = {}
        for worker in self.workers:
            self.workers_by_gpu.setdefault(worker.gpu_index, []).append(worker)
        # by (GPU, pid): one process may drive several GPUs (TurboMind's server runs every rank itself)
        self.worker_at = {(worker.gpu_index, worker.pid): worker for worker in self.workers}
        self.first_pid: dict[tuple[int, int], int] = {}  # (engine, DP rank) → its first worker's pid
        for worker in self.workers:
            self.first_pid.setdefault((worker.engine_index, worker.ledger_rank.dp_rank), worker.pid)
        self.fixed_bytes = {p.pid: p.used for p in scenario.non_engine_processes()}

    # --- building ---

    def _non_engine_bytes(self, *, before_engines_only: bool) -> dict[int, int]:
        """Bytes co-tenants and orphans hold per GPU (those there before the engines, if asked)."""
        held: dict[int, int] = {}
        for foreign in self.scenario.foreign_processes:
            if foreign.started_before_engines or not before_engines_only:
                held[foreign.gpu] = held.get(foreign.gpu, 0) + foreign.used
        for orphan in self.scenario.orphans:
            held[orphan.gpu] = held.get(orphan.gpu, 0) + orphan.used
        return held

    def _error(self, message: str, field: str) -> InputError:
        return InputError(message, field=field, source=self.source)

    def _add_record(self, record: ProcessRecord, group: str) -> None:
        if record.pid in self.records:
            raise self._error(f"pid {record.pid} is used twice", group)
        self.records[record.pid] = record

    def _add_engine(self, index: int, spec: EngineSpec, taken: dict[int, int]) -> None:
        where = f"engines[{index}]"
        try:
            settings = parse_launch_command(spec.command)
        except InputError as error:
            raise self._error(str(error), f"{where}.command") from None
        if settings is None:
            raise self._error("not a launch command of an engine kvtop models", f"{where}.command")
        if spec.version is not None and settings.engine_version is None:  # the endpoint's release sets the era
            # read as the predictor reads the simulated endpoint: words naming no release leave the latest rules
            release = endpoint_release(settings.engine, ReportedVersion(words=spec.version)).text
            settings = settings.model_copy(update={"engine_version": release}) if release else settings
        try:
            model = load_model(spec.model)
        except InputError as error:
            raise self._error(str(error), f"{where}.model") from None
        span = span_of(settings.engine, settings)
        layout = layout_from_settings(settings, model)
        try:  # an engine over several nodes runs only this node's ranks here (its engine's own rule)
            wanted = ranks_per_node(layout, span.nnodes) if span.spans_nodes else layout.gpus
        except KvtopError as error:
            raise self._error(str(error), f"{where}.command") from None
        gpus = spec.gpus or tuple(i for i in range(self.scenario.gpu.count) if i not in taken)[:wanted]
        truth = self._solve(where, index, spec, settings, model, gpus)
        local = self._local_ranks(where, truth, span.nnodes, span.node_rank) if span.spans_nodes else truth.ranks
        if len(gpus) != len(local):
            raise self._error(
                f"the launch command runs {len(local)} ranks here but {len(gpus)} GPUs are listed",
                f"{where}.gpus",
            )
        for gpu in gpus:
            if gpu in taken:
                raise self._error(f"GPU {gpu} already runs engines[{taken[gpu]}]", f"{where}.gpus")
            taken[gpu] = index
        self.models[settings.model or spec.model] = model
        host, port = endpoint_address(settings.engine, settings)
        self.engines.append(
            PlannedEngine(spec=spec, settings=settings, truth=truth, base_url=f"http://{host}:{port}")
        )
        argv = tuple(shlex.split(spec.command))
        self._add_record(ProcessRecord(
            pid=spec.server_pid, parent_pid=1, name=argv[0].rsplit("/", 1)[-1][:15], cmdline=argv, user="root",
            start_time=self.engines_started, uid=0, exe=_SIMULATED_EXE,
        ), f"{where}.server_pid")  # fmt: skip
        visible = ",".join(str(gpu) for gpu in gpus)
        for position, (rank, gpu) in enumerate(zip(local, gpus, strict=True)):
            pid, parent, title = simulation(settings.engine).worker_identity(spec.server_pid, settings, rank, position)
            if parent != spec.server_pid and parent not in self.records:
                self._add_record(
                    _titled(parent, simulation(settings.engine).parent_title(settings, rank.dp_rank), spec.server_pid, visible, self.engines_started + 5),
                    f"{where}.server_pid",
                )
            if pid != spec.server_pid:  # else the server runs the rank itself (its record is there)
                self._add_record(_titled(pid, title, parent, visible, self.engines_started + 5), f"{where}.server_pid")
            base = self._worker_bytes(spec, self.contexts[index], settings, rank, gpu, pid)
            self.workers.append(
                PlannedWorker(pid=pid, gpu_index=gpu, engine_index=index, ledger_rank=rank, base_bytes=base)
            )

    def _load_draft(self, ref: str) -> ModelSpec:
        """A draft named by a launch: a preset or config the model loader reads (kept for the predictor)."""
        draft = load_model(ref)
        self.models[ref] = draft
        return draft

    def _local_ranks(self, where: str, truth: Ledger, nnodes: int, node_rank: int) -> tuple[RankLedger, ...]:
        """The ranks of node `node_rank` of an engine over `nnodes` nodes (its engine's placement rule)."""
        try:
            placement = place(truth, nnodes)
        except KvtopError as error:
            raise self._error(str(error), f"{where}.command") from None
        return tuple(truth.ranks[index] for index in placement.by_node[node_rank].ranks)

    def _solve(
        self, where: str, index: int, spec: EngineSpec, settings: LaunchSettings, model: ModelSpec,
        gpus: tuple[int, ...],
    ) -> Ledger:  # fmt: skip
        """The ledger the engine itself solved on this node, from what it measured there (each engine
        measures its own way: `kvtop/domain/engines/<engine>/demo.py`): a real start of this shape's figures
        (the table of starts), less what others and its own extra allocations took first."""
        try:
            expected = calibrated_ledger(model, settings, gpu_total_bytes=self.total_bytes, gpu_name=self.gpu_name)
        except KvtopError as error:
            raise self._error(str(error), f"{where}.command") from None
        row = start_table().start(settings.engine, spec.model, self.scenario.gpu.model, tp=settings.tp, pp=settings.pp,
                                  dp=settings.dp)  # fmt: skip
        start, table_context = self._start_figures(row, expected)
        context = spec.cuda_context if spec.cuda_context is not None else table_context
        self.contexts[index] = context
        before = self._non_engine_bytes(before_engines_only=True)
        taken = {
            gpu: self.reserved + context + spec.extra_bytes.get(gpu, 0) + before.get(gpu, 0) for gpu in gpus
        }
        if spec.elsewhere_before_load:  # the most-used GPU of its other nodes, where the engine spans several
            taken[ELSEWHERE] = self.reserved + context + spec.elsewhere_before_load
        measured = simulation(settings.engine).measured_for_truth(
            total_bytes=self.total_bytes,
            taken_before_load=taken,
            extra_bytes={gpu: spec.extra_bytes[gpu] for gpu in gpus if gpu in spec.extra_bytes},
            start=start,
        )
        # an engine that measured CUDA's total (vLLM) sizes its share of that total, as `--gpu-memory` says
        engine_total = measured.gpu_total_bytes or self.total_bytes
        try:
            draft = draft_model(settings, self._load_draft)
            truth = calibrated_ledger(
                model, settings, gpu_total_bytes=engine_total, gpu_name=self.gpu_name, measured=measured,
                draft=draft,
            )  # fmt: skip
        except KvtopError as error:
            raise self._error(str(error), f"{where}.command") from None
        if not truth.engine.fits:
            raise self._error(
                "this engine would not start on these GPUs (its KV cache does not fit)", f"{where}.command"
            )
        return truth

    def _start_figures(self, row: EngineStart | None, expected: Ledger) -> tuple[StartFigures, int]:
        """What a clean start of this shape measured, and what each of its ranks held before its weights: the
        table's row, each figure it lacks (and a shape it lacks) as the clean prediction expects."""
        cuda_total = self.total_bytes - self.reserved
        calibrated = expected.measured.calibrated
        non_kv = calibrated.non_kv_bytes if calibrated is not None else None
        if row is not None and row.non_kv is not None:
            non_kv = row.non_kv.bytes
        context = row.context_bytes(cuda_total) if row is not None else start_overhead(expected).context_bytes
        return StartFigures(cuda_total_bytes=cuda_total, non_kv_bytes=non_kv), context

    def _worker_bytes(
        self, spec: EngineSpec, context: int, settings: LaunchSettings, rank: RankLedger, gpu: int, pid: int
    ) -> int:
        """The ledger's resident bytes (with this worker's own CUDA context and extra bytes in place
        of what the engine budgeted for them), less a fixed few MiB; never more than the GPU has left."""
        own = simulation(settings.engine).worker_own_bytes(context, spec.extra_bytes.get(gpu, 0), spec.extra_bytes)
        resident = rank.weights_bytes + rank.resident_terms_bytes + rank.kv_pool_bytes + rank.reserve_bytes + own
        ceiling = self.total_bytes - self.reserved - self.other_bytes.get(gpu, 0)
        noise = int(unit_noise(self.scenario.seed, "noise", pid) * self.scenario.noise)
        return min(resident, ceiling) - noise


def _titled(pid: int, title: str, parent_pid: int, visible: str, started: float) -> ProcessRecord:
    return ProcessRecord(pid=pid, parent_pid=parent_pid, name=title[:15], cmdline=(title,), user="root",
                         start_time=started, cuda_visible_devices=visible, uid=0, exe=_SIMULATED_EXE)  # fmt: skip


#: The executable every simulated process runs (a demo node's processes are named, like a real node's).
_SIMULATED_EXE = "/usr/bin/python3"


def _uid(user: str) -> int:
    """A simulated user id: root's is 0, every other user's 1000."""
    return 0 if user == "root" else 1000


class ScenarioProcessTable:
    """The scenario's processes behind `kvtop.sources.processes.ProcessTable`."""

    def __init__(self, records: dict[int, ProcessRecord]) -> None:
        self._records = records

    def lookup(self, pid: int) -> ProcessRecord | None:
        return self._records.get(pid)

    def pid_namespace(self) -> PidNamespace:
        return PidNamespace.HOST  # the scenario's pids are its own node's


def printed_gib(num_bytes: int) -> int:
    """Bytes as the engine prints them: GiB to two decimals."""
    return round(round(num_bytes / _GIB, 2) * _GIB)


def bus_id(index: int) -> str:
    """A PCI bus id in NVML's format, eight GPUs per PCI domain."""
    return f"{index // 8:08X}:{0x18 + 0x10 * (index % 8):02X}:00.0"


def gpu_uuid(scenario: Scenario, index: int) -> str:
    digest = hashlib.blake2b(f"{scenario.name}:{scenario.seed}:{index}".encode(), digest_size=16).digest()
    return f"GPU-{uuid.UUID(bytes=digest)}"


def resolve_model(models: dict[str, ModelSpec], ref: str) -> ModelSpec:
    if ref not in models:
        raise InputError("not a model of this demo scenario", field="model", source=ref)
    return models[ref]
