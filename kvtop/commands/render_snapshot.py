"""A NodeSnapshot as the stable JSON contract of `kvtop snapshot --json` and as compact tables.

JSON keys (stable): `source`, `notice`, `taken_at`, `nvml`, `gpus[]` (index, uuid, name,
total/used/reserved/free bytes, state, processes[]), `engines[]` (kind, model, layout, endpoint,
predicted: the explained ledger, plan: the launch on empty GPUs, ranks[] with gpu_index, pid, rank,
observed, predicted: the explained ledger's rank, unexplained_bytes). Bytes are
ints; units are formatted only in the text tables.
"""

from __future__ import annotations

from typing import Any

from kvtop.commands.render_ledger import ledger_json, rank_json
from kvtop.domain.capacity import CapacityWaterfall
from kvtop.domain.engines.registry import display_names
from kvtop.domain.ledger_values import Ledger
from kvtop.domain.node import EngineView, NodeSnapshot, RankView
from kvtop.domain.observe import EngineInstance, EngineRank, GpuObservation, GpuProcess, GpuState
from kvtop.domain.pressure import pressure_of
from kvtop.domain.wording import counted
from kvtop.units import fmt_gib_figure, fmt_signed, fmt_tokens

#: How a text output's header marks a demo node (its JSON says `"nvml": {"state": "demo"}`).
SIMULATED = "a simulated node, not this machine"


def snapshot_json(snapshot: NodeSnapshot) -> dict[str, Any]:
    node = snapshot.observation
    return {
        "source": snapshot.source,
        "simulated": snapshot.simulated,  # a demo scenario, not this machine (`source` names it: "demo:<scenario>")
        "notice": snapshot.notice,
        "taken_at": node.taken_at,
        "nvml": {
            "state": node.nvml_state.value,
            "message": node.nvml_message,
            "driver_version": node.driver_version,
        },
        "host_memory": node.host_memory.model_dump(mode="json") if node.host_memory else None,
        "desktop": {**node.desktop.model_dump(mode="json"), "sentence": node.desktop.sentence} if node.desktop else None,
        "gpus": [gpu_json(gpu) for gpu in node.gpus],
        "engines": [engine_json(view) for view in snapshot.engines],
    }


def gpu_json(gpu: GpuObservation) -> dict[str, Any]:
    return {
        "index": gpu.index, "uuid": gpu.uuid, "pci_bus_id": gpu.pci_bus_id, "name": gpu.name,
        "total_bytes": gpu.total_bytes, "used_bytes": gpu.used_bytes, "reserved_bytes": gpu.reserved_bytes,
        "free_bytes": gpu.free_bytes, "memory_api": gpu.memory_api.value if gpu.memory_api else None,
        "utilization_percent": gpu.utilization_percent, "temperature_c": gpu.temperature_c, "power_mw": gpu.power_mw,
        "power_limit_mw": gpu.power_limit_mw, "sm_clock_mhz": gpu.sm_clock_mhz,
        "state": gpu.state.value, "state_message": gpu.state_message,
        "processes": [process_json(process) for process in gpu.processes],
        "mig_instances": [instance.model_dump(mode="json") for instance in gpu.mig_instances],
    }  # fmt: skip


def process_json(process: GpuProcess) -> dict[str, Any]:
    return {
        "pid": process.pid, "used_bytes": process.used_bytes, "kind": process.kind.value, "name": process.name,
        "title": process.title, "cmdline": list(process.cmdline), "user": process.user, "role": process.role.value,
        "engine_id": process.engine_id, "engine_kind": process.engine_kind,
        "rank": process.rank.model_dump() if process.rank else None,
        "info_state": process.info_state.value, "info_message": process.info_message,
    }  # fmt: skip


def _layout(engine: EngineInstance, view: EngineView) -> dict[str, Any] | None:
    if view.ledger is not None:
        layout = view.ledger.layout
        return layout.model_dump() | {"gpus": layout.gpus, "attn_tp": layout.attn_tp}
    settings = engine.settings
    if settings is None:
        return None
    return {"tp": settings.tp, "pp": settings.pp, "dp": settings.dp, "ep": settings.effective_ep,
            "dcp": settings.dcp, "dp_attention": settings.enable_dp_attention}  # fmt: skip


def engine_json(view: EngineView) -> dict[str, Any]:
    engine = view.engine
    # `predicted` is the explained ledger (every measured cause applied), as each rank's `predicted` is its
    # rank; `plan` is the launch solved on empty GPUs, as `kvtop plan` has it (its deployment features in:
    # the waterfall's `clean_tokens` is the launch without them)
    predicted = _engine_ledger(view.explained or view.ledger)
    plan = _engine_ledger(view.ledger)
    return {
        "engine_id": engine.engine_id, "kind": engine.kind, "server_pid": engine.server_pid,
        "model": engine.model or (view.ledger.model.name if view.ledger else None),
        "host": engine.host, "port": engine.port, "settings_message": engine.settings_message,
        "layout": _layout(engine, view), "endpoint": engine.live.model_dump(mode="json"),
        "ledger_error": view.ledger_error, "predicted": predicted, "plan": plan,
        "pressure": _pressure_json(view),
        "ranks": [rank_view_json(rank) for rank in view.ranks],
    }  # fmt: skip


def _engine_ledger(ledger: Ledger | None) -> dict[str, Any] | None:
    """A ledger's engine-level keys (its ranks are each `ranks[].predicted`)."""
    return None if ledger is None else {key: value for key, value in ledger_json(ledger).items() if key != "ranks"}


def _pressure_json(view: EngineView) -> dict[str, Any] | None:
    pressure = pressure_of(view.engine.live)
    return None if pressure is None else pressure.model_dump(mode="json") | {"line": pressure.line()}


def rank_view_json(rank: RankView) -> dict[str, Any]:
    return {
        "gpu_index": rank.gpu_index,
        "pid": rank.pid,
        "rank": rank.rank.model_dump(),
        "observed": rank.observed.model_dump(mode="json"),
        "predicted": rank_json(rank.predicted) if rank.predicted else None,
        "predicted_resident_bytes": rank.predicted_resident_bytes,
        "predicted_worker_bytes": _worker_bytes(rank),
        "unexplained_bytes": rank.unexplained_bytes,
        "capacity": capacity_json(rank.capacity),
    }


def capacity_json(waterfall: CapacityWaterfall | None) -> dict[str, Any] | None:
    """The rank's waterfall: clean_tokens + Σ terms[].tokens == actual_tokens."""
    if waterfall is None:
        return None
    return {
        "clean_tokens": waterfall.clean_tokens,
        "actual_tokens": waterfall.actual_tokens,
        "actual_source": waterfall.actual_source.value,
        "terms": [term.model_dump(mode="json") for term in waterfall.terms],
    }


def _worker_bytes(rank: RankView) -> int | None:
    """The predicted bytes as NVML counts the worker's process: what `observed` is compared with."""
    prediction = rank.worker_prediction
    return None if prediction is None else prediction.worker_bytes


# --- text ---

_ROLE_TEXT = {"engine_server": "engine server", "engine_worker": "engine worker", "co_tenant": "co-tenant"}


def _gib(num_bytes: int | None, width: int) -> str:
    return f"{'—' if num_bytes is None else fmt_gib_figure(num_bytes):>{width}}"


def _tokens(tokens: int | None, width: int) -> str:
    return f"{'—' if tokens is None else fmt_tokens(tokens):>{width}}"


def rank_label(rank: EngineRank, *, show_dp: bool, show_pp: bool) -> str:
    """'TP3', 'DP2 TP0', 'PP1 TP0' — only the axes the engine really spreads over."""
    parts = [f"DP{rank.dp}"] if show_dp else []
    parts += [f"PP{rank.pp}"] if show_pp else []
    return " ".join([*parts, f"TP{rank.tp}"])


def _gpu_rows(snapshot: NodeSnapshot) -> list[str]:
    lines = [
        f"{'GPU':>4}  {'name':<24}{'used GiB':>10}{'reserved GiB':>14}{'free GiB':>10}{'total GiB':>11}{'util':>6}  state"
    ]
    for gpu in snapshot.observation.gpus:
        util = "—" if gpu.utilization_percent is None else f"{gpu.utilization_percent}%"
        state = gpu.state.value if gpu.state is GpuState.OK else f"{gpu.state.value}: {gpu.state_message}"
        lines.append(
            f"{gpu.index:>4}  {(gpu.name or '—')[:23]:<24}{_gib(gpu.used_bytes, 10)}{_gib(gpu.reserved_bytes, 14)}"
            f"{_gib(gpu.free_bytes, 10)}{_gib(gpu.total_bytes, 11)}{util:>6}  {state}"
        )
    return lines


def _process_rows(snapshot: NodeSnapshot) -> list[str]:
    spread = {view.engine.engine_id for view in snapshot.engines if len({r.rank.dp for r in view.ranks}) > 1}
    lines = [f"{'GPU':>4}  {'pid':>8}  {'role':<15}{'engine':<15}{'rank':<9}{'GiB':>8}  process"]
    for gpu in snapshot.observation.gpus:
        for process in gpu.processes:
            rank = "—"
            if process.rank:
                rank = rank_label(
                    process.rank,
                    show_dp=process.engine_id in spread or process.rank.dp > 0,
                    show_pp=process.rank.pp > 0,
                )
            owner = f" ({process.user})" if process.user else ""
            what = (process.title or process.name or process.info_message or "—") + owner
            lines.append(
                f"{gpu.index:>4}  {process.pid:>8}  {_ROLE_TEXT.get(process.role.value, process.role.value):<15}"
                f"{process.engine_id or '—':<15}{rank:<9}{_gib(process.used_bytes, 8)}  {what}"
            )
    return lines if len(lines) > 1 else []


def _engine_rows(view: EngineView) -> list[str]:
    engine, ledger = view.engine, view.ledger
    live = engine.live
    preset = f" (model {ledger.model.name})" if ledger and ledger.model.name != engine.model else ""
    layout = ledger.layout.describe() if ledger else "layout unknown"
    endpoint = live.state.value + (f" {live.base_url}" if live.base_url else "")
    head = f"{engine.engine_id}  {engine.model or '—'}{preset} · {layout} · endpoint {endpoint}"
    clean = next((r.capacity.clean_tokens for r in view.ranks if r.capacity is not None), None)
    if ledger:  # the waterfall's clean (the launch without its deployment features), as the table's column
        head += f" · clean {clean if clean is not None else ledger.token_capacity:,} tokens per rank"
    lines = [head]
    if view.ledger_error:
        lines.append(f"  {view.ledger_error}")
    if live.message:
        lines.append(f"  endpoint: {live.message}")
    tier = ledger.host_tier if ledger else None
    if tier is not None:
        lines.append(f"  host KV: {tier.connector} {tier.tokens_per_rank:,} tokens per rank beside the GPU pool's "
                     f"{tier.gpu_tokens_per_rank:,}, {_gib(tier.bytes_per_rank, 0).strip()} GiB per rank, "
                     f"{_gib(tier.total_bytes, 0).strip()} GiB over {tier.ranks} ranks")  # fmt: skip
    pressure = pressure_of(live)
    if pressure is not None and pressure.notable:  # as the dashboard: when requests wait, it preempts or drafts
        lines.append(f"  pressure: {pressure.line()}")
    show_dp = len({r.rank.dp for r in view.ranks}) > 1
    show_pp = len({r.rank.pp for r in view.ranks}) > 1
    lines.append(
        f"  {'rank':<10}{'GPU':>4}{'pid':>10}{'observed GiB':>14}{'predicted GiB':>15}{'unexplained GiB':>17}"
        f"{'tokens clean':>14}{'tokens now':>12}{'vs clean':>10}  {'KV used':>7}  largest cause"
    )
    for rank in view.ranks:
        usage = rank.observed.kv_usage_fraction
        lines.append(
            f"  {rank_label(rank.rank, show_dp=show_dp, show_pp=show_pp):<10}{rank.gpu_index:>4}{rank.pid:>10}"
            f"{_gib(rank.observed.process_bytes, 14)}{_gib(_worker_bytes(rank), 15)}"
            f"{_gib(rank.unexplained_bytes, 17)}"
            f"{_tokens(rank.capacity.clean_tokens if rank.capacity else None, 14)}"
            f"{_tokens(rank.capacity.actual_tokens if rank.capacity else None, 12)}"
            f"{fmt_signed(rank.capacity.change_tokens) if rank.capacity else '—':>10}"
            f"  {'—' if usage is None else f'{usage:.0%}':>7}  {_largest(rank.capacity)}"
        )
    if not view.ranks:
        lines.append("  (no rank of this engine holds GPU memory that kvtop can see)")
    return lines


def _largest(waterfall: CapacityWaterfall | None) -> str:
    """'other processes −128,660 (GPU 3, pid 4242)' for the term that costs the most, else the one that adds
    the most ('engine vs prediction +97,664'), else '—'."""
    term = waterfall.largest_change if waterfall else None
    return "—" if term is None else term.describe()


def snapshot_text(snapshot: NodeSnapshot) -> str:
    node = snapshot.observation
    head = f"kvtop snapshot · {snapshot.source}"
    if snapshot.simulated:
        head += f" ({SIMULATED})"
    if node.driver_version:
        head += f" · driver {node.driver_version}"
    head += f" · {counted(len(node.gpus), 'GPU')} · {counted(len(snapshot.engines), 'engine')}"
    lines = [head]
    if snapshot.notice:
        lines.append(f"notice: {snapshot.notice}")
    if node.host_memory is not None:
        host = node.host_memory
        lines.append(f"host memory {_gib(host.available_bytes, 0).strip()} GiB available of "
                     f"{_gib(host.total_bytes, 0).strip()} GiB")  # fmt: skip
    if node.desktop is not None:
        lines.append(node.desktop.sentence)
    lines.append("")
    lines += _gpu_rows(snapshot) if node.gpus else ["no GPUs observed"]
    processes = _process_rows(snapshot)
    if processes:
        lines += ["", *processes]
    for view in snapshot.engines:
        lines += ["", *_engine_rows(view)]
    if not snapshot.engines:  # as the dashboard says it: "0 engines" alone read as a count, not a finding
        lines += ["", f"no {display_names()} engine found on this node: nothing predicted"]
    return "\n".join(lines)
