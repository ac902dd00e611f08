"""What the findings pane says when it lists no finding: the incident's sentence, never a check not made.

The pane used to say "No findings: every byte is accounted for." whatever the node, so a GPU with no engine and a
foreign process holding 8.6 GiB (an H200 read live, session 49) read as accounted for while the header said nothing
was diagnosed. The note is now the header's sentence (`kvtop.domain.incident`: all clear, or no engine rank with a
plan to check), and where nothing was diagnosed each GPU whose memory processes outside any engine hold is named
with its bytes (`kvtop.domain.node.outside_bytes`, the split the bars draw) and where to see them.
"""

from __future__ import annotations

from kvtop.domain.cluster_findings import NO_EXPORTER, ExportedCounts
from kvtop.domain.incident import NO_ENGINE, incident
from kvtop.domain.node import NodeSnapshot, outside_bytes
from kvtop.domain.observe import GpuObservation, ProcessRole
from kvtop.domain.wording import gib

#: The note's first words, whatever follows.
NO_FINDINGS = "No findings"
_OUTSIDE_ROLES = (ProcessRole.CO_TENANT, ProcessRole.ORPHAN, ProcessRole.UNATTRIBUTED)


def empty_findings_note(
    snapshot: NodeSnapshot, exported: ExportedCounts | None = None
) -> tuple[tuple[str, ...], bool]:
    """('No findings: <the incident's sentence>', then, where nothing was diagnosed, one line per GPU others hold
    memory on; whether a check was made: False where no engine rank has a plan, so no verdict reads as a pass;
    `exported`: what the node's `kvtop export` counted, read through Prometheus, as the header reads it)."""
    answer = incident(snapshot, (), exported).sentence
    lines = [f"{NO_FINDINGS}: {answer}"]
    if answer not in (NO_ENGINE, NO_EXPORTER):
        return tuple(lines), True
    lines += [line for gpu in snapshot.observation.gpus if (line := _held_outside(gpu))]
    return tuple(lines), False


def _held_outside(gpu: GpuObservation) -> str | None:
    """'GPU 0: 8.60 GiB held by 1 process of no engine (x: the process panel names it)', or None."""
    outside = outside_bytes(gpu, None)
    held = outside.others_bytes
    count = sum(1 for p in gpu.processes if p.role in _OUTSIDE_ROLES)
    if not held:
        return None
    processes = f"{count} process{'' if count == 1 else 'es'}"
    them = "it" if count == 1 else "them"
    return f"GPU {gpu.index}: {gib(held)} held by {processes} of no engine (x: the process panel names {them})"
