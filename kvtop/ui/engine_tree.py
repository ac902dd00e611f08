"""The node as a tree (nvitop's `t`): each engine → its processes (server, workers) → the ranks each holds,
then what no engine owns (co-tenants, orphans, hidden pids) and the GPUs that hold nothing.

A view of figures the domain already states (the rank's waterfall, NVML's bytes per process): no
figure is derived here. `engine_tree` returns plain nodes; the screen draws them in a Textual `Tree`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kvtop.domain.node import EngineView, NodeSnapshot, RankView
from kvtop.domain.observe import GpuProcess, GpuState, ProcessRole, held_total
from kvtop.units import fmt_gib, fmt_tokens

_ROLE_WORDS = {
    ProcessRole.ENGINE_SERVER: "server",
    ProcessRole.ENGINE_WORKER: "worker",
    ProcessRole.CO_TENANT: "co-tenant",
    ProcessRole.ORPHAN: "orphan (server gone)",
    ProcessRole.UNATTRIBUTED: "hidden (another PID namespace)",
}


@dataclass(frozen=True)
class TreeNode:
    """One line of the tree: its text, a tone ('' , 'warning', 'error', 'muted'), the GPU it opens (Enter:
    that GPU's rank ledger) and its children."""

    label: str
    tone: str = ""
    gpu: int | None = None
    children: tuple[TreeNode, ...] = field(default_factory=tuple)


def engine_tree(snapshot: NodeSnapshot) -> tuple[TreeNode, ...]:
    """Engines first (their processes, each with its ranks), then the processes of no engine, then idle GPUs."""
    nodes = [_engine(snapshot, view) for view in snapshot.engines]
    engines = {view.engine.engine_id for view in snapshot.engines}
    others = [
        _process(gpu.index, process, ())
        for gpu in snapshot.observation.gpus
        for process in gpu.processes
        if process.engine_id not in engines
    ]
    if others:
        nodes.append(TreeNode("no engine", "warning", children=tuple(others)))
    idle = [gpu.index for gpu in snapshot.observation.gpus if not gpu.processes and gpu.state is GpuState.OK]
    if idle:
        nodes.append(TreeNode(f"idle: GPU {', '.join(map(str, idle))} (no process)", "muted"))
    for gpu in snapshot.observation.gpus:
        if gpu.state in (GpuState.LOST, GpuState.ERROR):
            nodes.append(TreeNode(f"GPU {gpu.index} {gpu.state.value}: {gpu.state_message or 'no detail'}", "error", gpu.index))
    return tuple(nodes)


def _engine(snapshot: NodeSnapshot, view: EngineView) -> TreeNode:
    engine, ledger = view.engine, view.explained or view.ledger
    model = ledger.model.name if ledger else engine.model or "model unknown"
    layout = f" · {ledger.layout.describe()}" if ledger else ""
    tokens = f" · {fmt_tokens(ledger.token_capacity)} tokens per rank predicted" if ledger else ""
    processes: dict[int, list[tuple[int, GpuProcess]]] = {}
    for gpu, process in snapshot.observation.engine_processes(engine.engine_id):
        processes.setdefault(process.pid, []).append((gpu.index, process))
    children = [
        _process_on(held, tuple(_rank(rank) for rank in view.ranks if rank.pid == pid))
        for pid, held in sorted(processes.items(), key=lambda item: (item[1][0][0], item[0]))
    ]
    placed = {rank.gpu_index for rank in view.ranks if rank.pid in processes}
    children += [_rank(rank) for rank in view.ranks if rank.gpu_index not in placed]  # a rank NVML lists no pid for
    return TreeNode(f"{engine.engine_id} · {model}{layout}{tokens}", children=tuple(children))


def _process(gpu: int, process: GpuProcess, ranks: tuple[TreeNode, ...]) -> TreeNode:
    return _process_on([(gpu, process)], ranks)


def _process_on(held: list[tuple[int, GpuProcess]], ranks: tuple[TreeNode, ...]) -> TreeNode:
    """One process and what it holds on each GPU NVML lists it on (TurboMind drives several from one pid)."""
    gpu, process = held[0]
    role = _ROLE_WORDS.get(process.role, process.role.value)
    who = process.title or process.name or "?"
    user = f" ({process.user})" if process.user else ""
    held_bytes = held_total([(g, p.used_bytes) for g, p in held])
    total = fmt_gib(held_bytes) if held_bytes is not None else "bytes not reported"
    gpus = [g for g, _ in held]
    where = f" · GPU {gpus[0]}" if len(gpus) == 1 else f" · GPUs {', '.join(map(str, gpus))}"
    tone = "warning" if process.role in (ProcessRole.CO_TENANT, ProcessRole.ORPHAN, ProcessRole.UNATTRIBUTED) else ""
    return TreeNode(f"pid {process.pid} {role} · {who}{user}{where} · {total}", tone, gpu, ranks)


def _rank(rank: RankView) -> TreeNode:
    """'TP3 · GPU 3 · 1,127,125 tokens (clean 1,255,785)': the rank's waterfall, as the rows and ledger say it."""
    dims = [*([f"DP{rank.rank.dp}"] if rank.rank.dp else []), *([f"PP{rank.rank.pp}"] if rank.rank.pp else [])]
    label = " ".join([*dims, f"TP{rank.rank.tp}"])
    waterfall = rank.capacity
    if waterfall is None:
        return TreeNode(f"{label} · GPU {rank.gpu_index} · no prediction", "muted", rank.gpu_index)
    change = f" (clean {fmt_tokens(waterfall.clean_tokens)})" if waterfall.change_tokens else ""
    tone = "warning" if waterfall.change_tokens < 0 else ""
    return TreeNode(
        f"{label} · GPU {rank.gpu_index} · {fmt_tokens(waterfall.actual_tokens)} tokens {waterfall.actual_source.value}{change}",
        tone,
        rank.gpu_index,
    )
