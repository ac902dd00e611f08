"""A simulated node for demos and tests: a source of observations, nothing more.

`DemoObservations` turns a `Scenario` into what NVML, the OS and the engines' endpoints would report:
GPUs with their processes (bytes as NVML v2 gives them), a process table of servers, workers,
co-tenants and orphans, and each engine's endpoint state. It predicts nothing and builds no snapshot:
the live node's own assembler (`kvtop.commands.node_source`) attributes, predicts and joins, so a demo
node is shown exactly as a live one would be (labelled `demo:<scenario>`, never as a real node).

Observed bytes come from the engine's simulated solve on this node (`demo_plan.NodePlan`: SGLang sizes
every rank by the least free memory over its ranks, so a co-tenant that was there first shrinks every
rank's pool). A healthy worker holds its ledger less a few MiB; values move a little each tick by a
seeded function of (scenario seed, process, tick), so a given tick always gives the same node.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from kvtop.domain.config_override import ConfigOverride
from kvtop.domain.engines.registry import simulation
from kvtop.domain.errors import InputError
from kvtop.domain.model import ModelSpec
from kvtop.domain.observe import (
    EndpointState,
    EngineLive,
    EngineLiveRank,
    GpuObservation,
    GpuProcess,
    GpuState,
    HostMemory,
    MemoryApi,
    NodeObservation,
    NvmlState,
    ReportedVersion,
)
from kvtop.domain.placement import span_of
from kvtop.domain.pressure import RATE_WINDOW_S
from kvtop.sources.demo_plan import (
    ENDPOINT_MESSAGES,
    NodePlan,
    ScenarioProcessTable,
    bus_id,
    gpu_uuid,
    printed_gib,
    resolve_model,
    unit_noise,
)
from kvtop.sources.processes import attribute_node
from kvtop.sources.scenario import Scenario

#: Board power limits (W) of the demo's GPU models (their data sheets' TDP); others: 700 W.
_POWER_LIMIT_W = {"A100-40GB": 400, "A100-80GB": 400, "H100": 700, "H200": 700, "B200": 1000, "L40S": 350}
_IDLE_W, _IDLE_C, _IDLE_MHZ, _BUSY_MHZ = 70, 30, 345, 1980  # an idle H100: ~70 W, 30 °C, 345 MHz SM


def simulated_vitals(model: str, utilization: int) -> dict[str, int]:
    """A simulated GPU's temperature, power and SM clock, rising with its utilisation (the demo's own
    figures: a demo node is never read as a real one)."""
    limit_w = _POWER_LIMIT_W.get(model.upper(), 700)
    load = utilization / 100
    return {
        "temperature_c": round(_IDLE_C + 40 * load),
        "power_mw": round((_IDLE_W + (limit_w - _IDLE_W) * 0.75 * load) * 1000),
        "power_limit_mw": limit_w * 1000,
        "sm_clock_mhz": _BUSY_MHZ if utilization else _IDLE_MHZ,
    }


class DemoObservations:
    """What a simulated node reports (a `NodeObserver`). `clock` gives the time; one tick per `period_s`."""

    def __init__(
        self,
        scenario: Scenario,
        *,
        clock: Callable[[], float] = time.time,
        period_s: float = 1.0,
        notice: str | None = None,
        origin: str | None = None,
    ) -> None:
        self.scenario = scenario
        self.label = f"demo:{scenario.name}"
        self.notice = notice
        self._clock = clock
        self._period_s = period_s
        self._plan = NodePlan(scenario, origin or f"scenario {scenario.name}", opened_at=clock())
        self._usage_memo: dict[tuple[int, int, int], float] = {}
        # NVML's state is "demo" and no driver version is claimed: no figure here was read from a driver
        raw = NodeObservation(
            taken_at=0.0,
            nvml_state=NvmlState.DEMO,
            nvml_message=f"a simulated node (demo scenario '{scenario.name}'): no NVIDIA driver was read",
            gpus=tuple(self._raw_gpu(index) for index in range(scenario.gpu.count)),
        )
        self._template = attribute_node(raw, ScenarioProcessTable(self._plan.records))

    def now(self) -> float:
        """The demo's clock."""
        return self._clock()

    def tick(self) -> int:
        """The tick the clock is in now."""
        return math.floor(self._clock() / self._period_s)

    def observe(self) -> NodeObservation:
        """The node as it is now."""
        return self.observe_at(self.tick(), taken_at=self._clock())

    def load_model(self, ref: str, *, override: ConfigOverride | None = None) -> ModelSpec:
        """A model the scenario runs (its preset or config, read once when the scenario was planned); a launch's
        config override is not merged into a scenario's model (refused by name)."""
        if override is not None:
            raise InputError("not merged into a demo scenario's model", field=override.flag)
        return resolve_model(self._plan.models, ref)

    def close(self) -> None:
        """Nothing to release: a demo opens no driver."""

    def observe_at(self, tick: int, *, taken_at: float | None = None) -> NodeObservation:
        """What NVML, the process table and the endpoints say at `tick`, attributed (deterministic: the
        same tick gives the same node; `taken_at` defaults to the tick's start). Processes keep their
        identities from tick to tick, so attribution runs once and each tick moves the bytes."""
        if taken_at is None:
            taken_at = tick * self._period_s
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
        return self._template.model_copy(update={
            "taken_at": taken_at, "gpus": gpus, "engines": engines, "host_memory": self._host_memory(),
        })  # fmt: skip

    def _host_memory(self) -> HostMemory | None:
        """The scenario's host memory less what its engines' host tiers pin (their planned ledgers say)."""
        total = self.scenario.host_memory
        if total is None:
            return None
        pinned = sum(e.truth.host_tier.total_bytes for e in self._plan.engines if e.truth.host_tier is not None)
        return HostMemory(total_bytes=total, available_bytes=max(0, total - pinned - total // 20))

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
        phase = unit_noise(seed, "phase", engine_index, dp_rank) * 2 * math.pi
        wave = (
            math.sin(2 * math.pi * tick / 60 + phase) * 0.7
            + (unit_noise(seed, "flicker", engine_index, dp_rank, tick) - 0.5) * 0.6
        )
        return round(min(0.99, max(0.0, spec.kv_usage + self.scenario.kv_usage_swing * wave)), 4)

    def _process_bytes(self, gpu: int, pid: int, tick: int) -> int:
        """What NVML reports for `pid` on `gpu` at `tick`: a worker moves below its base by the jitter."""
        worker = self._plan.worker_at.get((gpu, pid))
        if worker is None:
            return self._plan.fixed_bytes[pid]
        return worker.base_bytes - int(
            unit_noise(self.scenario.seed, "jitter", pid, tick) * self.scenario.jitter
        )

    def _raw_gpu(self, index: int) -> GpuObservation:
        """One GPU as NVML lists it (processes by pid and bytes, nobody attributed yet)."""
        plan = self._plan
        if index in plan.lost:
            message = plan.lost[index] or (f"GPU {index} is lost (fell off the bus): check `dmesg` for Xid errors; "
                                           "it needs a GPU reset or a reboot")  # fmt: skip
            return GpuObservation(index=index, state=GpuState.LOST, state_message=message)
        pids = [w.pid for w in plan.workers_by_gpu.get(index, ())]
        pids += [p.pid for p in self.scenario.non_engine_processes() if p.gpu == index]
        return GpuObservation(
            index=index, uuid=gpu_uuid(self.scenario, index), pci_bus_id=bus_id(index), name=plan.gpu_name,
            total_bytes=plan.total_bytes, reserved_bytes=plan.reserved, memory_api=MemoryApi.V2,
            processes=tuple(GpuProcess(pid=pid, used_bytes=self._process_bytes(index, pid, 0)) for pid in sorted(pids)),
        )  # fmt: skip

    def _gpu(self, template: GpuObservation, tick: int) -> GpuObservation:
        if template.state is GpuState.LOST:
            return template
        moving, index = self._plan.worker_at, template.index
        processes = tuple(  # frozen values: a process whose bytes do not move is shared between ticks
            p.model_copy(update={"used_bytes": self._process_bytes(index, p.pid, tick)}) if (index, p.pid) in moving else p
            for p in template.processes
        )
        used = sum(process.used_bytes or 0 for process in processes)
        workers = self._plan.workers_by_gpu.get(template.index, ())
        busy = self._usage(workers[0].engine_index, workers[0].ledger_rank.dp_rank, tick) if workers else 0.0
        utilization = round(100 * min(1.0, busy * 1.6)) if workers else 0
        return template.model_copy(update={
            "used_bytes": used, "free_bytes": self._plan.total_bytes - self._plan.reserved - used,
            "utilization_percent": utilization, "processes": processes,
            **simulated_vitals(self.scenario.gpu.model, utilization),
        })  # fmt: skip

    def _live(self, engine_index: int, tick: int) -> EngineLive:
        """What the engine's endpoints say at `tick`: the capacity it solved and a moving usage,
        one rank per scheduler (SGLang) or engine core (vLLM), i.e. per DP rank."""
        engine = self._plan.engines[engine_index]
        spec, truth = engine.spec, engine.truth
        reports_bytes = simulation(engine.settings.engine).reports_memory_bytes
        reports_capacity = simulation(engine.settings.engine).reports_capacity
        no_api = span_of(engine.settings.engine, engine.settings).no_api_reason
        if no_api is not None:  # as the live node: a worker node of a multi-node engine serves no API
            return EngineLive(state=EndpointState.NOT_QUERIED, message=no_api)
        if spec.endpoint is not EndpointState.OK:
            reason = ENDPOINT_MESSAGES.get(spec.endpoint, spec.endpoint.value)
            return EngineLive(
                state=spec.endpoint, base_url=engine.base_url, message=f"{engine.base_url}: {reason}"
            )
        ranks = [
            self._live_rank(engine_index, dp_rank, tick)
            for dp_rank in sorted({r.dp_rank for r in truth.ranks})
        ]
        summary = EngineLive.of_ranks(ranks)  # usage and requests as a live engine's ranks add up
        taken_at = tick * self._period_s
        back = max(1, math.ceil(RATE_WINDOW_S / self._period_s))  # as the live source: rates over a minute
        earlier = EngineLive.of_ranks([self._live_rank(engine_index, r.dp_rank or 0, tick - back) for r in ranks])
        return EngineLive(
            taken_at=taken_at, previous=earlier.model_copy(update={"taken_at": taken_at - back * self._period_s}).counters,
            preemptions_total=summary.preemptions_total, retractions_total=summary.retractions_total,
            spec_acceptance=summary.spec_acceptance,
            state=EndpointState.OK, base_url=engine.base_url,
            version=None if spec.version is None else ReportedVersion(words=spec.version),
            token_capacity=truth.token_capacity if reports_capacity else None,
            num_gpu_blocks=truth.engine.num_blocks if reports_capacity else None,
            block_size=truth.engine.page_size if reports_capacity else None,
            kv_usage_fraction=summary.kv_usage_fraction, used_tokens=summary.used_tokens,
            running_requests=summary.running_requests, waiting_requests=summary.waiting_requests,
            memory_fraction=truth.engine.memory_fraction,
            weight_bytes=printed_gib(truth.ranks[0].weights_bytes) if reports_bytes else None,
            kv_cache_bytes=printed_gib(truth.ranks[0].kv_pool_bytes) if reports_bytes else None,
            ranks=summary.ranks,
        )  # fmt: skip

    def _live_rank(self, engine_index: int, dp_rank: int, tick: int) -> EngineLiveRank:
        engine = self._plan.engines[engine_index]
        spec, truth = engine.spec, engine.truth
        by_pid = simulation(engine.settings.engine).labels_ranks_by_pid
        capacity = truth.token_capacity if simulation(engine.settings.engine).reports_capacity else None
        usage = self._usage(engine_index, dp_rank, tick)
        wobble = int(unit_noise(self.scenario.seed, "run", engine_index, dp_rank, tick) * 5) - 2
        counter = simulation(engine.settings.engine).evictions_counter
        ranks = len({r.dp_rank for r in truth.ranks})
        evicted = {counter: int(spec.evictions_per_min * max(tick, 0) * self._period_s / 60 / ranks)} if counter else {}
        return EngineLiveRank(
            **evicted, spec_acceptance=spec.spec_acceptance,
            dp_rank=dp_rank, tp_rank=0, pp_rank=0, engine_index=None if by_pid else str(dp_rank),
            pid=self._plan.first_pid[(engine_index, dp_rank)] if by_pid else None,
            token_capacity=capacity, num_gpu_blocks=truth.engine.num_blocks if capacity else None,
            block_size=truth.engine.page_size if capacity else None, kv_usage_fraction=usage,
            used_tokens=int(usage * truth.token_capacity) if capacity else None,
            running_requests=max(0, spec.running_requests + wobble), waiting_requests=spec.waiting_requests,
        )  # fmt: skip
