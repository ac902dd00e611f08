"""GPU pids → engines and ranks, through the OS process table (psutil owns this module).

`attribute_node` takes NVML's view of a node and, for every GPU process, reads its parent,
user, command line, title and `CUDA_VISIBLE_DEVICES`; it finds the SGLang/vLLM server that
launched it (the nearest ancestor whose command line is a server launch) and its rank from the
title the engine gave it (`VLLM::Worker_TP1_EP1`, `sglang::scheduler_DP1_TP3`). The server
itself, when it holds GPU memory (vLLM's API server keeps its own CUDA context), is its engine's
server and never a rank: ranks are the workers. Processes of no engine are co-tenants, engine
workers without a live server are orphans, and pids this
namespace cannot see or read are unattributed — named, never dropped. The OS is reached only
through a `ProcessTable`, so tests use a table built from recorded process listings.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from kvtop.domain.engines.registry import (
    EngineId,
    default_port,
    rank_of_device,
    ranks_by_gpu_order,
    title_prefixes,
)
from kvtop.domain.errors import InputError
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.launch_line import detect_engine, parse_launch_command
from kvtop.domain.observe import (
    EngineInstance,
    EngineRank,
    GpuObservation,
    GpuProcess,
    NodeObservation,
    ProcessInfoState,
    ProcessRole,
)
from kvtop.domain.process_identity import PidNamespace, identity_of
from kvtop.domain.redact import redact_argv
from kvtop.sources.engines.registry import complete_settings

_ANY_ADDRESS = ("0.0.0.0", "::", "[::]", "")
_TITLE = re.compile(r"^(?P<prefix>[A-Za-z][\w.-]{0,30})::(?P<role>\S+)$")
_RANK_PART = re.compile(r"(?:^|_)(DP|PP|TP|EP)(\d+)(?=_|$)")
_MAX_ANCESTRY = 64


@dataclass(frozen=True)
class ProcessRecord:
    """What the OS says about one process; `unreadable` names the details access was denied to."""

    pid: int
    parent_pid: int | None = None
    name: str | None = None
    cmdline: tuple[str, ...] = ()
    user: str | None = None
    start_time: float | None = None
    cuda_visible_devices: str | None = None
    unreadable: tuple[str, ...] = ()
    uid: int | None = None  # the real user id
    exe: str | None = None  # the executable's path (what /proc/PID/exe links to)


class ProcessTable(Protocol):
    """The seam to the OS: a process by pid, or None when this namespace cannot see it."""

    def lookup(self, pid: int) -> ProcessRecord | None: ...

    def pid_namespace(self) -> PidNamespace:
        """Whose pids `lookup` sees: the host's (NVML's) or a container's own."""
        ...


#: /proc/self/ns/pid of the initial (host) PID namespace: the kernel's PROC_PID_INIT_INO, 0xEFFFFFFC.
HOST_PID_NAMESPACE = "pid:[4026531836]"


def read_pid_namespace(link: str = "/proc/self/ns/pid") -> PidNamespace:
    """The host's PID namespace or another (a container's), from the namespace link's inode."""
    try:
        return PidNamespace.HOST if os.readlink(link) == HOST_PID_NAMESPACE else PidNamespace.FOREIGN
    except OSError:
        return PidNamespace.UNKNOWN


class PsutilProcessTable:
    """The real process table, read with psutil (Linux /proc, macOS, Windows)."""

    def lookup(self, pid: int) -> ProcessRecord | None:
        import psutil

        try:
            process = psutil.Process(pid)
            unreadable: list[str] = []

            def read(field: str, call: Callable[[], object]) -> object:
                try:
                    return call()
                except psutil.AccessDenied:
                    unreadable.append(field)
                    return None

            with process.oneshot():
                name = read("name", process.name)
                cmdline = read("command line", process.cmdline)
                parent_pid = read("parent", process.ppid)
                user = read("user", process.username)
                start_time = read("start time", process.create_time)
                environ = read("environment", process.environ)
                uids = read("user id", process.uids)
                exe = read("executable", process.exe)
        except psutil.NoSuchProcess:  # also a zombie: it holds no GPU memory of its own any more
            return None
        except psutil.AccessDenied:
            return ProcessRecord(pid=pid, unreadable=("everything",))
        return ProcessRecord(
            pid=pid,
            parent_pid=parent_pid if isinstance(parent_pid, int) else None,
            name=name if isinstance(name, str) else None,
            cmdline=_trim(cmdline if isinstance(cmdline, list) else []),
            user=user if isinstance(user, str) else None,
            start_time=start_time if isinstance(start_time, float) else None,
            cuda_visible_devices=environ.get("CUDA_VISIBLE_DEVICES") if isinstance(environ, dict) else None,
            unreadable=tuple(unreadable),
            uid=getattr(uids, "real", None),
            exe=exe if isinstance(exe, str) and exe else None,
        )

    def pid_namespace(self) -> PidNamespace:
        return read_pid_namespace()


def read_host_memory() -> tuple[int, int]:
    """(total, available) bytes of host RAM: the memory of unified-memory GPUs (GB10, Grace)."""
    import psutil

    memory = psutil.virtual_memory()
    return int(memory.total), int(memory.available)


def _trim(argv: list[str]) -> tuple[str, ...]:
    """Drop the empty tail a renamed process (setproctitle) leaves in its argv area."""
    while argv and not argv[-1]:
        argv = argv[:-1]
    return tuple(argv)


def title_of(record: ProcessRecord) -> str | None:
    """The engine-given process title (`VLLM::EngineCore`, `sglang::scheduler_TP0`), if any."""
    for candidate in (record.cmdline[0] if len(record.cmdline) == 1 else None, record.name):
        if candidate and engine_kind_of_title(candidate.strip()) is not None:
            return candidate.strip()
    return None


def engine_kind_of_title(title: str | None) -> EngineId | None:
    match = _TITLE.match(title or "")
    if match is None:
        return None
    return title_prefixes().get(match["prefix"].upper())


def rank_parts(title: str | None) -> dict[str, int]:
    """The rank numbers a title states: `VLLM::Worker_TP1_EP1` → {'tp': 1, 'ep': 1}."""
    match = _TITLE.match(title or "")
    if match is None:
        return {}
    return {axis.lower(): int(number) for axis, number in _RANK_PART.findall(match["role"])}


def attribute_node(node: NodeObservation, table: ProcessTable) -> NodeObservation:
    """Fill in who every GPU process is, and the engines they belong to. In another PID namespace
    than the host's, NVML's pids are not looked up at all: the process a pid names here is not the
    GPU's (every one is unattributed, and the observation says why)."""
    namespace = table.pid_namespace()
    if namespace is PidNamespace.FOREIGN:
        return _foreign(node)
    attribution = _Attribution(table)
    gpus = tuple(
        gpu.model_copy(update={"processes": tuple(attribution.describe(p, gpu.index) for p in gpu.processes)})
        for gpu in node.gpus
    )
    engines = tuple(attribution.engines.values())
    for engine in engines:
        if ranks_by_gpu_order(engine.kind):
            gpus = _ranked_by_gpu_order(gpus, engine)
    return node.model_copy(update={"gpus": gpus, "engines": engines, "pid_namespace": namespace})


def _foreign(node: NodeObservation) -> NodeObservation:
    """Every GPU process unattributed: its pid is the host's, not one of this namespace."""
    gpus = tuple(
        gpu.model_copy(update={"processes": tuple(
            process.model_copy(update={
                "info_state": ProcessInfoState.NOT_VISIBLE, "role": ProcessRole.UNATTRIBUTED,
                "info_message": f"pid {process.pid} is the host's and kvtop runs in another PID namespace "
                "(a container; run kvtop with the host's PID namespace, e.g. --pid=host)",
            })
            for process in gpu.processes
        )})
        for gpu in node.gpus
    )  # fmt: skip
    return node.model_copy(update={"gpus": gpus, "engines": (), "pid_namespace": PidNamespace.FOREIGN})


def _gpu_order(gpus: tuple[GpuObservation, ...], engine: EngineInstance) -> list[int]:
    """The engine's GPUs (NVML indices) in its device order: its server's CUDA_VISIBLE_DEVICES where that
    lists them all as indices, else by index."""
    held = sorted({g.index for g in gpus for p in g.processes if p.engine_id == engine.engine_id})
    server = next((p for g in gpus for p in g.processes if p.pid == engine.server_pid), None)
    visible = [part.strip() for part in str(server.cuda_visible_devices or "").split(",")] if server else []
    if visible and all(part.isdigit() for part in visible) and set(held) <= {int(part) for part in visible}:
        return [int(part) for part in visible if int(part) in held]
    return held


def _ranked_by_gpu_order(gpus: tuple[GpuObservation, ...], engine: EngineInstance) -> tuple[GpuObservation, ...]:
    """An engine whose titles state no rank: on each of its GPUs its worker (else its server, which then
    runs that rank itself: TurboMind's threads) is the rank at that GPU's position, TP within DP."""
    order = _gpu_order(gpus, engine)
    tp = engine.settings.tp if engine.settings else max(len(order), 1)
    out = []
    for gpu in gpus:
        mine = [p for p in gpu.processes if p.engine_id == engine.engine_id]
        if gpu.index not in order or not mine:
            out.append(gpu)
            continue
        workers = [p for p in mine if p.role is ProcessRole.ENGINE_WORKER]
        runner = workers[0] if workers else mine[0]
        position = order.index(gpu.index)
        rank = EngineRank(dp=position // tp, tp=position % tp)
        processes = tuple(
            p.model_copy(update={"role": ProcessRole.ENGINE_WORKER, "rank": rank}) if p is runner else p
            for p in gpu.processes
        )
        out.append(gpu.model_copy(update={"processes": processes}))
    return tuple(out)


class _Attribution:
    """Per-call cache of the process table, and the engines found so far (by server pid)."""

    def __init__(self, table: ProcessTable) -> None:
        self.table = table
        self.records: dict[int, ProcessRecord | None] = {}
        self.engines: dict[int, EngineInstance] = {}

    def lookup(self, pid: int) -> ProcessRecord | None:
        if pid not in self.records:
            self.records[pid] = self.table.lookup(pid)
        return self.records[pid]

    def ancestry(self, record: ProcessRecord) -> list[ProcessRecord]:
        """The process and its ancestors, nearest first."""
        chain = [record]
        seen = {record.pid}
        while len(chain) < _MAX_ANCESTRY:
            parent_pid = chain[-1].parent_pid
            if not parent_pid or parent_pid in seen:
                break
            parent = self.lookup(parent_pid)
            if parent is None:
                break
            chain.append(parent)
            seen.add(parent_pid)
        return chain

    def describe(self, process: GpuProcess, gpu_index: int | None = None) -> GpuProcess:
        record = self.lookup(process.pid)
        if record is None:
            return process.model_copy(update={
                "info_state": ProcessInfoState.NOT_VISIBLE,
                "info_message": f"pid {process.pid} is not visible here: it runs in another PID "
                "namespace (a container; run kvtop with the host's PID namespace, e.g. --pid=host) "
                "or it has exited",
                "role": ProcessRole.UNATTRIBUTED,
            })  # fmt: skip
        title = title_of(record)
        known = {
            "name": record.name,
            "title": title,
            "cmdline": record.cmdline,  # redacted by GpuProcess, like every string it holds
            "user": record.user,
            "parent_pid": record.parent_pid,
            "start_time": record.start_time,
            "cuda_visible_devices": record.cuda_visible_devices,
            "identity": identity_of(record.pid, record.start_time, record.uid, record.exe),
            "info_state": ProcessInfoState.ACCESS_DENIED if record.unreadable else ProcessInfoState.OK,
            "info_message": (
                f"access denied reading the {', '.join(record.unreadable)} of pid {record.pid}: "
                "run kvtop as root or as the process's user"
            ) if record.unreadable else None,
        }  # fmt: skip
        chain = self.ancestry(record)
        server = _find_server(chain)
        if server is not None:
            server_index, server_kind = server
            engine = self.engine_for(chain[server_index], server_kind)
            role = ProcessRole.ENGINE_SERVER if server_index == 0 else ProcessRole.ENGINE_WORKER
            rank = (
                _worker_rank(chain[:server_index], engine, gpu_index)
                if role is ProcessRole.ENGINE_WORKER
                else None
            )
            return process.model_copy(update={
                **known, "role": role, "engine_id": engine.engine_id, "engine_kind": engine.kind, "rank": rank,
            })  # fmt: skip
        kind = engine_kind_of_title(title)
        if kind is not None:
            parts = _stated_rank(chain)
            return process.model_copy(update={
                **known, "role": ProcessRole.ORPHAN, "engine_kind": kind, "rank": EngineRank(**parts) if parts else None,
            })  # fmt: skip
        if "command line" in record.unreadable or "everything" in record.unreadable:
            return process.model_copy(update={**known, "role": ProcessRole.UNATTRIBUTED})
        return process.model_copy(update={**known, "role": ProcessRole.CO_TENANT})

    def engine_for(self, server: ProcessRecord, kind: EngineId) -> EngineInstance:
        if server.pid not in self.engines:
            self.engines[server.pid] = _engine_from_server(server, kind)
        return self.engines[server.pid]


def _launch_of(record: ProcessRecord) -> EngineId | None:
    found = detect_engine(redact_argv(record.cmdline))
    return found[0] if found else None


def _find_server(chain: list[ProcessRecord]) -> tuple[int, EngineId] | None:
    """(index in `chain`, engine) of the launching server: the nearest ancestor whose command
    line is a server launch, climbing past forked copies of it (same command line)."""
    for index, record in enumerate(chain):
        kind = _launch_of(record)
        if kind is not None:
            while index + 1 < len(chain) and chain[index + 1].cmdline == record.cmdline:
                index += 1
            return index, kind
    return None


def _stated_rank(chain: list[ProcessRecord]) -> dict[str, int]:
    """The rank axes a worker's own title states; an axis it omits (vLLM's DP) from an ancestor's."""
    parts: dict[str, int] = {}
    for record in chain:
        for axis, number in rank_parts(title_of(record)).items():
            parts.setdefault(axis, number)
    return parts


def _device_position(record: ProcessRecord, gpu_index: int | None) -> int | None:
    """The place of GPU `gpu_index` among the GPUs the process sees (CUDA_VISIBLE_DEVICES, else all)."""
    if gpu_index is None:
        return None
    visible = record.cuda_visible_devices
    if visible is None or not visible.strip():
        return gpu_index
    listed = [item.strip() for item in visible.split(",")]
    return listed.index(str(gpu_index)) if str(gpu_index) in listed else None


def _worker_rank(
    chain: list[ProcessRecord], engine: EngineInstance, gpu_index: int | None = None
) -> EngineRank | None:
    """The worker's rank; None when no title states it and the engine spans several GPUs
    (a silent rank 0 would be a wrong number). Engines whose workers bind GPUs in rank order and
    carry no title (TensorRT-LLM's MPI workers) are ranked by the GPU's place among those they see."""
    parts = _stated_rank(chain)
    settings = engine.settings
    if not parts and settings is not None and chain:
        position = _device_position(chain[0], gpu_index)
        by_device = rank_of_device(settings, position) if position is not None else None
        if by_device:
            parts = by_device
    single_gpu = settings is not None and settings.tp * settings.pp == 1 and settings.dp == 1
    if not parts and not single_gpu:
        return None
    return EngineRank(**parts)


def _engine_from_server(server: ProcessRecord, kind: EngineId) -> EngineInstance:
    argv = redact_argv(server.cmdline)
    settings: LaunchSettings | None
    try:
        settings = parse_launch_command(argv)
        message = None
    except InputError as error:
        settings = None
        message = f"the launch command of pid {server.pid} could not be read: {error}"
    if settings is not None:
        try:  # files the launch names (an absolute path only: the server's working directory is not ours)
            settings = complete_settings(settings, None)
        except InputError as error:
            message = f"a file the launch of pid {server.pid} names could not be read: {error}"
    host, port = endpoint_address(kind, settings)
    return EngineInstance(
        engine_id=f"{kind}:{server.pid}",
        kind=kind,
        server_pid=server.pid,
        model=settings.model if settings else None,
        settings=settings,
        settings_message=message,
        host=host,
        port=port,
    )


def endpoint_address(kind: EngineId, settings: LaunchSettings | None) -> tuple[str, int]:
    """Where to reach a server: its --host/--port, with the engine's defaults; an any-address
    bind (0.0.0.0) is reached on 127.0.0.1."""
    host = settings.host if settings and settings.host else None
    port = settings.port if settings and settings.port else default_port(kind)
    return ("127.0.0.1" if host is None or host in _ANY_ADDRESS else host), port
