"""diagnose(snapshot) → where each rank's missing KV capacity went, worst first, each with its fix.

Pure rules over one `NodeSnapshot` (observed bytes beside the predicted ledger). Token costs
come from the planner: the engine's budget is re-solved with the cause removed, and how an
engine spreads a loss is the engine's own: SGLang sizes every rank by the least free GPU (a
co-tenant on one GPU costs every rank), vLLM budgets a fraction of *total* memory and instead
refuses to start when free memory is short. "Restart" figures price what the GPUs hold now:
free memory plus the rank's own worker, less a fresh CUDA context.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kvtop.domain.calibration.estimate import start_overhead
from kvtop.domain.capacity import CapacityCause, CapacityTerm
from kvtop.domain.diagnose_findings import SEVERITY_ORDER, Finding, Rule, Severity, Thresholds, rank_label
from kvtop.domain.diagnose_pressure import host_tier_findings, pressure_findings
from kvtop.domain.diagnose_rules import ledger_findings, weights_cause
from kvtop.domain.engines.base import DEFAULT_CONTEXT_BYTES
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.keep_running import flag_alternative
from kvtop.domain.ledger import Ledger
from kvtop.domain.node import EngineView, NodeSnapshot
from kvtop.domain.observe import GpuObservation, GpuProcess, GpuState, ProcessRole
from kvtop.domain.waterfall import held_before_start
from kvtop.domain.whatif import Replay
from kvtop.domain.wording import gib

__all__ = ["Finding", "Severity", "Thresholds", "diagnose", "diagnose_ledger", "sort_findings"]

DEFAULT_THRESHOLDS = Thresholds()
_OTHERS = (ProcessRole.CO_TENANT, ProcessRole.ENGINE_WORKER, ProcessRole.ENGINE_SERVER)


def sort_findings(findings: Iterable[Finding]) -> tuple[Finding, ...]:
    """Worst first: severity, then whole GPUs lost, then tokens lost, then rule and GPUs for a stable order."""
    return tuple(sorted(findings, key=lambda f: (SEVERITY_ORDER[f.severity], -f.whole_gpus, -f.tokens, f.rule, f.gpus)))


def diagnose_ledger(ledger: Ledger, *, thresholds: Thresholds = DEFAULT_THRESHOLDS) -> tuple[Finding, ...]:
    """The rules a plan or a startup log supports alone (FP8 KV, TP vs heads, MLA, req_to_token, state, hybrid)."""
    return sort_findings(ledger_findings(ledger, thresholds))


def diagnose(snapshot: NodeSnapshot, *, thresholds: Thresholds = DEFAULT_THRESHOLDS) -> tuple[Finding, ...]:
    """Every finding on the node, worst first."""
    engines = [EngineOnNode(snapshot, view) for view in snapshot.engines]
    found: list[Finding] = [*_lost_gpus(snapshot), *_orphans(snapshot, engines), *_idle_gpus(snapshot)]
    for e in engines:
        found += e.co_tenants(thresholds)
        found += pressure_findings(e) + host_tier_findings(e, snapshot.observation.host_memory)
        found += [f for f in (e.imbalance(thresholds), e.weights(thresholds), e.reserve(thresholds), e.restart(), e.unexplained(thresholds)) if f]  # fmt: skip
        basis = (
            e.view.explained or e.ledger
        )  # advice is priced on the engine as measured, as the planner does
        found += [e.relabel(f) for f in ledger_findings(basis, thresholds)] if basis else []
    return sort_findings(found)


def _describe(process: GpuProcess, gpu: int, *, pid: bool = True) -> str:
    """'4242 (python, user ada, 6.00 GiB on GPU 3)'."""
    user = f", user {process.user}" if process.user else ""
    facts = f"{process.title or process.name or '?'}{user}, {gib(process.used_bytes or 0)} on GPU {gpu}"
    return f"{process.pid} ({facts})" if pid else facts


def _gpu_list(gpus: Iterable[int]) -> str:
    ordered = sorted(set(gpus))
    return ("GPU " if len(ordered) == 1 else "GPUs ") + ", ".join(map(str, ordered))


@dataclass(frozen=True)
class Cost:
    """What a cause costs each rank now (tokens), what its fix gains, and the waterfall term it is."""

    tokens: int
    gain_tokens: int
    cause: CapacityCause | None
    term_tokens: int | None

    def fields(self) -> dict[str, object]:
        return {
            "tokens": self.tokens,
            "gain_tokens": self.gain_tokens,
            "cause": self.cause,
            "term_tokens": self.term_tokens,
        }


NO_COST = Cost(tokens=0, gain_tokens=0, cause=None, term_tokens=None)


class EngineOnNode:
    """One engine as the node rules see it: its ranks by GPU, what else each GPU holds, the planner,
    and its own rules (`kvtop.domain.engines.<engine>`), which price causes and spell fixes."""

    def __init__(self, snapshot: NodeSnapshot, view: EngineView) -> None:
        self.view, self.id, self.ledger = view, view.engine.engine_id, view.ledger
        self.rules = engine_rules(view.engine.kind)
        self.replay = Replay(view.ledger) if view.ledger else None
        self.settings = view.engine.settings or (view.ledger.settings if view.ledger else None)
        self.ranks = {rank.gpu_index: rank for rank in view.ranks}
        starts = [p.start_time for _, p in snapshot.observation.engine_processes(self.id) if p.start_time]
        self.started_at = min(starts) if starts else None  # when the engine's first process started
        self.gpus: dict[int, GpuObservation] = {
            g: gpu for g in self.ranks if (gpu := snapshot.observation.gpu(g))
        }
        total = view.ledger.gpu_total_bytes if view.ledger else 0
        # what a restart takes before its weights (the calibrated estimate: the driver's share and the
        # engine's CUDA context and NCCL by TP and GPU); NVML's free memory, where read, stays measured
        overhead = start_overhead(view.ledger) if view.ledger else None
        driver = overhead.driver_bytes if overhead else 0  # no ledger: no restart is priced (no replay)
        context = overhead.context_bytes if overhead else DEFAULT_CONTEXT_BYTES
        self.clean: dict[int, int] = {}  # free at a restart if nothing but this engine were on the GPU
        for g, gpu in self.gpus.items():
            if gpu.free_bytes is None:
                self.clean[g] = (gpu.total_bytes or total) - driver - context
            else:
                mine = self.ranks[g].observed.process_bytes or 0
                self.clean[g] = gpu.free_bytes + mine + self.outside(g) - context

    def outside(self, g: int, roles: tuple[ProcessRole, ...] | None = None) -> int:
        """Bytes on GPU g held by processes not of this engine (of `roles`, when given)."""
        gpu = self.gpus.get(g)
        procs = gpu.processes if gpu else ()
        return sum(p.used_bytes or 0 for p in procs if p.engine_id != self.id and (roles is None or p.role in roles))  # fmt: skip

    def now(self) -> dict[int, int]:
        """Free at a restart with the GPUs as they are (the engine's own workers gone)."""
        return {g: free - self.outside(g) for g, free in self.clean.items()}

    def label(self, g: int) -> str:
        rank, s = self.ranks[g].rank, self.settings
        parts = ([f"dp{rank.dp}"] if s and s.dp > 1 else []) + ([f"pp{rank.pp}"] if s and s.pp > 1 else [])
        return f"{self.id}/" + "/".join([*parts, f"tp{rank.tp}"])

    def labels(self, gpus: Iterable[int] | None = None) -> tuple[str, ...]:
        return tuple(self.label(g) for g in sorted(self.ranks if gpus is None else gpus) if g in self.ranks)

    def relabel(self, finding: Finding) -> Finding:
        """A ledger-only finding placed on this engine's real GPUs and ranks."""
        update = {
            "engine_id": self.id,
            "gpus": tuple(sorted(self.ranks)) or finding.gpus,
            "ranks": self.labels() or finding.ranks,
        }
        return finding.model_copy(update=update)

    def restart_words(self, *, costs_now: bool) -> str:
        """What a fix that frees memory must add: the KV pool is sized at start, so a running engine wins
        nothing back until it restarts (and a process that costs nothing yet must go before it does)."""
        return f", then restart {self.id}" if costs_now else f", before {self.id} restarts"

    def finding(self, **fields: object) -> Finding:
        """A finding of this engine (every rank unless `ranks` says otherwise)."""
        return Finding.model_validate({"engine_id": self.id, "gpus": tuple(sorted(self.ranks)), "ranks": self.labels(), **fields})  # fmt: skip

    # --- the planner at a restart -------------------------------------------------------------

    def restart_capacity(self, free: Mapping[int, int]) -> int:
        """Tokens per rank a restart gets with `free` bytes free on each GPU, by the engine's own rule."""
        if self.replay is None or not free:
            return 0
        return self.rules.diagnosis.restart_capacity(self.replay, free)

    def price(self, freed: Mapping[int, int]) -> tuple[int, int]:
        """(tokens the cause costs on its own, tokens freeing it gains now) for `freed` bytes per GPU."""
        clean, now = self.clean, self.now()
        alone = {g: free - freed.get(g, 0) for g, free in clean.items()}
        without = {g: free + freed.get(g, 0) for g, free in now.items()}
        cost = self.restart_capacity(clean) - self.restart_capacity(alone)
        return max(0, cost), max(0, self.restart_capacity(without) - self.restart_capacity(now))

    def spread_evidence(self, tokens: int) -> str:
        if self.ledger is None:
            return f"no prediction for {self.id}: {self.view.ledger_error}"
        return self.rules.diagnosis.spread_evidence(self.ledger, tokens, len(self.ranks))

    # --- rules ---------------------------------------------------------------------------------

    def term(self, cause: CapacityCause, gpu: int | None = None) -> CapacityTerm | None:
        """The waterfall's term of `cause` (on `gpu`, when given): every rank shares the engine's terms."""
        waterfall = next((r.capacity for r in self.view.ranks if r.capacity is not None), None)
        found = waterfall.term(cause) if waterfall else None
        return found if found is not None and (gpu is None or found.gpu_index == gpu) else None

    def costed(self, cause: CapacityCause, gpu: int | None, freed: Mapping[int, int]) -> Cost:
        """A finding's cost: the waterfall's term where the cause is one (its tokens, as a cost; the fix
        gains them back), else nothing now and what freeing the bytes gains at a restart."""
        term = self.term(cause, gpu)
        if term is not None:
            return Cost(tokens=-term.tokens, gain_tokens=-term.tokens, cause=cause, term_tokens=term.tokens)
        return Cost(tokens=0, gain_tokens=self.price(freed)[1], cause=cause, term_tokens=None)

    def waterfall_evidence(self) -> str | None:
        """'tokens per rank: clean 1,255,785 → other processes −128,660 (GPU 3, pid 4242) → 1,127,125 live'."""
        waterfall = next((r.capacity for r in self.view.ranks if r.capacity is not None), None)
        return None if waterfall is None else "tokens per rank: " + waterfall.describe()

    def co_tenants(self, thresholds: Thresholds) -> list[Finding]:
        """`co_tenant` / `unattributed_bytes`: processes of no engine (or another engine) on this engine's GPUs."""
        found = []
        for g, gpu in sorted(self.gpus.items()):
            others = [p for p in gpu.processes if p.engine_id != self.id and p.role in _OTHERS]
            held = sum(p.used_bytes or 0 for p in others)
            hidden = self.outside(g, (ProcessRole.UNATTRIBUTED,))
            if held:
                cost = self.costed(CapacityCause.OTHER_PROCESSES, g, {g: held})
                tokens, gain = cost.tokens, cost.gain_tokens
                evidence = [f"pid {_describe(p, g)} next to {self.label(g)}" for p in others]
                if cost.term_tokens is not None:
                    evidence.append(self.spread_evidence(tokens))
                elif not all(held_before_start(p, self.started_at) for p in others):
                    evidence.append(
                        f"it came after the engine started: it costs nothing now; a restart would lose {gain:,} tokens per rank to it"
                    )
                else:
                    evidence.append(self.spread_evidence(gain))
                    evidence.append(
                        f"the engine's budget did not shrink for it: it costs nothing now; a restart would lose {gain:,} tokens per rank to it"
                    )
                if (line := self.waterfall_evidence()) is not None:
                    evidence.append(line)
                pids = ("stop pid " if len(others) == 1 else "stop pids ") + ", ".join(
                    _describe(p, g) for p in others
                )
                pids += self.restart_words(costs_now=cost.term_tokens is not None)
                alternative = flag_alternative(self, tuple(p.pid for p in others), {g: held}, thresholds) if tokens or gain else None
                found.append(
                    self.finding(
                        rule=Rule.CO_TENANT,
                        severity=Severity.WARNING if tokens or gain else Severity.INFO,
                        summary=f"{gib(held)} of other processes on GPU {g} "
                        + (f"cost {tokens:,} tokens per rank" if tokens else "cost nothing until a restart"),
                        gpus=(g,),
                        bytes=held,
                        evidence=tuple(evidence),
                        fix=pids,
                        **cost.fields(),
                        gain_needs_restart=True,
                        pids=tuple(p.pid for p in others),
                        alternative=alternative,
                    )
                )
            if hidden >= thresholds.unexplained_bytes:
                cost = self.costed(CapacityCause.HIDDEN_PROCESSES, g, {g: hidden})
                found.append(
                    self.finding(
                        rule=Rule.UNATTRIBUTED_BYTES,
                        severity=Severity.WARNING,
                        gpus=(g,),
                        bytes=hidden,
                        summary=f"{gib(hidden)} on GPU {g} held by processes kvtop cannot see",
                        fix=(
                            "run kvtop in the host PID namespace (e.g. docker run --pid=host) "
                            f"to name what holds {gib(hidden)} on GPU {g}"
                        ),
                        evidence=(
                            "NVML lists pids of another PID namespace (a container) that kvtop cannot read",
                            self.spread_evidence(cost.tokens),
                        ),
                        **cost.fields(),
                    )
                )
        return found

    def imbalance(self, thresholds: Thresholds) -> Finding | None:
        """`rank_imbalance` (engines sized by the least free GPU): one rank has less memory than the others even with other processes gone."""
        least_free_sizes = self.rules.sizes_every_rank_from_least_free
        if self.ledger is None or not least_free_sizes or len(self.clean) < 2:
            return None
        order = sorted(self.clean, key=lambda g: self.clean[g])
        tight, gap = order[0], self.clean[order[1]] - self.clean[order[0]]
        if self.clean[order[-1]] - self.clean[tight] <= thresholds.imbalance_bytes or gap <= 0:
            return None
        tokens = self.restart_capacity({**self.clean, tight: self.clean[order[1]]}) - self.restart_capacity(self.clean)  # fmt: skip
        gpu = self.gpus[tight]
        extra = [p for p in gpu.processes if p.engine_id == self.id and p.pid != self.ranks[tight].pid]
        if len({g.total_bytes for g in self.gpus.values() if g.total_bytes}) > 1:
            fix = f"run every rank on GPUs of one size (GPU {tight} has {gib(gpu.total_bytes or 0)})"
        elif extra:
            fix = f"keep other ranks off GPU {tight}: pids {', '.join(str(p.pid) for p in extra)} of {self.id} hold {gib(sum(p.used_bytes or 0 for p in extra))} there"
        else:
            fix = f"find what holds {gib(gap)} on GPU {tight} outside every listed process (leaked or driver memory), then restart"
        return self.finding(
            rule="rank_imbalance", severity=Severity.WARNING, gpus=(tight,), bytes=gap, tokens=tokens, fix=fix, gain_tokens=tokens,
            summary=f"GPU {tight} ({self.label(tight)}) is the tightest rank: {gib(gap)} less than the next, −{tokens:,} tokens on every rank",
            evidence=(*(f"GPU {g}: {gib(self.clean[g])} free at a restart without other processes" for g in order[:3]), self.spread_evidence(tokens)),
        )  # fmt: skip

    def weights(self, thresholds: Thresholds) -> Finding | None:
        """`weights_larger_than_predicted`: the engine reports more resident weights than the ledger predicts."""
        reported = [r.observed.weights_bytes for r in self.ranks.values() if r.observed.weights_bytes]
        if self.ledger is None or self.replay is None or not reported:
            return None
        observed, predicted = max(reported), self.ledger.weights_bytes
        excess, base = observed - predicted, self.replay.weights_bytes
        if excess <= thresholds.weights_excess_fraction * predicted:
            return None
        term = self.term(CapacityCause.WEIGHTS)
        tokens = (
            -term.tokens
            if term
            else max(
                0,
                self.replay.capacity(weights_shift=predicted - base)
                - self.replay.capacity(weights_shift=observed - base),
            )
        )
        cause, fix = weights_cause(self.ledger, self.replay, observed, excess)
        return self.finding(
            rule=Rule.WEIGHTS_LARGER_THAN_PREDICTED,
            severity=Severity.WARNING,
            bytes=excess,
            tokens=tokens,
            fix=fix,
            gain_tokens=tokens,
            cause=CapacityCause.WEIGHTS,
            term_tokens=term.tokens if term else None,
            summary=f"weights take {gib(observed)} per rank, {gib(excess)} (+{excess / predicted:.0%}) more than predicted",
            evidence=(
                f"engine reports {gib(observed)} of weights per rank; kvtop predicts {gib(predicted)} for {self.ledger.model.name}",
                cause,
            ),
        )

    def reserve(self, thresholds: Thresholds) -> Finding | None:
        """`reserve_larger_than_expected`: a runtime reserve larger than the engine's automatic one."""
        if self.ledger is None or self.replay is None:
            return None
        finding = self.rules.diagnosis.reserve_finding(self, thresholds)
        term = self.term(CapacityCause.RUNTIME_RESERVE)
        if finding is None or term is None:
            return finding
        update = {"tokens": -term.tokens, "cause": CapacityCause.RUNTIME_RESERVE, "term_tokens": term.tokens}
        return finding.model_copy(update=update)

    def restart(self) -> Finding | None:
        """`restart_will_not_fit`: would the engine start again on the GPUs as they are now?"""
        if self.ledger is None or self.replay is None or not self.clean:
            return None
        return self.rules.diagnosis.restart_finding(self)

    def unexplained(self, thresholds: Thresholds) -> Finding | None:
        """`unexplained_bytes`: worker bytes the ledger does not account for, shown rather than hidden."""
        if self.ledger is None:
            return None
        weights = [r.observed.weights_bytes for r in self.ranks.values() if r.observed.weights_bytes]
        excess = (
            max(0, max(weights) - self.ledger.weights_bytes) if weights else 0
        )  # weights_larger_than_predicted names it already
        over = {
            g: u - excess
            for g, r in self.ranks.items()
            if (u := r.unexplained_bytes) is not None and u - excess > thresholds.unexplained_bytes
        }
        if not over:
            return None
        worst = max(over.values())
        tokens = worst // self.ledger.kv_bytes_per_token
        return self.finding(
            rule="unexplained_bytes", severity=Severity.WARNING, gpus=tuple(sorted(over)), ranks=self.labels(over), bytes=worst, tokens=tokens,
            summary=f"{self.id} workers hold up to {gib(worst)} per rank that the ledger does not explain",
            fix="attach the engine's startup log (kvtop diagnose --engine-log PATH) to attribute them",
            evidence=(*(f"GPU {g}: worker {self.ranks[g].pid} holds {gib(self.ranks[g].observed.process_bytes or 0)}, "
                        f"{gib(u)} above weights + KV + reserve + context" for g, u in sorted(over.items())),
                      f"worth {tokens:,} tokens at {self.ledger.kv_bytes_per_token:,} B per token"),
        )  # fmt: skip


def _lost_gpus(snapshot: NodeSnapshot) -> list[Finding]:
    """A GPU that fell off the bus takes its engine's whole TP group down."""
    found = []
    short = [v for v in snapshot.engines if v.ledger is not None and len(v.ranks) < v.ledger.layout.gpus]
    for gpu in snapshot.observation.gpus:
        if gpu.state is not GpuState.LOST:
            continue
        view = short[0] if len(short) == 1 else None  # the one engine missing a rank
        ledger = view.ledger if view else None
        ranks: tuple[str, ...] = ()
        if view is not None and ledger is not None:
            seen = {(r.rank.dp, r.rank.pp, r.rank.tp) for r in view.ranks}
            missing = [r for r in ledger.ranks if (r.dp_rank, r.pp_rank, r.tp_rank) not in seen]
            if len(missing) == 1:
                ranks = (rank_label(missing[0], ledger, view.engine.engine_id),)
        restart = f", then restart {view.engine.engine_id}" if view else ""
        size = ledger.gpu_total_bytes if ledger else _sibling_total(snapshot)
        found.append(Finding(
            rule="gpu_lost", severity=Severity.CRITICAL, engine_id=view.engine.engine_id if view else None,
            summary=f"GPU {gpu.index} is lost" + (f": {view.engine.engine_id} cannot serve" if view else f": a whole GPU ({gib(size)}) out of service"),
            gpus=(gpu.index,), ranks=ranks, bytes=size, whole_gpus=1,
            tokens=ledger.token_capacity if ledger else 0, gain_tokens=ledger.token_capacity if ledger else 0,
            fix=f"reset GPU {gpu.index} (nvidia-smi --gpu-reset -i {gpu.index}) or reboot the node{restart}",
            evidence=(gpu.state_message or "NVML reports the GPU as lost",
                      *((f"{view.engine.engine_id} shows {len(view.ranks)} of {ledger.layout.gpus} ranks",) if view and ledger else ())),
        ))  # fmt: skip
    return found


def _sibling_total(snapshot: NodeSnapshot) -> int:
    """A lost GPU's size when no engine's ledger says it: NVML reads none, so the largest of the node's
    other GPUs (a node's GPUs are of one model but for mixed nodes, where this is the upper bound)."""
    return max((gpu.total_bytes or 0 for gpu in snapshot.observation.gpus), default=0)


def _idle_gpus(snapshot: NodeSnapshot) -> list[Finding]:
    """`idle_gpu` (advice): a GPU no process uses on a node that runs engines: a whole GPU of capacity unused."""
    engines = [view.engine.engine_id for view in snapshot.engines]
    if not engines:
        return []  # a node with no engine is idle as a whole: nothing to compare with
    found = []
    for gpu in snapshot.observation.gpus:
        if gpu.state is not GpuState.OK or gpu.processes or snapshot.engine_of_gpu(gpu.index) is not None:
            continue
        free = gpu.free_bytes if gpu.free_bytes is not None else gpu.total_bytes or 0
        found.append(Finding(
            rule=Rule.IDLE_GPU, severity=Severity.INFO, gpus=(gpu.index,), bytes=free, whole_gpus=1,
            summary=f"GPU {gpu.index} runs nothing: {gib(free)} free that none of {', '.join(engines)} uses",
            fix=f"serve on GPU {gpu.index} (another replica, or a layout over more GPUs), or lend it out",
            evidence=(f"NVML lists no process on GPU {gpu.index}; {gib(gpu.used_bytes or 0)} used",),
        ))  # fmt: skip
    return found


def _orphans(snapshot: NodeSnapshot, engines: list[EngineOnNode]) -> list[Finding]:
    """`orphan_worker`: engine workers whose server is gone, grouped by their dead server (one kill)."""
    groups: dict[tuple[str | None, int | None], list[tuple[int, GpuProcess]]] = {}
    for gpu, process in snapshot.observation.processes_with_role(ProcessRole.ORPHAN):
        groups.setdefault((process.engine_kind, process.parent_pid), []).append((gpu.index, process))
    found = []
    for (kind, _), members in groups.items():
        per_gpu: dict[int, int] = {}
        for g, process in members:
            per_gpu[g] = per_gpu.get(g, 0) + (process.used_bytes or 0)
        priced = [
            (
                e,
                e.costed(
                    CapacityCause.ORPHANED_WORKERS, None, {g: b for g, b in per_gpu.items() if g in e.clean}
                ),
            )
            for e in engines
            if set(per_gpu) & set(e.clean)
        ]
        engine, cost = max(priced, key=lambda item: item[1].tokens) if priced else (None, NO_COST)
        tokens = cost.tokens
        # a GPU the orphans hold where no engine runs is a whole GPU out of service until they are killed
        held_whole = [g for g in per_gpu if not any(g in e.clean for e in engines)]
        pids = sorted({p.pid for _, p in members})
        evidence = [f"pid {_describe(p, g)}, parent {p.parent_pid or '?'} gone" for g, p in sorted(members, key=lambda m: (m[0], m[1].pid))]  # fmt: skip
        evidence.append(engine.spread_evidence(tokens) if engine else f"no running engine on {_gpu_list(per_gpu)}: the whole GPU serves nothing until they are killed")  # fmt: skip
        described = "; ".join(_describe(p, g, pid=False) for g, p in members[:4])
        found.append(
            Finding(
                rule=Rule.ORPHAN_WORKER,
                severity=Severity.WARNING,
                engine_id=engine.id if engine else None,
                summary=f"{len(pids)} orphaned {kind or 'engine'} worker(s) hold {gib(sum(per_gpu.values()))} on {_gpu_list(per_gpu)}",
                gpus=tuple(sorted(per_gpu)),
                ranks=engine.labels() if engine else (),
                bytes=max(per_gpu.values()),
                fix="kill " + " ".join(map(str, pids)) + f" ({described}; server gone)"
                + (engine.restart_words(costs_now=cost.term_tokens is not None) if engine else ""),
                evidence=tuple(evidence),
                **cost.fields(),
                gain_needs_restart=engine is not None,
                pids=tuple(pids),
                whole_gpus=len(held_whole),
            )
        )
    return found
