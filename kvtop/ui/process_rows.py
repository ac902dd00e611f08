"""The process table's rows and the signal dialog's facts, free of widgets.

A row is one process on one GPU as the snapshot saw it (a process on two GPUs is two rows, as in
nvitop): GPU, pid, user, role, engine and rank, bytes, age and command (redacted when the observation was built). `signal_facts` gathers what the
confirmation states: the bytes the process holds (on every GPU), what the finding that names its
pid says stopping it buys (`gain_tokens`, and whether the engine must restart to use them), or
that no finding prices it; and whether kvtop refuses to signal it (a process of a running engine).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kvtop.domain.diagnose_findings import Finding
from kvtop.domain.node import NodeSnapshot
from kvtop.domain.observe import GpuProcess, ProcessRole
from kvtop.ui.widgets.row_data import rank_label
from kvtop.units import in_gib

#: Roles of an engine kvtop watches that is serving: stopping one takes the engine down.
ENGINE_ROLES = (ProcessRole.ENGINE_WORKER, ProcessRole.ENGINE_SERVER)
_ROLE_NAMES = {
    ProcessRole.ENGINE_SERVER: "engine server",
    ProcessRole.ENGINE_WORKER: "engine worker",
    ProcessRole.CO_TENANT: "co-tenant",
    ProcessRole.ORPHAN: "orphan",
    ProcessRole.UNATTRIBUTED: "unattributed",
}


@dataclass(frozen=True)
class ProcessRow:
    """One process on one GPU."""

    gpu: int  # NVML index
    pid: int
    user: str
    role: ProcessRole
    engine: str  # "sglang:41000 TP3", "vllm (orphan)", "—"
    used_bytes: int | None
    age_s: float | None  # seconds since it started, at the snapshot's time
    command: str
    process: GpuProcess

    @property
    def role_name(self) -> str:
        return role_name(self.role)


def role_name(role: ProcessRole) -> str:
    """'co-tenant', 'engine worker', 'orphan', …"""
    return _ROLE_NAMES.get(role, role.value)


def process_rows(snapshot: NodeSnapshot, gpu_index: int | None = None) -> tuple[ProcessRow, ...]:
    """Every process the snapshot saw on GPU `gpu_index` (None: on every GPU), in NVML's order."""
    gpus = snapshot.observation.gpus
    if gpu_index is not None:
        gpus = tuple(gpu for gpu in gpus if gpu.index == gpu_index)
    taken_at = snapshot.observation.taken_at
    rows = []
    for gpu, process in ((each, process) for each in gpus for process in each.processes):
        age = None if process.start_time is None else max(0.0, taken_at - process.start_time)
        rows.append(
            ProcessRow(
                gpu=gpu.index,
                pid=process.pid,
                user=process.user or "?",
                role=process.role,
                engine=_engine_text(snapshot, process),
                used_bytes=process.used_bytes,
                age_s=age,
                command=command_text(process),
                process=process,
            )
        )
    return tuple(rows)


def _engine_text(snapshot: NodeSnapshot, process: GpuProcess) -> str:
    if process.engine_id is not None:
        view = next((v for v in snapshot.engines if v.engine.engine_id == process.engine_id), None)
        rank = next((r for r in view.ranks if r.pid == process.pid), None) if view else None
        return f"{process.engine_id} {rank_label(rank, view)}" if rank is not None else process.engine_id
    if process.engine_kind is not None:
        return (
            f"{process.engine_kind} (server gone)"
            if process.role is ProcessRole.ORPHAN
            else process.engine_kind
        )
    return "—"


def gpus_of_pid(snapshot: NodeSnapshot, pid: int) -> tuple[int, ...]:
    """The GPUs NVML lists `pid` on."""
    return tuple(gpu.index for gpu in snapshot.observation.gpus if any(p.pid == pid for p in gpu.processes))


def command_text(process: GpuProcess) -> str:
    """The (redacted) command line, else the title or name the OS gave."""
    if process.cmdline:
        return " ".join(process.cmdline)
    return process.title or process.name or "?"


def age_text(seconds: float | None) -> str:
    """'2d 03h', '3h 12m', '5m 02s', '42s'; '?' when the start time was not read."""
    if seconds is None:
        return "?"
    whole = int(seconds)
    days, rest = divmod(whole, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours:02d}h"
    if hours:
        return f"{hours}h {minutes:02d}m"
    if minutes:
        return f"{minutes}m {secs:02d}s"
    return f"{secs}s"


@dataclass(frozen=True)
class ProcessSort:
    """One order of the panel: its name and how a row ranks (lowest first)."""

    name: str
    rank: Callable[[ProcessRow], tuple[object, ...]]


def shown_gib(row: ProcessRow) -> float:
    """The row's bytes as the table shows them (GiB, 2 decimals): the bytes sort ranks by this, so processes the
    table shows with the same figure keep their pid order, not a reshuffle on every poll by bytes no one sees."""
    return round(in_gib(row.used_bytes or 0), 2)


PROCESS_SORTS: tuple[ProcessSort, ...] = (
    ProcessSort("bytes", lambda row: (-shown_gib(row), row.pid, row.gpu)),
    ProcessSort("pid", lambda row: (row.pid, row.gpu)),
    ProcessSort("user", lambda row: (row.user, row.pid, row.gpu)),
    ProcessSort("role", lambda row: (row.role_name, row.pid, row.gpu)),
    ProcessSort("age", lambda row: (-(row.age_s or 0.0), row.pid, row.gpu)),
    ProcessSort("command", lambda row: (row.command, row.pid, row.gpu)),
    ProcessSort("GPU", lambda row: (row.gpu, -shown_gib(row), row.pid)),
)


def sorted_rows(rows: Sequence[ProcessRow], sort: ProcessSort) -> tuple[ProcessRow, ...]:
    return tuple(sorted(rows, key=sort.rank))


@dataclass(frozen=True)
class SignalFacts:
    """What the signal dialog states about one process before anything is sent."""

    pid: int
    command: str
    role: ProcessRole
    engine: str
    user: str
    held: tuple[
        tuple[int, int | None], ...
    ]  # (GPU index, bytes NVML says it holds there), every GPU it is on
    finding: Finding | None  # the finding whose fix stops this pid (it prices the stop), if any
    refusal: str | None  # why kvtop will not signal it unless forced (None: no objection)


def signal_facts(snapshot: NodeSnapshot, findings: Sequence[Finding], row: ProcessRow) -> SignalFacts:
    """The facts for the dialog about `row`'s process (its bytes on every GPU, its pricing finding)."""
    held = snapshot.observation.held_by(row.pid)
    finding = next((f for f in findings if row.pid in f.pids), None)
    refusal = None
    if row.role in ENGINE_ROLES:
        refusal = (
            f"pid {row.pid} is {row.role_name} of {row.engine}, which is serving: stopping it takes the "
            "engine down and frees nothing for it"
        )
    return SignalFacts(row.pid, row.command, row.role, row.engine, row.user, held, finding, refusal)
