"""How an engine behaves on a node, for the demo: the one seam the demo asks each engine package.

The demo builds what NVML, the process table and the endpoints would say; what differs between
engines (how a rank's process is named and parented, what the engine measured before it sized its
cache, what its worker holds, what its endpoint reports) lives in `kvtop/domain/engines/<id>/demo.py`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from pydantic import BaseModel, ConfigDict

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.ledger_values import RankLedger


class StartFigures(BaseModel):
    """What a start of this shape measured on a clean GPU: the demo's table of real starts
    (`kvtop.sources.demo_starts`); a runtime the table lacks, as the clean prediction expects it."""

    model_config = ConfigDict(frozen=True)

    cuda_total_bytes: int  # CUDA's total (vLLM's `total_gpu_memory`)
    non_kv_bytes: int | None = None  # runtime memory its profile charged (vLLM, TensorRT-LLM); None: none


class EngineSimulation(Protocol):
    def measured_for_truth(
        self, *, total_bytes: int, taken_before_load: Mapping[int, int], extra_bytes: Mapping[int, int],
        start: StartFigures,
    ) -> MeasuredInputs:  # fmt: skip
        """What the engine measured before sizing its cache on these GPUs (`taken_before_load`: bytes
        in use on each GPU before the weights loaded, the driver's share and each rank's context in it;
        `extra_bytes`: allocations its ranks made; `start`: what a clean start of this shape measured)."""
        ...

    def worker_identity(
        self, server_pid: int, settings: LaunchSettings, rank: RankLedger, position: int
    ) -> tuple[int, int, str]:
        """(pid, parent pid, process title) of a rank's GPU process, as the engine names and parents it;
        the server's own pid where the server runs the rank itself (TurboMind: one thread per GPU)."""
        ...

    def parent_title(self, settings: LaunchSettings, dp_rank: int) -> str:
        """The title of a worker's parent when it is not the server (vLLM's engine core)."""
        ...

    def worker_own_bytes(self, cuda_context: int, extra: int, extra_bytes: Mapping[int, int]) -> int:
        """What a worker holds besides its ledger (its CUDA context and extra allocations), given what
        the engine's budget already left room for."""
        ...

    reports_memory_bytes: bool  # its endpoint reports weight and KV bytes (SGLang's server info)
    reports_capacity: bool  # its endpoint reports the token capacity and blocks (LMDeploy's /metrics does not)
    labels_ranks_by_pid: bool  # its metrics label a rank by the scheduler's pid (SGLang), else by engine index
    # the counter its metrics count requests evicted for room by (EngineLiveRank field: vLLM preemptions,
    # SGLang retractions); None: its metrics count none
    evictions_counter: str | None


# What most engines share, for their `demo` modules to take as they are.


def sized_from_least_free_before_load(
    *, total_bytes: int, taken_before_load: Mapping[int, int], extra_bytes: Mapping[int, int],
    start: StartFigures,
) -> MeasuredInputs:  # fmt: skip
    """Every rank is sized from the least free GPU before the weights loaded (what was taken before the load
    is still taken when an engine that measures after the weights measures)."""
    return MeasuredInputs(free_before_load_bytes=total_bytes - max(taken_before_load.values()))


def context_holds_extra(cuda_context: int, extra: int, extra_bytes: Mapping[int, int]) -> int:
    """The ledger counts as context all that was taken before the load on the tightest rank."""
    return cuda_context + extra


def budget_left_room_for_extra(cuda_context: int, extra: int, extra_bytes: Mapping[int, int]) -> int:
    """The engine's budget (a profiled peak, a share of the total) already left room for the largest rank's
    extra bytes."""
    return cuda_context + extra - max(extra_bytes.values(), default=0)
