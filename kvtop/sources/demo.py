"""A simulated node for demos and tests, behind the same interface as the live node.

`DemoSource` turns a `Scenario` into what NVML and the OS would report: GPUs with their
processes (bytes as NVML v2 gives them) and a process table of servers, workers, co-tenants and
orphans. From there it takes the live node's own path: `attribute_node` finds engines and ranks,
`EnginePredictor` predicts each engine's ledger, `build_snapshot` joins them.

Observed bytes come from the prediction, solved the way the engine itself would solve it on
this node (SGLang sizes every rank by the least free memory over its ranks, so a co-tenant that
was there first shrinks every rank's pool). A healthy worker holds its ledger less a few MiB;
values move a little each tick by a seeded function of (scenario seed, process, tick), so a
given tick always gives the same node.
"""

from __future__ import annotations

import hashlib
import math
import shlex
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kvtop.domain.engines import MeasuredInputs
from kvtop.domain.engines.vllm import ESTIMATED_NON_KV_BYTES
from kvtop.domain.errors import InputError, KvtopError
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import LaunchSettings, parse_launch_command
from kvtop.domain.ledger import Ledger, RankLedger, layout_from_settings, predict
from kvtop.domain.model import ModelSpec
from kvtop.domain.node import NodeSnapshot, build_snapshot
from kvtop.domain.observe import (
    EndpointState,
    EngineLive,
    EngineLiveRank,
    GpuObservation,
    GpuProcess,
    GpuState,
    MemoryApi,
    NodeObservation,
)
from kvtop.sources.hub import load_model
from kvtop.sources.live import EnginePredictor, join_notices, read_log, with_logged_capacity
from kvtop.sources.processes import ProcessRecord, attribute_node, endpoint_address
from kvtop.sources.scenario import EngineSpec, Scenario, load_scenario, scenario_path

_GIB = 1 << 30
_SERVER_START = 1_760_000_000.0  # process start times are fixed, so a scenario always looks the same
_ENDPOINT_MESSAGES = {
    EndpointState.UNREACHABLE: "connection refused (is the server up, and listening on this address?)",
    EndpointState.TIMEOUT: "no answer within 1 s (the server is busy or hung)",
    EndpointState.HTTP_ERROR: "answered HTTP 404 (an older server without these routes?)",
    EndpointState.BAD_PAYLOAD: "answered, but not in the engine's format",
}


def _unit(seed: int, *parts: object) -> float:
    """A stable pseudo-random number in [0, 1) for (seed, parts): the same on every run and host."""
    digest = hashlib.blake2b(repr((seed, *parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


@dataclass(frozen=True)
class _Worker:
    """One engine rank as the demo holds it: where it runs and the bytes it holds before jitter."""

    pid: int
    gpu_index: int
    engine_index: int
    ledger_rank: RankLedger
    base_bytes: int


@dataclass(frozen=True)
class _Engine:
    """One engine: its launch settings, the ledger it really solved, and its endpoint's address."""

    spec: EngineSpec
    settings: LaunchSettings
    truth: Ledger
    base_url: str


class _NodePlan:
    """Everything about a scenario that does not change from tick to tick."""

    def __init__(self, scenario: Scenario, source: str) -> None:
        self.scenario = scenario
        self.source = source
        spec = scenario.gpu
        self.total_bytes = spec.total or gpu_total_bytes(spec.model)  # the model was checked when loaded
        self.gpu_name = spec.name or f"NVIDIA {spec.model}"
        self.lost = {lost.gpu: lost.message for lost in scenario.lost_gpus}
        self.other_bytes = self._non_engine_bytes(before_engines_only=False)
        self.models: dict[str, ModelSpec] = {}
        self.records: dict[int, ProcessRecord] = {}
        self.engines: list[_Engine] = []
        self.workers: list[_Worker] = []
        taken: dict[int, int] = {}
        for index, engine in enumerate(scenario.engines):
            self._add_engine(index, engine, taken)
        for foreign in scenario.foreign_processes:
            self._add_record(ProcessRecord(
                pid=foreign.pid, parent_pid=foreign.parent_pid, name=foreign.cmdline[0].rsplit("/", 1)[-1][:15],
                cmdline=foreign.cmdline, user=foreign.user, start_time=_SERVER_START - 3600,
            ), "foreign_processes")  # fmt: skip
        for orphan in scenario.orphans:
            self._add_record(ProcessRecord(
                pid=orphan.pid, parent_pid=1, name=orphan.title[:15], cmdline=(orphan.title,), user=orphan.user,
                start_time=_SERVER_START - 86400,
            ), "orphans")  # fmt: skip
        self.workers_by_gpu: dict[int, list[_Worker]] = {}
        for worker in self.workers:
            self.workers_by_gpu.setdefault(worker.gpu_index, []).append(worker)
        self.worker_by_pid = {worker.pid: worker for worker in self.workers}
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
            raise self._error("not an SGLang or vLLM launch command", f"{where}.command")
        try:
            model = load_model(spec.model)
        except InputError as error:
            raise self._error(str(error), f"{where}.model") from None
        wanted = layout_from_settings(settings).gpus
        gpus = spec.gpus or tuple(i for i in range(self.scenario.gpu.count) if i not in taken)[:wanted]
        truth = self._solve(where, spec, settings, model, gpus)
        if len(gpus) != len(truth.ranks):
            raise self._error(
                f"the launch command runs {len(truth.ranks)} ranks but {len(gpus)} GPUs are listed",
                f"{where}.gpus",
            )
        for gpu in gpus:
            if gpu in taken:
                raise self._error(f"GPU {gpu} already runs engines[{taken[gpu]}]", f"{where}.gpus")
            taken[gpu] = index
        self.models[settings.model or spec.model] = model
        host, port = endpoint_address(settings.engine, settings)
        self.engines.append(
            _Engine(spec=spec, settings=settings, truth=truth, base_url=f"http://{host}:{port}")
        )
        argv = tuple(shlex.split(spec.command))
        self._add_record(ProcessRecord(
            pid=spec.server_pid, parent_pid=1, name=argv[0].rsplit("/", 1)[-1][:15], cmdline=argv, user="root",
            start_time=_SERVER_START,
        ), f"{where}.server_pid")  # fmt: skip
        visible = ",".join(str(gpu) for gpu in gpus)
        for position, (rank, gpu) in enumerate(zip(truth.ranks, gpus, strict=True)):
            pid, parent, title = self._worker_identity(spec, settings, rank, position)
            if parent != spec.server_pid and parent not in self.records:
                self._add_record(
                    _titled(parent, _engine_core_title(settings, rank.dp_rank), spec.server_pid, visible),
                    f"{where}.server_pid",
                )
            self._add_record(_titled(pid, title, parent, visible), f"{where}.server_pid")
            base = self._worker_bytes(spec, settings, rank, gpu, pid)
            self.workers.append(
                _Worker(pid=pid, gpu_index=gpu, engine_index=index, ledger_rank=rank, base_bytes=base)
            )

    def _solve(
        self, where: str, spec: EngineSpec, settings: LaunchSettings, model: ModelSpec, gpus: tuple[int, ...]
    ) -> Ledger:
        """The ledger the engine itself solved on this node. SGLang: with the least free memory
        over its ranks before the weights loaded; vLLM: with the largest non-KV runtime memory its
        workers profiled (a rank's `extra_bytes` were taken before either measured)."""
        measured = MeasuredInputs()
        if settings.engine == "sglang":
            before = self._non_engine_bytes(before_engines_only=True)
            reserved = self.scenario.gpu.reserved
            taken = {
                gpu: reserved + spec.cuda_context + spec.extra_bytes.get(gpu, 0) + before.get(gpu, 0)
                for gpu in gpus
            }
            free = self.total_bytes - max(taken.values())
            measured = MeasuredInputs(free_before_load_bytes=free)
        elif spec.extra_bytes:
            measured = MeasuredInputs(
                non_kv_bytes=ESTIMATED_NON_KV_BYTES + max(spec.extra_bytes.get(gpu, 0) for gpu in gpus)
            )
        try:
            truth = predict(
                model, settings, gpu_total_bytes=self.total_bytes, gpu_name=self.gpu_name, measured=measured
            )
        except KvtopError as error:
            raise self._error(str(error), f"{where}.command") from None
        if not truth.engine.fits:
            raise self._error(
                "this engine would not start on these GPUs (its KV cache does not fit)", f"{where}.command"
            )
        return truth

    def _worker_identity(
        self, spec: EngineSpec, settings: LaunchSettings, rank: RankLedger, position: int
    ) -> tuple[int, int, str]:
        """(pid, parent pid, title) of a rank's GPU process, as each engine names and parents it."""
        if settings.engine == "sglang":
            parts = [f"DP{rank.dp_rank}"] if settings.dp > 1 or settings.enable_dp_attention else []
            parts += [f"PP{rank.pp_rank}"] if settings.pp > 1 else []
            return (
                spec.server_pid + 10 + position,
                spec.server_pid,
                "sglang::scheduler_" + "_".join([*parts, f"TP{rank.tp_rank}"]),
            )
        core = spec.server_pid + 1 + rank.dp_rank
        if settings.tp * settings.pp == 1:  # the engine core runs the model itself
            return core, spec.server_pid, _engine_core_title(settings, rank.dp_rank)
        parts = [f"PP{rank.pp_rank}"] if settings.pp > 1 else []
        parts.append(f"TP{rank.tp_rank}")
        if settings.effective_ep > 1:
            parts.append(f"EP{rank.tp_rank + settings.tp * rank.dp_rank}")
        return spec.server_pid + 100 + position, core, "VLLM::Worker_" + "_".join(parts)

    def _worker_bytes(
        self, spec: EngineSpec, settings: LaunchSettings, rank: RankLedger, gpu: int, pid: int
    ) -> int:
        """The ledger's resident bytes (with this worker's own CUDA context and extra bytes in place
        of what the engine budgeted for them), less a fixed few MiB; never more than the GPU has left."""
        extra = spec.extra_bytes.get(gpu, 0)
        # SGLang's ledger counts as context all that was taken before the load on the tightest rank;
        # vLLM's KV budget already left room for the largest rank's extra bytes.
        own = (
            spec.cuda_context + extra
            if settings.engine == "sglang"
            else spec.cuda_context + extra - max(spec.extra_bytes.values(), default=0)
        )
        resident = rank.weights_bytes + rank.kv_pool_bytes + rank.reserve_bytes + own
        ceiling = self.total_bytes - self.scenario.gpu.reserved - self.other_bytes.get(gpu, 0)
        noise = int(_unit(self.scenario.seed, "noise", pid) * self.scenario.noise)
        return min(resident, ceiling) - noise


def _engine_core_title(settings: LaunchSettings, dp_rank: int) -> str:
    return f"VLLM::EngineCore_DP{dp_rank}" if settings.dp > 1 else "VLLM::EngineCore"


def _titled(pid: int, title: str, parent_pid: int, visible: str) -> ProcessRecord:
    return ProcessRecord(pid=pid, parent_pid=parent_pid, name=title[:15], cmdline=(title,), user="root",
                         start_time=_SERVER_START + 5, cuda_visible_devices=visible)  # fmt: skip


class _ScenarioProcessTable:
    """The scenario's processes behind `kvtop.sources.processes.ProcessTable`."""

    def __init__(self, records: dict[int, ProcessRecord]) -> None:
        self._records = records

    def lookup(self, pid: int) -> ProcessRecord | None:
        return self._records.get(pid)


class DemoSource:
    """A simulated node (`SnapshotSource`). `clock` gives the time; one tick per `period_s`."""

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
        self.scenario = scenario
        self.label = f"demo:{scenario.name}"
        self.notice = notice
        self._clock = clock
        self._period_s = period_s
        self._plan = _NodePlan(scenario, origin or f"scenario {scenario.name}")
        self._log = read_log(engine_log) if engine_log is not None else None
        self._usage_memo: dict[tuple[int, int, int], float] = {}
        raw = NodeObservation(taken_at=0.0, driver_version=scenario.gpu.driver_version,
                              gpus=tuple(self._raw_gpu(index) for index in range(scenario.gpu.count)))  # fmt: skip
        self._template = attribute_node(raw, _ScenarioProcessTable(self._plan.records))
        models = self._plan.models
        self._predictor = EnginePredictor(model_loader=lambda ref: _resolve(models, ref))

    @classmethod
    def open(cls, ref: str, **options: Any) -> DemoSource:
        """The demo node of a scenario name ('default' included) or .json path."""
        return cls(load_scenario(ref), origin=str(scenario_path(ref)), **options)

    def tick(self) -> int:
        """The tick the clock is in now."""
        return math.floor(self._clock() / self._period_s)

    def collect(self) -> NodeSnapshot:
        return self.collect_at(self.tick(), taken_at=self._clock())

    def collect_at(self, tick: int, *, taken_at: float | None = None) -> NodeSnapshot:
        """The node as it is at `tick` (deterministic: the same tick gives the same snapshot)."""
        node = self.observe_at(tick, taken_at=tick * self._period_s if taken_at is None else taken_at)
        log_notice = None
        if self._log is not None:
            node, log_notice = with_logged_capacity(node, self._log)
        notice = join_notices(self.notice, log_notice)
        return build_snapshot(node, self._predictor.ledgers(node), source=self.label, notice=notice)

    def observe_at(self, tick: int, *, taken_at: float) -> NodeObservation:
        """What NVML, the process table and the endpoints say at `tick`, attributed. Processes keep
        their identities from tick to tick, so attribution runs once and each tick moves the bytes."""
        gpus = tuple(self._gpu(template, tick) for template in self._template.gpus)
        live = {
            engine.spec.server_pid: self._live(position, tick)
            for position, engine in enumerate(self._plan.engines)
        }
        engines = tuple(
            engine.model_copy(update={"live": live[engine.server_pid]})
            if engine.server_pid in live
            else engine
            for engine in self._template.engines
        )
        return self._template.model_copy(update={"taken_at": taken_at, "gpus": gpus, "engines": engines})

    # --- one tick ---

    def _usage(self, engine_index: int, dp_rank: int, tick: int) -> float:
        """KV usage of one engine core at `tick`: a slow seeded wave around the mean, plus a flicker."""
        key = (engine_index, dp_rank, tick)
        if key not in self._usage_memo:
            if len(self._usage_memo) > 4096:
                self._usage_memo.clear()
            self._usage_memo[key] = self._usage_at(engine_index, dp_rank, tick)
        return self._usage_memo[key]

    def _usage_at(self, engine_index: int, dp_rank: int, tick: int) -> float:
        spec, seed = self._plan.engines[engine_index].spec, self.scenario.seed
        phase = _unit(seed, "phase", engine_index, dp_rank) * 2 * math.pi
        wave = (
            math.sin(2 * math.pi * tick / 60 + phase) * 0.7
            + (_unit(seed, "flicker", engine_index, dp_rank, tick) - 0.5) * 0.6
        )
        return round(min(0.99, max(0.0, spec.kv_usage + self.scenario.kv_usage_swing * wave)), 4)

    def _process_bytes(self, pid: int, tick: int) -> int:
        """What NVML reports for `pid` at `tick`: a worker moves below its base by the jitter."""
        worker = self._plan.worker_by_pid.get(pid)
        if worker is None:
            return self._plan.fixed_bytes[pid]
        return worker.base_bytes - int(_unit(self.scenario.seed, "jitter", pid, tick) * self.scenario.jitter)

    def _raw_gpu(self, index: int) -> GpuObservation:
        """One GPU as NVML lists it (processes by pid and bytes, nobody attributed yet)."""
        plan, spec = self._plan, self.scenario.gpu
        if index in plan.lost:
            message = plan.lost[index] or (f"GPU {index} is lost (fell off the bus): check `dmesg` for Xid errors; "
                                           "it needs a GPU reset or a reboot")  # fmt: skip
            return GpuObservation(index=index, state=GpuState.LOST, state_message=message)
        pids = [w.pid for w in plan.workers_by_gpu.get(index, ())]
        pids += [p.pid for p in self.scenario.non_engine_processes() if p.gpu == index]
        return GpuObservation(
            index=index, uuid=_uuid(self.scenario, index), pci_bus_id=_bus_id(index), name=plan.gpu_name,
            total_bytes=plan.total_bytes, reserved_bytes=spec.reserved, memory_api=MemoryApi.V2,
            processes=tuple(GpuProcess(pid=pid, used_bytes=self._process_bytes(pid, 0)) for pid in sorted(pids)),
        )  # fmt: skip

    def _gpu(self, template: GpuObservation, tick: int) -> GpuObservation:
        if template.state is GpuState.LOST:
            return template
        moving = self._plan.worker_by_pid
        processes = tuple(  # frozen values: a process whose bytes do not move is shared between ticks
            p.model_copy(update={"used_bytes": self._process_bytes(p.pid, tick)}) if p.pid in moving else p
            for p in template.processes
        )
        used = sum(process.used_bytes or 0 for process in processes)
        workers = self._plan.workers_by_gpu.get(template.index, ())
        busy = self._usage(workers[0].engine_index, workers[0].ledger_rank.dp_rank, tick) if workers else 0.0
        return template.model_copy(update={
            "used_bytes": used, "free_bytes": self._plan.total_bytes - self.scenario.gpu.reserved - used,
            "utilization_percent": round(100 * min(1.0, busy * 1.6)) if workers else 0, "processes": processes,
        })  # fmt: skip

    def _live(self, engine_index: int, tick: int) -> EngineLive:
        """What the engine's endpoints say at `tick`: the capacity it solved and a moving usage,
        one rank per scheduler (SGLang) or engine core (vLLM), i.e. per DP rank."""
        engine = self._plan.engines[engine_index]
        spec, truth, sglang = engine.spec, engine.truth, engine.settings.engine == "sglang"
        if spec.endpoint is not EndpointState.OK:
            reason = _ENDPOINT_MESSAGES.get(spec.endpoint, spec.endpoint.value)
            return EngineLive(
                state=spec.endpoint, base_url=engine.base_url, message=f"{engine.base_url}: {reason}"
            )
        ranks = [
            self._live_rank(engine_index, dp_rank, tick)
            for dp_rank in sorted({r.dp_rank for r in truth.ranks})
        ]
        return EngineLive(
            state=EndpointState.OK, base_url=engine.base_url, version=spec.version,
            token_capacity=truth.token_capacity, num_gpu_blocks=truth.engine.num_blocks, block_size=truth.engine.page_size,
            kv_usage_fraction=max(r.kv_usage_fraction or 0.0 for r in ranks),
            used_tokens=sum(r.used_tokens or 0 for r in ranks), running_requests=sum(r.running_requests or 0 for r in ranks),
            waiting_requests=sum(r.waiting_requests or 0 for r in ranks), memory_fraction=truth.engine.memory_fraction,
            weight_bytes=_printed_gib(truth.ranks[0].weights_bytes) if sglang else None,
            kv_cache_bytes=_printed_gib(truth.ranks[0].kv_pool_bytes) if sglang else None,
            ranks=tuple(ranks),
        )  # fmt: skip

    def _live_rank(self, engine_index: int, dp_rank: int, tick: int) -> EngineLiveRank:
        engine = self._plan.engines[engine_index]
        spec, truth, sglang = engine.spec, engine.truth, engine.settings.engine == "sglang"
        usage = self._usage(engine_index, dp_rank, tick)
        wobble = int(_unit(self.scenario.seed, "run", engine_index, dp_rank, tick) * 5) - 2
        return EngineLiveRank(
            dp_rank=dp_rank, tp_rank=0, pp_rank=0, engine_index=None if sglang else str(dp_rank),
            pid=self._plan.first_pid[(engine_index, dp_rank)] if sglang else None,  # SGLang labels ranks by pid; vLLM does not
            token_capacity=truth.token_capacity, num_gpu_blocks=truth.engine.num_blocks,
            block_size=truth.engine.page_size, kv_usage_fraction=usage, used_tokens=int(usage * truth.token_capacity),
            running_requests=max(0, spec.running_requests + wobble), waiting_requests=spec.waiting_requests,
        )  # fmt: skip


def _printed_gib(num_bytes: int) -> int:
    """Bytes as the engine prints them: GiB to two decimals."""
    return round(round(num_bytes / _GIB, 2) * _GIB)


def _bus_id(index: int) -> str:
    """A PCI bus id in NVML's format, eight GPUs per PCI domain."""
    return f"{index // 8:08X}:{0x18 + 0x10 * (index % 8):02X}:00.0"


def _uuid(scenario: Scenario, index: int) -> str:
    digest = hashlib.blake2b(f"{scenario.name}:{scenario.seed}:{index}".encode(), digest_size=16).digest()
    return f"GPU-{uuid.UUID(bytes=digest)}"


def _resolve(models: dict[str, ModelSpec], ref: str) -> ModelSpec:
    if ref not in models:
        raise InputError("not a model of this demo scenario", field="model", source=ref)
    return models[ref]
