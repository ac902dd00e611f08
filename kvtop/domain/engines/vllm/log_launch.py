"""The GPU's total and the memory fraction a vLLM log prints (docs/engines/vllm.md §2.2, §13), read once, and
how explain's steps say where each came from.

`kvtop explain` solves with them where no --gpu / --gpu-memory-utilization says (measured, never the 80 GiB
stand-in or a default beside a log that states otherwise):
- CUDA's device total: the V1 startup ledger `Free memory on device (F/T GiB) on startup. …` and its `… is less
  than desired …` refusal (`init_snapshot.total_memory`, torch.cuda.mem_get_info; gpu_worker.py: v0.10.2 :391,
  v0.13.0 :495 / :248, v0.33.0 :1045 / v1/worker/utils.py :766), else V0's `total_gpu_memory (T GiB)` profile.
- The fraction: the ledger's `Desired GPU memory utilization is (u, R GiB)` (u as the config holds it), else the
  DEBUG `Initial free memory: F GiB; Requested memory: u (util), R GiB` (u `%.2f` at v0.10.2 :284 and v0.13.0
  :363, `%f` at v0.33.0 :761), else V0's `gpu_memory_utilization`.
"""

from __future__ import annotations

from kvtop.domain.engine_log import EngineLog, Measured
from kvtop.domain.engines.vllm.log_records import StartupLedger, StartupShortfall, VllmRankLog
from kvtop.domain.explanation import (
    Explanation,
    FractionOrigin,
    LoggedDevice,
    fraction_said,
    logged_total_said,
)
from kvtop.domain.launch import LaunchSettings

_Ledger = StartupLedger | StartupShortfall


def _ledgers(rank: VllmRankLog) -> tuple[_Ledger, ...]:
    return (*rank.startup_ledgers, *rank.startup_shortfalls)


def _ledger_total(rank: VllmRankLog) -> tuple[Measured, str] | None:
    found = next((ledger for ledger in _ledgers(rank) if ledger.total is not None), None)
    if found is None or found.total is None:
        return None
    free = f"{found.free.text}/" if found.free is not None else "…/"
    return found.total, f"`Free memory on device ({free}{found.total.text} GiB) on startup`"


def _v0_total(rank: VllmRankLog) -> tuple[Measured, str] | None:
    profile = next((p for p in rank.v0_profiles if "total_gpu_memory" in p.figures), None)
    if profile is None:
        return None
    total = profile.figures["total_gpu_memory"]
    return total, f"V0's `total_gpu_memory ({total.text} GiB)`"


def _ledger_fraction(rank: VllmRankLog) -> tuple[float, str] | None:
    found = next((ledger for ledger in _ledgers(rank) if ledger.util is not None), None)
    if found is None or found.util is None:
        return None
    requested = f", {found.requested.text} GiB" if found.requested is not None else ""
    return found.util.value, f"`Desired GPU memory utilization is ({found.util.text}{requested})`"


def _debug_fraction(rank: VllmRankLog) -> tuple[float, str] | None:
    if not rank.requested_memories:
        return None
    first = rank.requested_memories[0]
    return first.util.value, f"`Requested memory: {first.util.text} (util), {first.requested.text} GiB`"


def _v0_fraction(rank: VllmRankLog) -> tuple[float, str] | None:
    util = next(
        (p.gpu_memory_utilization for p in rank.v0_profiles if p.gpu_memory_utilization is not None), None
    )
    return (util, f"V0's `gpu_memory_utilization ({util:g})`") if util is not None else None


def logged_device(log: EngineLog) -> LoggedDevice:
    """The device total and the fraction the log prints (the first process that prints each), with their lines."""
    total = log.first(VllmRankLog, _ledger_total) or log.first(VllmRankLog, _v0_total)
    fraction = (
        log.first(VllmRankLog, _ledger_fraction)
        or log.first(VllmRankLog, _debug_fraction)
        or log.first(VllmRankLog, _v0_fraction)
    )
    return LoggedDevice(
        total=total[0] if total else None,
        total_line=total[1] if total else "",
        fraction=fraction[0] if fraction else None,
        fraction_line=fraction[1] if fraction else "",
    )


def launch_fraction(
    settings: LaunchSettings, device: LoggedDevice
) -> tuple[LaunchSettings, FractionOrigin, list[str]]:
    """The launch's gpu_memory_utilization: the flags' (given or the log's printed arguments), else the one the log
    prints (`logged_device`), else the release's default; which ('flag', 'log', 'default'), and a contradiction said."""
    given = settings.gpu_memory_utilization
    if given is not None:  # the DEBUG line prints it at 2 decimals before v0.33.0: a half-step is the same
        differs = device.fraction is not None and abs(device.fraction - given) > 0.005
        said = [
            f"--gpu-memory-utilization {given:g}: kvtop was told it, but the log prints {device.fraction_line}"
        ]
        return settings, "flag", said if differs else []
    if device.fraction is not None:
        return settings.model_copy(update={"gpu_memory_utilization": device.fraction}), "log", []
    return settings, "default", []


def device_said(
    result: Explanation, device: LoggedDevice, stated: int | None, fraction_from: FractionOrigin
) -> Explanation:
    """The GPU-memory step named as the log's (`stated`), and the requested step's fraction as the log's, or as a
    default the log does not state; the flag's is the budget's own wording."""
    if result.ledger is None:
        return result
    ledger = (
        logged_total_said(result.ledger, device.total_line, stated) if stated is not None else result.ledger
    )
    ledger = fraction_said(ledger, fraction_from, device.fraction_line)
    return result.model_copy(update={"ledger": ledger})
