"""What `P` would do on one GPU, stated before anything is allocated.

`plan_probe` turns the snapshot and the selected GPU into a `ProbePlan` (the request built from
that rank's predicted ledger, or from the planner's edit when `P` is pressed in the planner
(`PlannedLaunch`: the probe proves the planned KV pool, not the live one), the free memory last read, the processes that share the GPU), or
into the one-line reason no probe can be planned, nothing fitting included: the dialog never
offers to run a probe that would allocate nothing. On a simulated node (`simulated=True`) the
probe runs on this machine's CPU with the simulated GPU's free memory as its limit, and says so.
`confirmation_text` is the dialog's body.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.content import Content

from kvtop.domain.errors import KvtopError
from kvtop.domain.ledger import Ledger
from kvtop.domain.node import NodeSnapshot
from kvtop.domain.observe import GpuProcess, GpuState
from kvtop.domain.probe import ProbeRequest
from kvtop.domain.probe_plan import MIN_GPU_RESERVE_BYTES, fill_budget_bytes, tokens_within, tui_probe_request
from kvtop.domain.wording import counted
from kvtop.ui.process_rows import role_name
from kvtop.units import fmt_bytes, fmt_gib, fmt_tokens

#: Sources whose GPUs are this machine's own (anything else is simulated or remote).
LOCAL_SOURCES = ("nvml",)


@dataclass(frozen=True)
class PlannedLaunch:
    """The planner's edit to probe instead of the live launch: its solved ledger, or why it has none."""

    engine_label: str  # the engine the planner edits ("sglang pid 4242")
    ledger: Ledger | None  # the edit's ledger (the planner's after column); None: the edit does not solve
    why_none: str = "the planner's edit does not solve"


@dataclass(frozen=True)
class ProbePlan:
    """One probe, planned: what it allocates, where, and who else is on that GPU."""

    gpu_index: int
    gpu_name: str | None
    engine_label: str  # "sglang pid 4242"
    request: ProbeRequest
    free_bytes: int | None  # NVML's free bytes in the snapshot the plan was made from
    ledger_bytes_per_token: int | None  # the rank's predicted KV bytes per token
    sharing: tuple[GpuProcess, ...]  # every process the snapshot saw on this GPU
    source: str  # the snapshot's source ("nvml", "demo:…")
    simulated: bool = False  # a demo GPU: the probe runs on the CPU within its free memory
    planned: bool = False  # the buffers are the planner's edit's (else the live launch's predicted ledger)

    @property
    def budget_bytes(self) -> int | None:
        """What a fill may take: free − reserve (None when free memory was not read)."""
        return (
            None
            if self.free_bytes is None
            else fill_budget_bytes(self.free_bytes, self.request.reserve_bytes)
        )

    @property
    def fill_tokens(self) -> int | None:
        """The most tokens the fill can reach within the budget."""
        budget = self.budget_bytes
        return None if budget is None else tokens_within(self.request, budget)


#: Why neither the probe nor the planner can start before the node's first reading (not "no engine on this node").
NO_SNAPSHOT_YET = "no snapshot of the node yet: wait for the first reading"


def plan_probe(
    snapshot: NodeSnapshot | None,
    gpu_index: int | None,
    *,
    simulated: bool = False,
    planned: PlannedLaunch | None = None,
) -> ProbePlan | str:
    """The plan for the GPU, or why the selected GPU cannot be probed from the TUI.

    `simulated`: the node's GPUs are not this machine's (a demo): the probe runs on the CPU with
    the GPU's free memory (as simulated) for its limit. `planned`: `P` pressed in the planner: the
    buffers are its edit's (FP8 KV planned: FP8 buffers), on a GPU of the engine it edits.
    """
    if snapshot is None:
        return NO_SNAPSHOT_YET
    if gpu_index is None:
        return "no GPU is selected"
    gpu = snapshot.observation.gpu(gpu_index)
    if gpu is None:
        return f"GPU {gpu_index} is not in the current snapshot"
    if gpu.state is GpuState.LOST:
        return f"GPU {gpu_index} is lost: {gpu.state_message or 'nothing can be read from it'}"
    engine = snapshot.engine_of_gpu(gpu_index)
    rank = snapshot.rank_on_gpu(gpu_index)
    if engine is None or rank is None:
        return (
            f"no engine rank on GPU {gpu_index}: the probe sizes its buffers from a rank's predicted ledger"
        )
    engine_label = engine.engine.label
    ledger = engine.ledger
    per_token = rank.predicted.kv_bytes_per_token if rank.predicted else None
    if planned is not None:
        if planned.engine_label != engine_label:
            return (
                f"GPU {gpu_index} runs {engine_label}, not {planned.engine_label} the planner edits: "
                "select one of its GPUs to probe the planned KV pool"
            )
        if planned.ledger is None:
            return f"nothing planned to probe: {planned.why_none}"
        ledger, per_token = planned.ledger, planned.ledger.kv_bytes_per_token
    if ledger is None:
        why = engine.ledger_error or "the engine's settings are not known"
        return f"no prediction for {engine_label}: {why}"
    try:
        request = tui_probe_request(ledger, gpu_index, gpu.free_bytes, device="cpu" if simulated else None)
    except KvtopError as error:
        return f"cannot plan a probe of GPU {gpu_index}: {error}"
    plan = ProbePlan(
        gpu_index=gpu_index,
        gpu_name=gpu.name,
        engine_label=engine_label,
        request=request,
        free_bytes=gpu.free_bytes,
        ledger_bytes_per_token=per_token,
        sharing=gpu.processes,
        source=snapshot.source,
        simulated=simulated,
        planned=planned is not None,
    )
    if plan.fill_tokens == 0 and plan.free_bytes is not None:
        return (
            f"nothing fits on GPU {gpu_index}: free {fmt_gib(plan.free_bytes)} − reserve "
            f"{fmt_gib(request.reserve_bytes)} leaves no room for one page of this rank's KV, "
            "so the probe would allocate nothing"
        )
    return plan


def process_line(process: GpuProcess) -> str:
    """'pid 9001 python3 (jupyter-kernel) 6.00 GiB · co-tenant': the role as the process table names it."""
    name = process.name or "?"
    title = f" ({process.title})" if process.title and process.title != name else ""
    used = "? GiB" if process.used_bytes is None else fmt_gib(process.used_bytes)
    return f"pid {process.pid} {name}{title} {used} · {role_name(process.role)}"


def _buffers_line(request: ProbeRequest) -> str:
    return " · ".join(
        f"{b.name} {b.tensors} × {b.row_shape} {b.dtype}"
        + ("" if b.token_ratio == 1.0 else f" (×{b.token_ratio:.3f} of the tokens)")
        for b in request.buffers
    )


def _row(label: str, text: str | Content, style: str = "") -> Content:
    body = text if isinstance(text, Content) else Content.styled(text, style)
    return Content.assemble((f"{label:<10}", "bold"), body)


def confirmation_text(plan: ProbePlan) -> Content:
    """The dialog's body: GPU, buffers, tokens it will try, reserve kept, who shares the GPU."""
    request = plan.request
    where = (
        f"on this machine's CPU, standing in for the simulated GPU {plan.gpu_index}"
        if plan.simulated
        else f"on {request.device}"
    )
    lines = [
        Content.assemble(
            (
                f"Probe GPU {plan.gpu_index}" + (f" · {plan.gpu_name}" if plan.gpu_name else ""),
                "bold $primary",
            ),
            f" · rank of {plan.engine_label}",
        ),
        Content(
            f"Allocates, in a child process {where}, the KV buffers "
            + ("the planner's edit predicts for this rank (not the running launch's)" if plan.planned
               else "this rank's ledger predicts")
            + ", measures what one token really costs, then gives every byte back."
        ),
        _row("buffers", _buffers_line(request)),
    ]
    ledger = (
        ""
        if plan.ledger_bytes_per_token is None
        else f" ({'planned' if plan.planned else 'ledger'} {fmt_tokens(plan.ledger_bytes_per_token)} B)"
    )
    lines.append(
        _row(
            "per token",
            f"{fmt_tokens(request.bytes_per_token_predicted)} B predicted{ledger}; the probe measures it",
        )
    )
    lines.append(_row("will try", _attempt_text(plan)))
    if plan.simulated:
        lines.append(_row("reserve", "none: the stand-in's limit is already what the simulated GPU has free"))
    else:
        why = (
            "the engine's runtime reserve" if request.reserve_bytes > MIN_GPU_RESERVE_BYTES else "the minimum"
        )
        lines.append(
            _row("reserve", f"{fmt_gib(request.reserve_bytes)} kept free ({why}; at least 2 GiB on a GPU)")
        )
    lines.append(
        _row("timeout", f"{request.timeout_s:g} s: the child is killed then, on Esc, or when kvtop exits")
    )
    if plan.sharing:
        lines.append(
            _row(
                "shares", f"GPU {plan.gpu_index} with {counted(len(plan.sharing), 'other process', 'other processes')}:", "bold $warning"
            )
        )
        lines += [Content.styled(f"{'':<10}{process_line(p)}", "$warning") for p in plan.sharing]
        competes = ("they are the demo's: the probe runs in this machine's RAM, not beside them" if plan.simulated
                    else "the probe competes with them for free memory")  # fmt: skip
        lines.append(Content.styled(f"{'':<10}{competes}", "$warning"))
    else:
        lines.append(_row("shares", "no other process was seen on this GPU"))
    if plan.simulated:
        limit = fmt_gib(request.memory_limit_bytes or 0)
        lines.append(
            Content.styled(
                f"Simulated GPU ({plan.source}): the limit is GPU {plan.gpu_index}'s free memory in the demo, "
                f"{limit}; the probe takes up to {limit} of this machine's RAM and gives it back.",
                "bold $accent",
            )
        )
    elif plan.source not in LOCAL_SOURCES:
        lines.append(
            Content.styled(
                f"The node shown comes from {plan.source}; the probe runs on this machine's {request.device}.",
                "$text-muted",
            )
        )
    return Content("\n").join(lines)


def _attempt_text(plan: ProbePlan) -> Content:
    request = plan.request
    if request.target_tokens is not None:
        return Content(f"prove {fmt_tokens(request.target_tokens)} tokens fit above the reserve")
    if plan.free_bytes is None or plan.budget_bytes is None:
        return Content("fill: as many tokens as fit above the reserve (free memory was not read)")
    tokens = plan.fill_tokens or 0  # above zero: plan_probe turns "nothing fits" into its reason
    arithmetic = f"(free {fmt_gib(plan.free_bytes)} − reserve {fmt_gib(request.reserve_bytes)})"
    return Content(f"fill: up to {fmt_tokens(tokens)} tokens · {fmt_bytes(plan.budget_bytes)} {arithmetic}")
