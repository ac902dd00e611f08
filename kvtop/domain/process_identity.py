"""Which process a pid names. A pid is reused once its process exits, so kvtop names a process by
its pid *and* when it started, whose it is and what it runs; it signals only a process so named,
and names it again when the operator confirms (`kvtop.sources.signals`).

NVML reports the host's pids. Where kvtop runs in another PID namespace (a container started
without `--pid=host`), a pid it looks up is a different process of its own namespace, or none:
there no GPU process can be named (`PidNamespace.FOREIGN`).
"""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, ConfigDict, Field


class PidNamespace(str, Enum):
    """Whose pids kvtop sees, against NVML's (which are always the host's)."""

    HOST = "host"  # the host's PID namespace: NVML's pids are the ones kvtop looks up
    FOREIGN = "foreign"  # a container's own PID namespace: NVML's pids name other processes, or none
    UNKNOWN = "unknown"  # not read (not Linux, or /proc/self/ns/pid unreadable)


#: What the process panel says where kvtop runs in another PID namespace.
FOREIGN_NAMESPACE_NOTE = (
    "kvtop runs in another PID namespace (a container without --pid=host): NVML's pids are the host's, "
    "so no process here can be named or signalled; run kvtop with the host's PID namespace"
)


class ProcessIdentity(BaseModel):
    """One process beyond its pid: its start (seconds since the epoch, as the OS keeps it, in clock
    ticks), its real user id and the path of its executable. Never shown: it is compared."""

    model_config = ConfigDict(frozen=True)

    pid: int = Field(ge=1)
    start_time: float
    uid: int = Field(ge=0)
    exe: str = Field(min_length=1)


def identity_of(pid: int, start_time: float | None, uid: int | None, exe: str | None) -> ProcessIdentity | None:
    """The identity when the OS told all three facts, else None (the process cannot be named)."""
    if start_time is None or uid is None or not exe:
        return None
    return ProcessIdentity(pid=pid, start_time=start_time, uid=uid, exe=exe)
