"""The incident's answer in one sentence a person can paste into a ticket, from the worst finding.

"GPU 3 (rank TP3 of sglang:41000) is 128,660 tokens short: pid 4242 (python, 6.00 GiB, started 2d
ago) holds it — stop it, then restart sglang:41000 to recover them". Every figure is the finding's (the
waterfall's term, the pid's bytes): the sentence only arranges them. The dashboard's top line and
`kvtop diagnose` print the same sentence.
"""

from __future__ import annotations

from collections.abc import Sequence

from kvtop.domain.diagnose_rules import SEVERITY_ORDER, Finding, Rule, Severity
from kvtop.domain.node import NodeSnapshot
from kvtop.domain.observe import GpuProcess
from kvtop.domain.wording import gib, whole_gpus

#: What the sentence says when no finding is a fault (advice aside).
ALL_CLEAR = "nothing lost to a fault: every rank holds what its plan predicts"
_PROCESS_RULES = (Rule.CO_TENANT, Rule.ORPHAN_WORKER)


def incident_answer(snapshot: NodeSnapshot, findings: Sequence[Finding]) -> tuple[Severity | None, str]:
    """(the severity of the worst fault, the sentence); (None, ALL_CLEAR) when nothing is wrong."""
    faults = [f for f in findings if f.severity is not Severity.INFO]
    if not faults:
        return None, ALL_CLEAR
    worst = min(faults, key=lambda f: SEVERITY_ORDER[f.severity])  # the first of the worst severity
    return worst.severity, _sentence(snapshot, worst)


def _sentence(snapshot: NodeSnapshot, finding: Finding) -> str:
    where = _where(snapshot, finding)
    loss = f"is {finding.tokens:,} tokens short" if finding.tokens else f"is {whole_gpus(finding.whole_gpus)}"
    held = [p for pid in finding.pids if (p := _process(snapshot, pid)) is not None]
    if finding.rule in _PROCESS_RULES and held and (finding.tokens or finding.whole_gpus):
        who = ", ".join(_describe(p, snapshot.observation.taken_at) for p in held)
        verb = "stop it" if finding.rule is Rule.CO_TENANT else "kill it"
        verb = verb.replace("it", "them") if len(held) > 1 else verb
        restart = f", then restart {finding.engine_id} to recover them" if finding.gain_needs_restart else ""
        return f"{where} {loss}: {who} {'hold' if len(held) > 1 else 'holds'} it — {verb}{restart}"
    return f"{finding.summary} — {finding.fix}"  # the finding's own words: its summary names the place and the loss


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


def _describe(process: GpuProcess, now: float) -> str:
    """'pid 4242 (python, 6.00 GiB, started 2d ago)'."""
    facts = [process.title or process.name or "?", gib(process.used_bytes or 0)]
    if process.start_time is not None and now >= process.start_time:
        facts.append(f"started {age(now - process.start_time)} ago")
    return f"pid {process.pid} ({', '.join(facts)})"


def age(seconds: float) -> str:
    """'45s', '12m', '5h', '2d': the largest whole unit."""
    for unit, size in (("d", 86_400), ("h", 3_600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"
