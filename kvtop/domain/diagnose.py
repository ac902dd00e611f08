"""diagnose(snapshot) → where each rank's missing KV capacity went, worst first, each with its fix.

Pure rules over one `NodeSnapshot` (observed bytes beside the predicted ledger). Token costs
come from the planner: the engine's budget is re-solved with the cause removed, and how an
engine spreads a loss is the engine's own: SGLang sizes every rank by the least free GPU (a
co-tenant on one GPU costs every rank), vLLM budgets a fraction of *total* memory and instead
refuses to start when free memory is short. "Restart" figures price what the GPUs hold now:
free memory plus the rank's own worker, less a fresh CUDA context.
"""

from __future__ import annotations

from collections.abc import Iterable

from kvtop.domain.capacity import CapacityCause
from kvtop.domain.diagnose_engine import NO_COST, EngineOnNode
from kvtop.domain.diagnose_findings import SEVERITY_ORDER, Finding, Rule, Severity, Thresholds, rank_label
from kvtop.domain.diagnose_pressure import host_tier_findings, pressure_findings
from kvtop.domain.diagnose_rules import ledger_findings, weights_cause
from kvtop.domain.keep_running import flag_alternative
from kvtop.domain.ledger import Ledger
from kvtop.domain.node import NodeSnapshot
from kvtop.domain.observe import GpuProcess, GpuState, ProcessRole
from kvtop.domain.waterfall import held_before_start
from kvtop.domain.wording import GIB, MIB, byte_count, counted, gib, mib, percent

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
        found += [f for f in (_no_prediction(e),) if f]
        found += _co_tenants(e, thresholds)
        found += pressure_findings(e) + host_tier_findings(e, snapshot.observation.host_memory)
        found += [f for f in (_imbalance(e, thresholds), _weights(e, thresholds), _reserve(e, thresholds), _restart(e),
                              _unexplained(e, thresholds)) if f]  # fmt: skip
        basis = (
            e.view.explained or e.ledger
        )  # advice is priced on the engine as measured, as the planner does
        found += [e.relabel(f) for f in ledger_findings(basis, thresholds)] if basis else []
    return sort_findings(found)


def _no_prediction(e: EngineOnNode) -> Finding | None:
    """`no_prediction`: an engine without a plan (its model could not be loaded, its launch not read) is
    named as unchecked, so no view can read the absence of findings as "every rank holds its plan"."""
    if e.ledger is not None:
        return None
    why = e.view.ledger_error or "no prediction (the reason was not recorded)"
    return e.finding(
        rule=Rule.NO_PREDICTION, severity=Severity.WARNING,
        summary=f"{e.id} is not checked: {why}",
        fix="fix what the reason names (a model kvtop cannot load: a local folder with its config.json, or a hub id "
        f"it can reach); until then kvtop cannot say whether {e.id}'s ranks lost capacity",
        evidence=(f"{counted(len(e.ranks), 'rank')} observed with nothing predicted to compare them with",),
    )  # fmt: skip


def _describe(process: GpuProcess, gpu: int, *, pid: bool = True) -> str:
    """'4242 (python, user ada, 6.00 GiB on GPU 3)'."""
    user = f", user {process.user}" if process.user else ""
    facts = f"{process.title or process.name or '?'}{user}, {gib(process.used_bytes or 0)} on GPU {gpu}"
    return f"{process.pid} ({facts})" if pid else facts


def _gpu_list(gpus: Iterable[int]) -> str:
    ordered = sorted(set(gpus))
    return ("GPU " if len(ordered) == 1 else "GPUs ") + ", ".join(map(str, ordered))


def _co_tenants(e: EngineOnNode, thresholds: Thresholds) -> list[Finding]:
    """`co_tenant` / `unattributed_bytes`: processes of no engine (or another engine) on this engine's GPUs."""
    found = []
    for g, gpu in sorted(e.gpus.items()):
        others = [p for p in gpu.processes if p.engine_id != e.id and p.role in _OTHERS]
        held = sum(p.used_bytes or 0 for p in others)
        hidden = e.outside(g, (ProcessRole.UNATTRIBUTED,))
        if held:
            cost = e.costed(CapacityCause.OTHER_PROCESSES, g, {g: held})
            tokens, gain = cost.tokens, cost.gain_tokens
            evidence = [f"pid {_describe(p, g)} next to {e.label(g)}" for p in others]
            if cost.term_tokens is not None:
                evidence.append(e.spread_evidence(tokens))
            elif not all(held_before_start(p, e.started_at) for p in others):
                evidence.append(
                    f"it came after the engine started: it costs nothing now; a restart would lose {gain:,} tokens per rank to it"
                )
            else:
                evidence.append(e.spread_evidence(gain))
                evidence.append(
                    f"the engine's budget did not shrink for it: it costs nothing now; a restart would lose {gain:,} tokens per rank to it"
                )
            if (line := e.waterfall_evidence()) is not None:
                evidence.append(line)
            pids = ("stop pid " if len(others) == 1 else "stop pids ") + ", ".join(
                _describe(p, g) for p in others
            )
            pids += e.restart_words(costs_now=cost.term_tokens is not None)
            alternative = flag_alternative(e, tuple(p.pid for p in others), {g: held}, thresholds) if tokens or gain else None
            found.append(
                e.finding(
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
            cost = e.costed(CapacityCause.HIDDEN_PROCESSES, g, {g: hidden})
            found.append(
                e.finding(
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
                        e.spread_evidence(cost.tokens),
                    ),
                    **cost.fields(),
                )
            )
    return found

def _imbalance(e: EngineOnNode, thresholds: Thresholds) -> Finding | None:
    """`rank_imbalance` (engines sized by the least free GPU): one rank has less memory than the others even with other processes gone."""
    least_free_sizes = e.rules.sizes_every_rank_from_least_free
    if e.ledger is None or not least_free_sizes or len(e.clean) < 2:
        return None
    order = sorted(e.clean, key=lambda g: e.clean[g])
    tight, gap = order[0], e.clean[order[1]] - e.clean[order[0]]
    if e.clean[order[-1]] - e.clean[tight] <= thresholds.imbalance_bytes or gap <= 0:
        return None
    tokens = e.restart_capacity({**e.clean, tight: e.clean[order[1]]}) - e.restart_capacity(e.clean)  # fmt: skip
    gpu = e.gpus[tight]
    extra = [p for p in gpu.processes if p.engine_id == e.id and p.pid != e.ranks[tight].pid]
    if len({g.total_bytes for g in e.gpus.values() if g.total_bytes}) > 1:
        fix = f"run every rank on GPUs of one size (GPU {tight} has {gib(gpu.total_bytes or 0)})"
    elif extra:
        fix = f"keep other ranks off GPU {tight}: pids {', '.join(str(p.pid) for p in extra)} of {e.id} hold {gib(sum(p.used_bytes or 0 for p in extra))} there"
    else:
        fix = f"find what holds {gib(gap)} on GPU {tight} outside every listed process (leaked or driver memory), then restart"
    return e.finding(
        rule="rank_imbalance", severity=Severity.WARNING, gpus=(tight,), bytes=gap, tokens=tokens, fix=fix, gain_tokens=tokens,
        summary=f"GPU {tight} ({e.label(tight)}) is the tightest rank: {gib(gap)} less than the next, −{tokens:,} tokens on every rank",
        evidence=(*(f"GPU {g}: {gib(e.clean[g])} free at a restart without other processes" for g in order[:3]), e.spread_evidence(tokens)),
    )  # fmt: skip

def _weights(e: EngineOnNode, thresholds: Thresholds) -> Finding | None:
    """`weights_larger_than_predicted`: the engine reports more resident weights than the ledger predicts."""
    reported = [r.observed.weights_bytes for r in e.ranks.values() if r.observed.weights_bytes]
    if e.ledger is None or e.replay is None or not reported:
        return None
    observed, predicted = max(reported), e.ledger.weights_bytes
    excess, base = observed - predicted, e.replay.weights_bytes
    if excess <= thresholds.weights_excess_fraction * predicted:
        return None
    term = e.term(CapacityCause.WEIGHTS)
    tokens = (
        -term.tokens
        if term
        else max(
            0,
            e.replay.capacity(weights_shift=predicted - base)
            - e.replay.capacity(weights_shift=observed - base),
        )
    )
    cause, fix = weights_cause(e.ledger, e.replay, observed, excess)
    return e.finding(
        rule=Rule.WEIGHTS_LARGER_THAN_PREDICTED,
        severity=Severity.WARNING,
        bytes=excess,
        tokens=tokens,
        fix=fix,
        gain_tokens=tokens,
        cause=CapacityCause.WEIGHTS,
        term_tokens=term.tokens if term else None,
        summary=(
            f"weights take {gib(observed)} per rank, {gib(excess)} ({percent(excess / predicted, sign=True)}) more "
            "than predicted"
        ),
        evidence=(
            f"engine reports {gib(observed)} of weights per rank; kvtop predicts {gib(predicted)} for {e.ledger.model.name}",
            cause,
        ),
    )

def _reserve(e: EngineOnNode, thresholds: Thresholds) -> Finding | None:
    """`reserve_larger_than_expected`: a runtime reserve larger than the engine's automatic one."""
    if e.ledger is None or e.replay is None:
        return None
    finding = e.node_diagnosis.reserve_finding(e, thresholds)
    term = e.term(CapacityCause.RUNTIME_RESERVE)
    if finding is None or term is None:
        return finding
    update = {"tokens": -term.tokens, "cause": CapacityCause.RUNTIME_RESERVE, "term_tokens": term.tokens}
    return finding.model_copy(update=update)

def _restart(e: EngineOnNode) -> Finding | None:
    """`restart_will_not_fit`: would the engine start again on the GPUs as they are now?"""
    if e.ledger is None or e.replay is None or not e.clean:
        return None
    return e.node_diagnosis.restart_finding(e)

def _unexplained(e: EngineOnNode, thresholds: Thresholds) -> Finding | None:
    """`unexplained_bytes`: worker bytes the ledger does not account for, shown rather than hidden."""
    if e.ledger is None:
        return None
    weights = [r.observed.weights_bytes for r in e.ranks.values() if r.observed.weights_bytes]
    excess = (
        max(0, max(weights) - e.ledger.weights_bytes) if weights else 0
    )  # weights_larger_than_predicted names it already
    over = {
        g: u - excess
        for g, r in e.ranks.items()
        if (u := r.unexplained_bytes) is not None and u - excess > thresholds.unexplained_bytes
    }
    if not over:
        return None
    worst = max(over.values())
    tokens = worst // e.ledger.kv_bytes_per_token
    return e.finding(
        rule="unexplained_bytes", severity=Severity.WARNING, gpus=tuple(sorted(over)), ranks=e.labels(over), bytes=worst, tokens=tokens,
        summary=f"{e.id} workers hold up to {gib(worst)} per rank that the ledger does not explain",
        fix="attach the engine's startup log (kvtop diagnose --engine-log PATH) to attribute them",
        evidence=(*(f"GPU {g}: worker {e.ranks[g].pid} holds {gib(e.ranks[g].observed.process_bytes or 0)}, "
                    f"{gib(u)} above weights + KV + reserve + context" for g, u in sorted(over.items())),
                  f"worth {tokens:,} tokens at {e.ledger.kv_bytes_per_token:,} B per token"),
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
            evidence=(f"NVML lists no process on GPU {gpu.index}; {_in_use(gpu.used_bytes or 0)}",),
        ))  # fmt: skip
    return found


def _in_use(used_bytes: int) -> str:
    """'no memory in use', '3 MiB in use', '1.25 GiB in use': what an idle GPU holds, never '0.00 GiB' (an idle
    GPU's NVML reads 0 B, or the few MiB a display or a persistence daemon keeps)."""
    if not used_bytes:
        return "no memory in use"
    if used_bytes < MIB:
        return f"{byte_count(used_bytes)} in use"
    return f"{mib(used_bytes) if used_bytes < GIB // 100 else gib(used_bytes)} in use"


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
        workers = counted(len(pids), f"orphaned {kind or 'engine'} worker") + (" holds" if len(pids) == 1 else " hold")
        evidence = [f"pid {_describe(p, g)}, parent {p.parent_pid or '?'} gone" for g, p in sorted(members, key=lambda m: (m[0], m[1].pid))]  # fmt: skip
        evidence.append(engine.spread_evidence(tokens) if engine else f"no running engine on {_gpu_list(per_gpu)}: the whole GPU serves nothing until they are killed")  # fmt: skip
        described = "; ".join(_describe(p, g, pid=False) for g, p in members[:4])
        found.append(
            Finding(
                rule=Rule.ORPHAN_WORKER,
                severity=Severity.WARNING,
                engine_id=engine.id if engine else None,
                summary=f"{workers} {gib(sum(per_gpu.values()))} on {_gpu_list(per_gpu)}",
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
