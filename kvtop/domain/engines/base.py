"""The interface every engine's budget rules implement, and the values they exchange."""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel, ConfigDict

from kvtop.domain.kv import KvBook
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.layout import ParallelLayout, PpRemainder
from kvtop.domain.model import ModelSpec

GIB = 1 << 30
MIB = 1 << 20
# Memory the CUDA context and NCCL take before weights load, when nothing measured it
# (SGLang logs it as `Init torch distributed ends. mem usage=…`: ≈ 0.6–1.2 GiB on H100 nodes).
DEFAULT_CONTEXT_BYTES = 1 * GIB


class MeasuredInputs(BaseModel):
    """Measured values that replace kvtop's predictions (from NVML, a log, or the operator)."""

    model_config = ConfigDict(frozen=True)

    gpu_total_bytes: int | None = None
    free_before_load_bytes: int | None = None  # min over ranks, after CUDA/NCCL init
    free_after_load_bytes: int | None = None  # min over ranks, once every weight is resident
    weights_bytes: int | None = None  # resident weights per rank (largest rank)
    non_kv_bytes: int | None = None  # vLLM: activation peak + non-torch + CUDA graphs (weights excluded)
    available_kv_bytes: int | None = None  # vLLM: `Available KV cache memory`, when logged


class BudgetStep(BaseModel):
    """One line of the engine's own arithmetic, shown to the operator in order."""

    model_config = ConfigDict(frozen=True)

    label: str
    bytes: int | None = None
    value: float | None = None
    note: str = ""
    measured: bool = False


class EngineInputs(BaseModel):
    """Everything an engine's rules need for one rank set (the tightest rank decides)."""

    model_config = ConfigDict(frozen=True)

    model: ModelSpec
    layout: ParallelLayout
    settings: LaunchSettings
    gpu_total_bytes: int
    gpu_name: str | None = None  # e.g. "A100-80GB": some engine defaults follow the GPU model
    weights_bytes: int  # the largest rank's resident weights (predicted or measured)
    kv: KvBook  # the KV book of the rank with the most KV per token
    context_length: int
    measured: MeasuredInputs = MeasuredInputs()


class EngineResult(BaseModel):
    """What the engine would allocate and log."""

    model_config = ConfigDict(frozen=True)

    engine: str
    token_capacity: int  # the number the engine logs (0 when it does not fit)
    swa_token_capacity: int | None = None
    page_size: int
    num_blocks: int | None = None  # vLLM
    kv_budget_bytes: int  # bytes the engine hands to the KV pools
    kv_pool_bytes: int  # bytes the pools really take (padding rows, state, index included)
    state_pool_bytes: int = 0
    max_running_requests: int
    max_concurrency: float | None  # vLLM's expression; None where the engine has none
    req_to_token_bytes: int = 0
    reserve_bytes: int  # runtime reserve kept outside weights and KV
    memory_fraction: float  # mem_fraction_static or gpu_memory_utilization actually used
    memory_fraction_source: str
    fits: bool
    shortfall_bytes: int = 0
    steps: tuple[BudgetStep, ...]
    notes: tuple[str, ...] = ()


class EngineRules(Protocol):
    name: str
    pp_remainder: PpRemainder
    honours_checkpoint_kv_dtype: bool

    def default_page_size(self, model: ModelSpec) -> int: ...

    def solve(self, inputs: EngineInputs) -> EngineResult: ...
