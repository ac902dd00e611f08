"""A node read through Prometheus: the findings its own `kvtop export` counted, worded once for every view.

Prometheus carries counts by severity, never a cause, so the node screen of `kvtop --prometheus` cannot diagnose
where no engine has a ledger. Its top line (`incident`) and its findings pane read these counts alike: before,
the line said "nothing was diagnosed" over a pane that listed "● critical 1 finding · counted by kvtop export"
(the `gpu5-lost` demo node, session 66). Where no exporter answers for the node, both say so.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvtop.domain.cluster import SEVERITY_WEIGHT, ClusterNode, GpuSource, is_advice
from kvtop.domain.diagnose_findings import Severity
from kvtop.domain.exported_prediction import EXPORTER
from kvtop.domain.wording import counted

#: Both the top line and the pane, where no kvtop exporter answers for the node.
NO_EXPORTER = "no kvtop exporter on this node: nothing was diagnosed"
#: Where each counted finding's cause and fix are read (Prometheus holds only the counts).
RUN_DIAGNOSE = "run `kvtop diagnose` on the node for each cause and its fix"
RUN_EXPORT = f"run `{EXPORTER}` on the node to see its findings here"
#: What an info finding is counted as, in the node list's cell, the incident's sentence and the pane alike.
ADVICE_WORD = "advice"


def advice_said(count: int) -> str:
    """A count of info findings (`cluster.is_advice`: trade-offs, as `kvtop diagnose` heads them) as every cluster view
    says it: '2 advice' (the word takes no plural)."""
    return f"{count} {ADVICE_WORD}"


def counted_kind(count: int, severity: str) -> str:
    """A count of findings of one severity as the pane's entry says it: '2 findings' for a fault, '2 advice' for an
    info finding, as the node list's cell ('1 warning · 2 advice') names it."""
    return advice_said(count) if is_advice(severity) else counted(count, "finding")


def has_kvtop(node: ClusterNode) -> bool:
    """Whether kvtop's exporter answers for the node (else findings and predictions are unknown)."""
    return (
        node.unexplained_bytes is not None
        or bool(node.findings)
        or (node.gpu_summary is not None and node.gpu_summary.source is GpuSource.KVTOP)
        or any(e.source == "kvtop" for e in node.engines)
    )


@dataclass(frozen=True)
class ExportedFindings:
    """Findings of one severity as the node's own kvtop export counted them (Prometheus has no causes)."""

    rule: str
    severity: str
    evidence: str
    fix: str = RUN_DIAGNOSE
    gpus: tuple[int, ...] = ()
    tokens: int | None = None

    @property
    def title(self) -> str:
        """The entry's head: its count in words ('3 findings'), as the pane shows a finding's title."""
        return self.rule


@dataclass(frozen=True)
class ExportedCounts:
    """What `kvtop export` on `node` counted, by severity, worst first, none zero (`counts` None: no exporter);
    `advice` is the node's own `ClusterNode.advice_total`, read once, never summed again here."""

    node: str
    counts: tuple[tuple[str, int], ...] | None
    advice: int = 0

    @classmethod
    def of(cls, name: str, node: ClusterNode | None) -> ExportedCounts:
        """The counts of `node` (None: the cluster view holds no such node, so no exporter answers for it)."""
        if node is None or not has_kvtop(node):
            return cls(name, None)
        counts = sorted(node.findings.items(), key=lambda pair: -SEVERITY_WEIGHT.get(pair[0].lower(), 1))
        faults_and_advice = tuple((severity, count) for severity, count in counts if count > 0)
        return cls(name, faults_and_advice, node.advice_total)

    @property
    def faults(self) -> tuple[tuple[str, int], ...]:
        """The counts that are faults (advice aside), worst first, none zero."""
        return tuple((s, c) for s, c in self.counts or () if not is_advice(s))

    @property
    def worst(self) -> Severity | None:
        """The worst fault counted, as a diagnosis' severity ('error' is critical); None: no fault (advice aside)."""
        if not self.faults:
            return None
        worst = SEVERITY_WEIGHT.get(self.faults[0][0].lower(), 1)
        return Severity.CRITICAL if worst >= SEVERITY_WEIGHT["critical"] else Severity.WARNING

    def cell(self) -> str:
        """The node list's findings cell: '1 error · 2 warning · 2 advice', 'none · 2 advice' or 'none' (the
        view shows '—' where `counts` is None: no exporter)."""
        faults = [f"{count} {severity}" for severity, count in self.faults] or ["none"]
        return " · ".join([*faults, *([advice_said(self.advice)] if self.advice else [])])

    def entries(self) -> tuple[ExportedFindings, ...]:
        """The findings pane's entries: one per severity counted, or one saying nothing was diagnosed."""
        if self.counts is None:
            return (ExportedFindings("not diagnosed", "info", NO_EXPORTER, fix=RUN_EXPORT),)
        said = f"counted by {EXPORTER} on {self.node}"
        return tuple(ExportedFindings(counted_kind(count, severity), severity, said) for severity, count in self.counts)

    def forms(self) -> tuple[str, ...]:
        """The incident's sentence and its shorter forms: 'kvtop export on h100-f counts 1 critical finding and
        3 advice — run `kvtop diagnose` on the node for each cause and its fix', or NO_EXPORTER."""
        if self.counts is None:
            return (NO_EXPORTER,)
        faults, advice = self.faults, self.advice
        if not faults:
            extra = f" ({advice_said(advice)})" if advice else ""
            return (f"{EXPORTER} on {self.node} counts no fault{extra}", f"no fault counted by {EXPORTER}")
        counted = " and ".join(f"{c} {s}" for s, c in faults)
        counted += " finding" if sum(c for _, c in faults) == 1 else " findings"
        extra = f" and {advice_said(advice)}" if advice else ""
        whole = f"{EXPORTER} on {self.node} counts {counted}{extra}"
        return (f"{whole} — {RUN_DIAGNOSE}", whole, f"{EXPORTER} counts {counted}", counted)
