"""diagnose(snapshot) → where each rank's missing KV capacity went, worst first, each with its fix.

Pure rules over one `NodeSnapshot` (observed bytes beside the predicted ledger). Token costs
come from the planner: the engine's budget is re-solved with the cause removed, and how an
engine spreads a loss is the engine's own: SGLang sizes every rank by the least free GPU (a
co-tenant on one GPU costs every rank), vLLM budgets a fraction of *total* memory and instead
refuses to start when free memory is short. "Restart" figures price what the GPUs hold now:
free memory plus the rank's own worker, less a fresh CUDA context.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from kvtop.domain.diagnose_rules import (
    SEVERITY_ORDER,
    Finding,
    Replay,
    Severity,
    Thresholds,
    gib,
    ledger_findings,
    rank_label,
    weights_cause,
)
from kvtop.domain.engines.base import DEFAULT_CONTEXT_BYTES
from kvtop.domain.ledger import Ledger
from kvtop.domain.node import EngineView, NodeSnapshot
from kvtop.domain.observe import GpuObservation, GpuProcess, GpuState, ProcessRole

__all__ = ["Finding", "Severity", "Thresholds", "diagnose", "diagnose_ledger", "sort_findings"]

DEFAULT_THRESHOLDS = Thresholds()
SGLANG_BALANCE_RATIO = 0.9  # `_check_tp_memory_balance`: pre-load min < 0.9 × local free warns
_OTHERS = (ProcessRole.CO_TENANT, ProcessRole.ENGINE_WORKER, ProcessRole.ENGINE_SERVER)


def sort_findings(findings: Iterable[Finding]) -> tuple[Finding, ...]:
    """Worst first: severity, then tokens lost, then rule and GPUs for a stable order."""
    return tuple(sorted(findings, key=lambda f: (SEVERITY_ORDER[f.severity], -f.tokens, f.rule, f.gpus)))


def diagnose_ledger(ledger: Ledger, *, thresholds: Thresholds = DEFAULT_THRESHOLDS) -> tuple[Finding, ...]:
    """The rules a plan or a startup log supports alone (FP8 KV, TP vs heads, MLA, req_to_token, state, hybrid)."""
    return sort_findings(ledger_findings(ledger, thresholds))


def diagnose(snapshot: NodeSnapshot, *, thresholds: Thresholds = DEFAULT_THRESHOLDS) -> tuple[Finding, ...]:
    """Every finding on the node, worst first."""
    engines = [_Engine(snapshot, view) for view in snapshot.engines]
    found: list[Finding] = [*_lost_gpus(snapshot), *_orphans(snapshot, engines)]
    for e in engines:
        found += e.co_tenants(thresholds)
        found += [f for f in (e.imbalance(thresholds), e.weights(thresholds), e.reserve(thresholds), e.restart(), e.unexplained(thresholds)) if f]  # fmt: skip
        found += [e.relabel(f) for f in ledger_findings(e.ledger, thresholds)] if e.ledger else []
    return sort_findings(found)


def free_before_load_now(snapshot: NodeSnapshot, view: EngineView) -> int | None:
    """SGLang's free memory before weight load if this engine restarted now (least over its GPUs).

    A ledger solved with a measured figure (a startup log) keeps it; otherwise its assumption
    less the most that other processes (co-tenants, orphans) hold on one of its GPUs now, so a
    healthy node plans at the engine's own capacity and a co-tenant's bytes cost what diagnose
    says they cost. None without a ledger.
    """
    if view.ledger is None:
        return None
    if view.ledger.measured.free_before_load_bytes is not None:
        return view.ledger.measured.free_before_load_bytes
    engine = _Engine(snapshot, view)
    held = max((engine.outside(g) for g in engine.gpus), default=0)
    return Replay(view.ledger).free_before_load_bytes - held


def _describe(process: GpuProcess, gpu: int, *, pid: bool = True) -> str:
    """'4242 (python, user ada, 6.00 GiB on GPU 3)'."""
    user = f", user {process.user}" if process.user else ""
    facts = f"{process.title or process.name or '?'}{user}, {gib(process.used_bytes or 0)} on GPU {gpu}"
    return f"{process.pid} ({facts})" if pid else facts


def _gpu_list(gpus: Iterable[int]) -> str:
    ordered = sorted(set(gpus))
    return ("GPU " if len(ordered) == 1 else "GPUs ") + ", ".join(map(str, ordered))


class _Engine:
    """One engine as the node rules see it: its ranks by GPU, what else each GPU holds, the planner."""

    def __init__(self, snapshot: NodeSnapshot, view: EngineView) -> None:
        self.view, self.id, self.ledger = view, view.engine.engine_id, view.ledger
        self.replay = Replay(view.ledger) if view.ledger else None
        self.settings = view.engine.settings or (view.ledger.settings if view.ledger else None)
        self.ranks = {rank.gpu_index: rank for rank in view.ranks}
        self.gpus: dict[int, GpuObservation] = {
            g: gpu for g in self.ranks if (gpu := snapshot.observation.gpu(g))
        }
        total = view.ledger.gpu_total_bytes if view.ledger else 0
        self.clean: dict[int, int] = {}  # free at a restart if nothing but this engine were on the GPU
        for g, gpu in self.gpus.items():
            if gpu.free_bytes is None:
                self.clean[g] = (gpu.total_bytes or total) - DEFAULT_CONTEXT_BYTES
            else:
                mine = self.ranks[g].observed.process_bytes or 0
                self.clean[g] = gpu.free_bytes + mine + self.outside(g) - DEFAULT_CONTEXT_BYTES

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

    def finding(self, **fields: object) -> Finding:
        """A finding of this engine (every rank unless `ranks` says otherwise)."""
        return Finding.model_validate({"engine_id": self.id, "gpus": tuple(sorted(self.ranks)), "ranks": self.labels(), **fields})  # fmt: skip

    # --- the planner at a restart -------------------------------------------------------------

    def restart_capacity(self, free: Mapping[int, int]) -> int:
        """Tokens per rank a restart gets with `free` bytes free on each GPU, by the engine's own rule."""
        if self.replay is None or self.ledger is None or not free:
            return 0
        least = min(free.values())
        if self.ledger.settings.engine == "sglang":
            return self.replay.capacity(free_shift=least - self.replay.free_before_load_bytes)
        if least >= math.ceil(self.ledger.gpu_total_bytes * self.ledger.engine.memory_fraction):
            return self.replay.capacity()
        fitting = self.fitting_utilization(least)
        return self.replay.capacity(self.ledger.settings.model_copy(update={"gpu_memory_utilization": fitting})) if fitting > 0 else 0  # fmt: skip

    def fitting_utilization(self, least_free: int) -> float:
        """vLLM: the largest --gpu-memory-utilization (2 decimals) that passes the startup check."""
        assert self.ledger is not None
        return min(self.ledger.engine.memory_fraction, math.floor(least_free / self.ledger.gpu_total_bytes * 100) / 100)  # fmt: skip

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
        util = self.ledger.engine.memory_fraction
        if self.ledger.settings.engine == "sglang":
            return (f"SGLang sizes every rank by the least free GPU: −{tokens:,} tokens on each of {len(self.ranks)} ranks "
                    f"(the reserve pre-load × (1 − {util:g}) shrinks with it)")  # fmt: skip
        return (f"vLLM budgets {util:g} × total, whatever is free; a restart needs "
                f"{gib(math.ceil(self.ledger.gpu_total_bytes * util))} free on every GPU")  # fmt: skip

    # --- rules ---------------------------------------------------------------------------------

    def co_tenants(self, thresholds: Thresholds) -> list[Finding]:
        """Rule 1: processes of no engine (or another engine) on this engine's GPUs; unseen pids apart."""
        found = []
        for g, gpu in sorted(self.gpus.items()):
            others = [p for p in gpu.processes if p.engine_id != self.id and p.role in _OTHERS]
            held, hidden = (
                sum(p.used_bytes or 0 for p in others),
                self.outside(g, (ProcessRole.UNATTRIBUTED,)),
            )
            if held:
                tokens, gain = self.price({g: held})
                evidence = [f"pid {_describe(p, g)} next to {self.label(g)}" for p in others] + [self.spread_evidence(tokens)]  # fmt: skip
                live = self.view.engine.live.token_capacity
                if live is not None and self.settings and self.settings.engine == "sglang":
                    evidence.append(f"engine reports {live:,} tokens per rank; a restart without it: {self.restart_capacity({**self.now(), g: self.now()[g] + held}):,}")  # fmt: skip
                found.append(self.finding(
                    rule="co_tenant", severity=Severity.WARNING if tokens or gain else Severity.INFO,
                    summary=f"{gib(held)} of other processes on GPU {g} cost {tokens:,} tokens per rank",
                    gpus=(g,), bytes=held, tokens=tokens, gain_tokens=gain, evidence=tuple(evidence),
                    gain_needs_restart=True, pids=tuple(p.pid for p in others),
                    fix=("stop pid " if len(others) == 1 else "stop pids ") + ", ".join(_describe(p, g) for p in others),
                ))  # fmt: skip
            if hidden >= thresholds.unexplained_bytes:
                tokens, gain = self.price({g: hidden})
                found.append(self.finding(
                    rule="unattributed_bytes", severity=Severity.WARNING, gpus=(g,), bytes=hidden, tokens=tokens, gain_tokens=gain,
                    summary=f"{gib(hidden)} on GPU {g} held by processes kvtop cannot see",
                    fix=f"run kvtop in the host PID namespace (e.g. docker run --pid=host) to name what holds {gib(hidden)} on GPU {g}",
                    evidence=("NVML lists pids of another PID namespace (a container) that kvtop cannot read", self.spread_evidence(tokens)),
                ))  # fmt: skip
        return found

    def imbalance(self, thresholds: Thresholds) -> Finding | None:
        """Rule 3 (SGLang): one rank has less memory than the others even with other processes gone."""
        if self.ledger is None or self.ledger.settings.engine != "sglang" or len(self.clean) < 2:
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
        """Rule 4: the engine reports more resident weights than the ledger predicts."""
        reported = [r.observed.weights_bytes for r in self.ranks.values() if r.observed.weights_bytes]
        if self.ledger is None or self.replay is None or not reported:
            return None
        observed, predicted = max(reported), self.ledger.weights_bytes
        excess, base = observed - predicted, self.replay.weights_bytes
        if excess <= thresholds.weights_excess_fraction * predicted:
            return None
        tokens = max(0, self.replay.capacity(weights_shift=predicted - base) - self.replay.capacity(weights_shift=observed - base))  # fmt: skip
        cause, fix = weights_cause(self.ledger, self.replay, observed, excess)
        return self.finding(
            rule="weights_larger_than_predicted", severity=Severity.WARNING, bytes=excess, tokens=tokens, fix=fix, gain_tokens=tokens,
            summary=f"weights take {gib(observed)} per rank, {gib(excess)} (+{excess / predicted:.0%}) more than predicted",
            evidence=(f"engine reports {gib(observed)} of weights per rank; kvtop predicts {gib(predicted)} for {self.ledger.model.name}", cause),
        )  # fmt: skip

    def reserve(self, thresholds: Thresholds) -> Finding | None:
        """Rule 5: a runtime reserve larger than the engine's automatic one."""
        if self.ledger is None or self.replay is None:
            return None
        return (_sglang_reserve if self.ledger.settings.engine == "sglang" else _vllm_reserve)(self, thresholds)  # fmt: skip

    def restart(self) -> Finding | None:
        """Rule 12: would the engine start again on the GPUs as they are now?"""
        if self.ledger is None or self.replay is None or not self.clean:
            return None
        now = self.now()
        tight, loose = min(now, key=lambda g: now[g]), max(now, key=lambda g: now[g])
        total, capacity, fraction = (self.ledger.gpu_total_bytes, self.ledger.token_capacity, self.ledger.engine.memory_fraction)  # fmt: skip
        if self.ledger.settings.engine == "vllm":
            needed = math.ceil(total * fraction)
            if now[tight] >= needed:
                return None
            fitting = self.fitting_utilization(now[tight])
            fixed = (self.ledger.settings.model_copy(update={"gpu_memory_utilization": fitting}) if fitting > 0 else None)  # fmt: skip
            gain = self.replay.capacity(fixed) if fixed else 0
            return self.finding(
                rule="restart_will_not_fit", severity=Severity.CRITICAL, gpus=(tight,), bytes=needed - now[tight], tokens=capacity,
                summary=f"a restart of {self.id} fails: GPU {tight} would have {gib(now[tight])} free, vLLM needs {gib(needed)}",
                fix=f"--gpu-memory-utilization {fitting:.2f}" if fixed else f"free {gib(needed - now[tight])} on GPU {tight}",
                gain_tokens=gain, fix_settings=fixed,
                evidence=(f"vLLM: 'Free memory on device ({gib(now[tight])}/{gib(total)}) on startup is less than desired GPU memory utilization ({fraction:g}, {gib(needed)})'",
                          f"at {fitting:.2f}: {gain:,} tokens per rank (now {capacity:,})"),
            )  # fmt: skip
        solved = self.replay.solve(free_shift=now[tight] - self.replay.free_before_load_bytes)
        if solved is not None and not solved.engine.fits:
            held = self.clean[tight] - now[tight]
            return self.finding(
                rule="restart_will_not_fit", severity=Severity.CRITICAL, gpus=(tight,), bytes=solved.engine.shortfall_bytes, tokens=capacity,
                summary=f"a restart of {self.id} leaves no KV memory: GPU {tight} would have {gib(now[tight])} free", gain_tokens=capacity,
                fix=f"free {gib(held)} on GPU {tight} (stop its other processes)" if held else f"free memory on GPU {tight}, or use more GPUs",
                evidence=(f"SGLang: 'Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static={fraction:g}'",),
            )  # fmt: skip
        if now[tight] >= SGLANG_BALANCE_RATIO * now[loose]:
            return None
        tokens = max(0, self.restart_capacity(dict.fromkeys(now, now[loose])) - self.restart_capacity(now))
        return self.finding(
            rule="restart_will_not_fit", severity=Severity.WARNING, gpus=(tight,), bytes=now[loose] - now[tight], tokens=tokens, gain_tokens=tokens,
            summary=f"a restart of {self.id} trips SGLang's balance check: GPU {tight} {gib(now[tight])} free vs GPU {loose} {gib(now[loose])}",
            fix=f"free {gib(now[loose] - now[tight])} on GPU {tight} before restarting",
            evidence=("SGLang: 'The memory capacity is unbalanced. Some GPUs may be occupied by other processes.' "
                      "(a warning; an error with SGLANG_ENABLE_TP_MEMORY_INBALANCE_CHECK)",
                      f"{gib(now[tight])} < {SGLANG_BALANCE_RATIO} × {gib(now[loose])}"),
        )  # fmt: skip

    def unexplained(self, thresholds: Thresholds) -> Finding | None:
        """Rule 13: worker bytes the ledger does not account for, shown rather than hidden."""
        if self.ledger is None:
            return None
        weights = [r.observed.weights_bytes for r in self.ranks.values() if r.observed.weights_bytes]
        excess = max(0, max(weights) - self.ledger.weights_bytes) if weights else 0  # rule 4 names it already
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


def _sglang_reserve(engine: _Engine, thresholds: Thresholds) -> Finding | None:
    assert engine.ledger is not None and engine.replay is not None
    settings, replay = engine.ledger.settings, engine.replay
    used = engine.view.engine.live.memory_fraction or settings.mem_fraction_static
    auto = replay.solve(settings.model_copy(update={"mem_fraction_static": None}))
    if used is None or auto is None or used >= auto.engine.memory_fraction - 0.0005:
        return None
    chosen = settings.model_copy(update={"mem_fraction_static": used})
    fixed = settings.model_copy(update={"mem_fraction_static": auto.engine.memory_fraction})
    lost = replay.capacity(fixed) - replay.capacity(chosen)
    if lost <= 0:
        return None
    pre = replay.free_before_load_bytes
    extra = round(pre * (auto.engine.memory_fraction - used))
    severity = (Severity.WARNING if lost >= thresholds.reserve_loss_fraction * auto.token_capacity else Severity.INFO)  # fmt: skip
    return Finding(
        rule="reserve_larger_than_expected", severity=severity, engine_id=engine.id,
        summary=f"mem_fraction_static {used:g} is below SGLang's automatic {auto.engine.memory_fraction:g}: −{lost:,} tokens per rank",
        gpus=tuple(sorted(engine.ranks)), ranks=engine.labels(), bytes=extra, tokens=lost,
        fix=f"--mem-fraction-static {auto.engine.memory_fraction:g}", gain_tokens=lost,
        evidence=(
            f"reserve pre-load × (1 − f): {gib(pre * (1 - used))} at {used:g} vs {gib(pre * (1 - auto.engine.memory_fraction))} automatic",
            "lower it only for runtime OOMs (activations, CUDA graphs); an OOM at init needs it higher (SGLang #322)",
        ),
        fix_settings=fixed,
    )  # fmt: skip


def _vllm_reserve(engine: _Engine, thresholds: Thresholds) -> Finding | None:
    assert engine.ledger is not None and engine.replay is not None
    pools = [r.observed.kv_pool_bytes for r in engine.ranks.values() if r.observed.kv_pool_bytes]
    if not pools:
        return None
    ledger, replay = engine.ledger, engine.replay
    observed, predicted = min(pools), ledger.engine.kv_budget_bytes
    extra = predicted - observed
    if extra <= thresholds.reserve_excess_bytes:
        return None
    util, total = ledger.engine.memory_fraction, ledger.gpu_total_bytes
    raised = min(0.99, math.ceil((util + extra / total) * 10000) / 10000)
    now = replay.capacity(available_kv_bytes=observed)
    fixed = ledger.settings.model_copy(update={"gpu_memory_utilization": raised})
    more = math.ceil(total * raised) - math.ceil(total * util)
    gain = replay.capacity(fixed, available_kv_bytes=observed + more) - now
    lost = replay.capacity() - now
    return Finding(
        rule="reserve_larger_than_expected", severity=Severity.WARNING, engine_id=engine.id,
        summary=f"vLLM keeps {gib(extra)} more outside the KV cache than predicted: −{lost:,} tokens per rank",
        gpus=tuple(sorted(engine.ranks)), ranks=engine.labels(), bytes=extra, tokens=max(lost, 0),
        fix=f"--gpu-memory-utilization {raised:g}", gain_tokens=max(gain, 0),
        evidence=(
            f"engine KV cache {gib(observed)} per rank; predicted available KV memory {gib(predicted)}",
            f"--gpu-memory-utilization {util:g} acts like {util - extra / total:.4f}: since v0.21 vLLM reserves its CUDA-graph "
            "estimate, which can overshoot (vLLM #45178); VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0 turns it off",
        ),
        fix_settings=fixed,
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
        found.append(Finding(
            rule="gpu_lost", severity=Severity.CRITICAL, engine_id=view.engine.engine_id if view else None,
            summary=f"GPU {gpu.index} is lost" + (f": {view.engine.engine_id} cannot serve" if view else ""),
            gpus=(gpu.index,), ranks=ranks, bytes=ledger.gpu_total_bytes if ledger else 0,
            tokens=ledger.token_capacity if ledger else 0, gain_tokens=ledger.token_capacity if ledger else 0,
            fix=f"reset GPU {gpu.index} (nvidia-smi --gpu-reset -i {gpu.index}) or reboot the node{restart}",
            evidence=(gpu.state_message or "NVML reports the GPU as lost",
                      *((f"{view.engine.engine_id} shows {len(view.ranks)} of {ledger.layout.gpus} ranks",) if view and ledger else ())),
        ))  # fmt: skip
    return found


def _orphans(snapshot: NodeSnapshot, engines: list[_Engine]) -> list[Finding]:
    """Rule 2: engine workers whose server is gone, grouped by their dead server (one kill)."""
    groups: dict[tuple[str | None, int | None], list[tuple[int, GpuProcess]]] = {}
    for gpu, process in snapshot.observation.processes_with_role(ProcessRole.ORPHAN):
        groups.setdefault((process.engine_kind, process.parent_pid), []).append((gpu.index, process))
    found = []
    for (kind, _), members in groups.items():
        per_gpu: dict[int, int] = {}
        for g, process in members:
            per_gpu[g] = per_gpu.get(g, 0) + (process.used_bytes or 0)
        priced = [(e, *e.price({g: b for g, b in per_gpu.items() if g in e.clean})) for e in engines if set(per_gpu) & set(e.clean)]  # fmt: skip
        engine, tokens, gain = max(priced, key=lambda item: item[1]) if priced else (None, 0, 0)
        pids = sorted({p.pid for _, p in members})
        evidence = [f"pid {_describe(p, g)}, parent {p.parent_pid or '?'} gone" for g, p in sorted(members, key=lambda m: (m[0], m[1].pid))]  # fmt: skip
        evidence.append(engine.spread_evidence(tokens) if engine else f"no running engine on {_gpu_list(per_gpu)}: nothing to price in tokens")  # fmt: skip
        found.append(Finding(
            rule="orphan_worker", severity=Severity.WARNING, engine_id=engine.id if engine else None,
            summary=f"{len(pids)} orphaned {kind or 'engine'} worker(s) hold {gib(sum(per_gpu.values()))} on {_gpu_list(per_gpu)}",
            gpus=tuple(sorted(per_gpu)), ranks=engine.labels() if engine else (), bytes=max(per_gpu.values()),
            tokens=tokens, gain_tokens=gain, gain_needs_restart=engine is not None, pids=tuple(pids),
            fix="kill " + " ".join(map(str, pids)) + f" ({'; '.join(_describe(p, g, pid=False) for g, p in members[:4])}; server gone)",
            evidence=tuple(evidence),
        ))  # fmt: skip
    return found
