"""The incident's answer in one sentence a person can paste into a ticket, from the worst finding.

"GPU 3 (rank TP3 of sglang:41000) loses 128,660 tokens to pid 4242 (python, 6.00 GiB, started 2d
ago) — stop it, then restart sglang:41000 to recover them; or keep it and restart with
--mem-fraction-static 0.83 to win back 22,750 tokens per rank". Every figure is the finding's (the waterfall's
term, the pid's bytes, the alternative `keep_running` priced): the sentence only arranges them. The
dashboard's top line and `kvtop diagnose` print the same sentence; where a terminal is too narrow for
it, the line takes the longest of its shorter forms that fits (`IncidentAnswer.within`), each the
same facts with fewer words, and the findings pane shows it whole.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from kvtop.domain.cluster_findings import ExportedCounts
from kvtop.domain.diagnose_findings import (
    SEVERITY_ORDER,
    AlternativeLimit,
    Finding,
    FlagAlternative,
    Rule,
    Severity,
)
from kvtop.domain.node import EngineView, NodeSnapshot, RankView
from kvtop.domain.observe import GpuProcess
from kvtop.domain.wording import a_gib, gib, percent, signed, whole_gpus

#: What the sentence says when no finding is a fault (advice aside).
ALL_CLEAR = "nothing lost to a fault: every rank holds what its plan predicts"
#: How far an engine's own token figure may sit from kvtop's prediction (with every measured cause) before the
#: answer says the plan is off rather than that every rank holds it (issue #27's target: within 2 %).
PLAN_MISS_FRACTION = 0.02
#: ...and when no engine there has a plan (none runs, or none has a ledger: a GPU-only node of the cluster read
#: from DCGM, an engine seen only through its own metrics, a node between engines): saying every rank holds its plan would claim a check never made.
NO_ENGINE = "no engine rank here has a plan to check it against: nothing was diagnosed"
_PROCESS_RULES = (Rule.CO_TENANT, Rule.ORPHAN_WORKER)


class IncidentAnswer(BaseModel):
    """The answer (`sentence`, the first form) and its forms with fewer words; `severity` None when all is clear."""

    model_config = ConfigDict(frozen=True)

    severity: Severity | None
    forms: tuple[str, ...] = Field(min_length=1)

    @property
    def sentence(self) -> str:
        """The whole answer, as `diagnose` prints it."""
        return self.forms[0]

    def within(self, width: int) -> str:
        """The longest form of at most `width` characters (the first of equal ones); the shortest cut with '…' when
        none fits. By length, not by place: a form with fewer words is not always shorter (a long `--flag` fix)."""
        fitting = [form for form in self.forms if len(form) <= width]
        if fitting:
            return max(fitting, key=len)
        shortest = min(self.forms, key=len)
        return shortest[: max(width - 1, 0)] + "…" if width > 0 else ""


def incident(
    snapshot: NodeSnapshot, findings: Sequence[Finding], exported: ExportedCounts | None = None
) -> IncidentAnswer:
    """The worst fault's answer (the first of the worst severity), or ALL_CLEAR when nothing is wrong
    (NO_ENGINE when no engine there has a plan to be wrong against: none runs, or none has a ledger). Where none
    has a plan and the node was read through Prometheus, what its own `kvtop export` counted (`exported`), as the
    findings pane lists it."""
    faults = [f for f in findings if f.severity is not Severity.INFO]
    if not faults:
        # an engine with no ledger has no plan its ranks were checked against
        planned = any(view.ledger is not None for view in snapshot.engines)
        if not planned:
            if exported is not None:
                return IncidentAnswer(severity=exported.worst, forms=exported.forms())
            return IncidentAnswer(severity=None, forms=(NO_ENGINE,))
        miss = _plan_miss(snapshot)
        return IncidentAnswer(severity=None, forms=(ALL_CLEAR,) if miss is None else _miss_forms(*miss))
    worst = min(faults, key=lambda f: SEVERITY_ORDER[f.severity])
    return IncidentAnswer(severity=worst.severity, forms=_forms(snapshot, worst))


def _plan_miss(snapshot: NodeSnapshot) -> tuple[EngineView, RankView] | None:
    """The rank whose engine figure is furthest from kvtop's prediction with every measured cause, where that is
    more than `PLAN_MISS_FRACTION` of it (a token gap no byte names: the plan is off, not the node)."""
    misses = [
        (view, rank)
        for view in snapshot.engines
        for rank in view.ranks
        if rank.capacity is not None and abs(rank.capacity.plan_miss_fraction) > PLAN_MISS_FRACTION
    ]
    return max(misses, key=_miss_size) if misses else None


def _miss_size(miss: tuple[EngineView, RankView]) -> float:
    capacity = miss[1].capacity
    return abs(capacity.plan_miss_fraction) if capacity is not None else 0.0


def _assumed(view: EngineView) -> str:
    """'; its plan assumes a 3.00 GiB CUDA context and a 2.50 GiB runtime reserve' where it does (no engine
    figure measured them: the likeliest place of the miss), else ''."""
    figures = view.ledger.measured.calibrated if view.ledger is not None else None
    if figures is None:
        return ""
    terms = []
    if figures.context_source == "assumed" and figures.context_bytes:
        terms.append(f"{a_gib(figures.context_bytes)} CUDA context")
    if figures.non_kv_source == "assumed" and figures.non_kv_bytes:
        terms.append(f"{a_gib(figures.non_kv_bytes)} runtime reserve")
    return f"; its plan assumes {' and '.join(terms)}" if terms else ""


def _miss_forms(view: EngineView, rank: RankView) -> tuple[str, ...]:
    """'nothing lost to a fault, but kvtop's plan is off: GPU 0 (trtllm:43000) holds 1,448,640 tokens, +97,664
    (+7.2%) against its plan, and no cause kvtop can name (engine vs prediction); its plan assumes …', then
    shorter forms."""
    waterfall = rank.capacity
    assert waterfall is not None  # only a rank with a waterfall misses its plan
    share = percent(waterfall.plan_miss_fraction, 1, sign=True)
    gap = f"{signed(waterfall.actual_tokens - waterfall.explained_tokens)} ({share})"
    where = f"GPU {rank.gpu_index} ({rank.engine_id})"
    whole = (
        f"nothing lost to a fault, but kvtop's plan is off: {where} holds {waterfall.actual_tokens:,} tokens, "
        f"{gap} against its plan, and no cause kvtop can name (engine vs prediction)"
    )
    return _unique(
        whole + _assumed(view),
        whole,
        f"no fault, but kvtop's plan is off: {where} {gap} tokens against its plan",
        f"no fault; plan off {gap}",
    )


def incident_answer(snapshot: NodeSnapshot, findings: Sequence[Finding]) -> tuple[Severity | None, str]:
    """(the severity of the worst fault, the sentence); (None, ALL_CLEAR) when nothing is wrong."""
    answer = incident(snapshot, findings)
    return answer.severity, answer.sentence


def _forms(snapshot: NodeSnapshot, finding: Finding) -> tuple[str, ...]:
    held = [p for pid in finding.pids if (p := _process(snapshot, pid)) is not None]
    if not (finding.rule in _PROCESS_RULES and held and (finding.tokens or finding.whole_gpus)):
        # the finding's own words: its summary names the place and the loss
        alternative = f"; or {_keep_it(finding.alternative, 'it')}" if finding.alternative else ""
        return _unique(f"{finding.summary} — {finding.fix}{alternative}", f"{finding.summary} — {finding.fix}", finding.summary)
    many = len(held) > 1
    it = "them" if many else "it"
    verb = "stop" if finding.rule is Rule.CO_TENANT else "kill"
    now = snapshot.observation.taken_at
    where, gpu = _where(snapshot, finding), _gpu(finding)
    who = ", ".join(_describe(p, now) for p in held)
    who_brief = ", ".join(_describe(p, None) for p in held)
    who_named = ", ".join(f"pid {p.pid} ({p.title or p.name or '?'})" for p in held)
    pids = ("pids " if many else "pid ") + ", ".join(str(p.pid) for p in held)
    hold = "hold" if many else "holds"
    restart = f", then restart {finding.engine_id}" if finding.gain_needs_restart else ""
    recover = f"{restart} to recover them" if restart else ""
    alternative, brief_alternative = "", ""
    if finding.alternative is not None:
        alternative = f"; or {_keep_it(finding.alternative, it)}"
        brief_alternative = f"; or {finding.alternative.fix}"
    if finding.tokens:
        # the cause's cost (the finding's waterfall term), said as what the processes take: not the rank's whole gap
        # against its clean plan (the GPU row's figure), which also holds kvtop's own miss (engine vs prediction)
        loses = f"loses {finding.tokens:,} tokens to"

        def full(holders: str, then: str) -> str:
            return f"{where} {loses} {holders} — {verb} {it}{then}"

        def brief(holders: str, then: str) -> str:
            return f"{gpu} {loses} {holders}: {verb} {it}{then}"

        last: tuple[str, ...] = (f"{gpu} {loses} {pids}",)
    else:
        # no engine's tokens price it: the GPU itself is lost
        loss = f"is {whole_gpus(finding.whole_gpus)}"

        def full(holders: str, then: str) -> str:
            return f"{where} {loss}: {holders} {hold} it — {verb} {it}{then}"

        def brief(holders: str, then: str) -> str:
            return f"{gpu} {loss}: {verb} {holders}{then}"

        last = ()
    # each form the same facts in fewer words than the one before
    return _unique(
        full(who, f"{recover}{alternative}"),
        full(who_brief, f"{recover}{alternative}"),
        full(who_brief, f"{restart}{brief_alternative}"),
        full(who_brief, restart),
        brief(who_brief, f"{restart}{brief_alternative}"),
        brief(who_brief, restart),
        brief(who_named, restart),
        brief(pids, restart),
        brief(pids, ""),
        *last,
    )


def _keep_it(alternative: FlagAlternative, it: str) -> str:
    """'keep it and restart with --mem-fraction-static 0.83 to win back 22,750 of them'."""
    head = f"keep {it} and restart with {alternative.fix}"
    if not alternative.restart_tokens:
        return f"{head}: {alternative.tokens:,} tokens per rank (as launched it would not start)"
    if alternative.limit is AlternativeLimit.REACHED:
        return f"{head} for the same +{alternative.gain_tokens:,} tokens per rank"
    return f"{head} to win back {alternative.gain_tokens:,} tokens per rank"


def _unique(*forms: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(forms))


def _gpu(finding: Finding) -> str:
    return f"GPU {finding.gpus[0]}" if finding.gpus else "the node"


def _where(snapshot: NodeSnapshot, finding: Finding) -> str:
    """'GPU 3 (rank TP3 of sglang:41000)', 'GPU 5', or 'the node'."""
    if not finding.gpus:
        return "the node"
    gpu = finding.gpus[0]
    rank = snapshot.rank_on_gpu(gpu)
    if rank is None:
        return f"GPU {gpu}"
    label = " ".join(
        [*([f"DP{rank.rank.dp}"] if rank.rank.dp else []), *([f"PP{rank.rank.pp}"] if rank.rank.pp else []), f"TP{rank.rank.tp}"]
    )  # fmt: skip
    return f"GPU {gpu} (rank {label} of {rank.engine_id})"


def _process(snapshot: NodeSnapshot, pid: int) -> GpuProcess | None:
    return next((p for gpu in snapshot.observation.gpus for p in gpu.processes if p.pid == pid), None)


def _describe(process: GpuProcess, now: float | None) -> str:
    """'pid 4242 (python, 6.00 GiB, started 2d ago)'; without `now`, no age."""
    facts = [process.title or process.name or "?", gib(process.used_bytes or 0)]
    if now is not None and process.start_time is not None and now >= process.start_time:
        facts.append(f"started {age(now - process.start_time)} ago")
    return f"pid {process.pid} ({', '.join(facts)})"


def age(seconds: float) -> str:
    """'45s', '12m', '5h', '2d': the largest whole unit."""
    for unit, size in (("d", 86_400), ("h", 3_600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"
