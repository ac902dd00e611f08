"""The values an engine's startup log states, per rank (assembled in `kvtop.domain.engine_log`).

Every memory figure SGLang and vLLM print is bytes / 2**30, whatever the label ("GB" in SGLang,
"GiB" in vLLM, "GB" in old vLLM), and it is rounded. A figure is therefore kept as `Measured`:
the bytes it stands for and the interval of bytes that print the same text. Counts (tokens,
blocks, requests) are exact ints. Each rank keeps its own values, in the order printed, because a
log can hold two weight loads (target + speculative draft), several KV pools, or two runs.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Literal

from pydantic import BaseModel, ConfigDict

GIB_BYTES = 1 << 30
_NUMBER = re.compile(r"([-+]?)(\d+)(?:\.(\d*))?")


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def _decimal(text: str) -> Decimal:
    try:
        return Decimal(text)
    except InvalidOperation:
        raise ValueError(f"not a number: {text!r}") from None


class Measured(_Frozen):
    """A rounded memory figure from a log: '8.23' GB means [8.225, 8.235] GiB, in bytes."""

    value_bytes: int
    low_bytes: int
    high_bytes: int
    decimals: int
    text: str
    """The number as printed, e.g. '22.5'."""
    unit: str = "GiB"
    """The label as printed ('GB' or 'GiB'); both mean 2**30 bytes in these engines."""

    @classmethod
    def from_text(cls, text: str, *, unit: str = "GiB", decimals: int | None = None) -> Measured:
        """Bytes and rounding interval of a printed GiB figure (`decimals` defaults to those printed).

        Exact integer arithmetic: '8.23' is 823/100 GiB, its interval ±1/200 GiB.
        """
        match = _NUMBER.fullmatch(text)
        if match is None:
            raise ValueError(f"not a number: {text!r}")
        sign, whole, fraction = match.group(1), match.group(2), match.group(3) or ""
        places = len(fraction) if decimals is None else decimals
        digits = max(places, len(fraction))
        scaled = int(whole + fraction.ljust(digits, "0")) * (-1 if sign == "-" else 1)
        denominator = 2 * 10**digits
        half = 10 ** (digits - places)
        return cls(
            value_bytes=(2 * scaled * GIB_BYTES + 10**digits) // denominator,
            low_bytes=((2 * scaled - half) * GIB_BYTES) // denominator,
            high_bytes=-((-(2 * scaled + half) * GIB_BYTES) // denominator),
            decimals=places,
            text=text,
            unit=unit,
        )

    @property
    def gib(self) -> float:
        """The figure in GiB, as the engine meant it."""
        return self.value_bytes / GIB_BYTES

    def contains(self, num_bytes: int) -> bool:
        """Whether `num_bytes` would print as this figure."""
        return self.low_bytes <= num_bytes <= self.high_bytes


class Rounded(_Frozen):
    """A rounded plain number (a utilisation, a concurrency): the value and its interval."""

    text: str
    decimals: int

    @classmethod
    def from_text(cls, text: str, *, decimals: int | None = None) -> Rounded:
        """Keep the printed text; `decimals` defaults to those printed."""
        _decimal(text)
        printed = len(text.split(".", 1)[1]) if "." in text else 0
        return cls(text=text, decimals=printed if decimals is None else decimals)

    @property
    def value(self) -> float:
        return float(self.text)

    @property
    def low(self) -> float:
        return float(_decimal(self.text) - Decimal(5).scaleb(-(self.decimals + 1)))

    @property
    def high(self) -> float:
        return float(_decimal(self.text) + Decimal(5).scaleb(-(self.decimals + 1)))


class RankKey(_Frozen):
    """Which process printed a line: ranks from `[… DP1 TP3 EP3]` or `(Worker_TP0_EP0 pid=…)`.

    All None means the line carried no rank (a single-GPU log, or an excerpt without prefixes).
    `worker` is vLLM's global `VllmWorker rank=N`, whose TP/PP split the line does not say.
    """

    dp: int | None = None
    tp: int | None = None
    pp: int | None = None
    ep: int | None = None
    worker: int | None = None

    @property
    def label(self) -> str:
        """'DP0 TP3 EP3', 'rank=1', or 'unranked'."""
        parts = [f"{name.upper()}{value}" for name, value in self._pairs() if value is not None]
        if self.worker is not None:
            parts.append(f"rank={self.worker}")
        return " ".join(parts) or "unranked"

    def sort_key(self) -> tuple[int, ...]:
        """Unranked first, then by DP, PP, TP, EP, worker."""
        values = (self.dp, self.pp, self.tp, self.ep, self.worker)
        return tuple(-1 if value is None else value for value in values)

    def _pairs(self) -> tuple[tuple[str, int | None], ...]:
        return (("dp", self.dp), ("pp", self.pp), ("tp", self.tp), ("ep", self.ep))


class StartupFailure(_Frozen):
    """An error line showing the engine refused to start (KV sizing, memory, `failed to start`).

    `text` is the error as printed, from the exception name or message on (prefix removed).
    """

    rank: RankKey
    text: str


# --- SGLang ---------------------------------------------------------------------------------


class WeightLoad(_Frozen):
    """One `Load weight begin` / `Load weight end` pair (the second pair is a speculative draft)."""

    avail_before: Measured | None = None
    avail_after: Measured | None = None
    mem_usage: Measured | None = None
    elapsed_s: float | None = None
    model_class: str | None = None
    dtype: str | None = None
    quant: str | None = None


class KvAllocation(_Frozen):
    """`KV Cache is allocated`: one pool (MHA K and V, or MLA/DSA one KV buffer)."""

    dtype: str | None = None
    tokens: int | None = None
    k_size: Measured | None = None
    v_size: Measured | None = None
    kv_size: Measured | None = None


class SwaPoolUsage(_Frozen):
    """`SWAKVPool mem usage: X GB, swa size: S, full size: F`."""

    mem_usage: Measured | None = None
    swa_tokens: int | None = None
    full_tokens: int | None = None


class SlidingWindowSplit(_Frozen):
    """`Use sliding window memory pool. full_layer_tokens=F, swa_layer_tokens=S`."""

    full_layer_tokens: int | None = None
    swa_layer_tokens: int | None = None


class MambaAllocation(_Frozen):
    """`Mamba Cache is allocated. max_mamba_cache_size: N, conv_state size: …, ssm_state size: …`."""

    max_mamba_cache_size: int | None = None
    conv_state: Measured | None = None
    ssm_state: Measured | None = None


class GraphCapture(_Frozen):
    """A CUDA-graph capture: `phase` is '' (decode, old wording), 'target decode', 'piecewise', …"""

    phase: str = ""
    avail_before: Measured | None = None
    mem_usage: Measured | None = None
    avail_after: Measured | None = None
    elapsed_s: float | None = None


class SchedulerSummary(_Frozen):
    """The scheduler's `max_total_num_tokens=…, …, available_gpu_mem=… GB` line (TP0 only)."""

    max_total_num_tokens: int | None = None
    chunked_prefill_size: int | None = None
    max_prefill_tokens: int | None = None
    max_running_requests: int | None = None
    context_len: int | None = None
    available_gpu_mem: Measured | None = None


class ProfiledTokenOverride(_Frozen):
    """`max_total_tokens=A is larger than the profiled value B. Use the profiled value instead.`"""

    max_total_tokens: int
    profiled_tokens: int


class PostCaptureResize(_Frozen):
    """`Post-capture KV sizing: max_total_num_tokens=N, free memory=X GB`."""

    max_total_num_tokens: int | None = None
    free_memory: Measured | None = None


class KvBudgetError(_Frozen):
    """SGLang refused to size the KV cache: 'no_memory_for_kv' (rest ≤ 0) or 'not_enough_memory'."""

    kind: Literal["no_memory_for_kv", "not_enough_memory"]
    mem_fraction_static: float | None = None
    minimum_viable: Rounded | None = None
    message: str


class SglangRankLog(_Frozen):
    """Everything one SGLang rank printed, each kind of line in printed order."""

    rank: RankKey
    init_dist_mem_usage: tuple[Measured, ...] = ()
    weight_loads: tuple[WeightLoad, ...] = ()
    kv_cache_dtype: str | None = None
    kv_allocations: tuple[KvAllocation, ...] = ()
    swa_pools: tuple[SwaPoolUsage, ...] = ()
    sliding_window_splits: tuple[SlidingWindowSplit, ...] = ()
    mamba_allocations: tuple[MambaAllocation, ...] = ()
    memory_pool_end_avail: tuple[Measured, ...] = ()
    graph_captures: tuple[GraphCapture, ...] = ()
    scheduler_summaries: tuple[SchedulerSummary, ...] = ()
    profiled_token_overrides: tuple[ProfiledTokenOverride, ...] = ()
    post_capture_resizes: tuple[PostCaptureResize, ...] = ()
    mm_reserves: tuple[Measured, ...] = ()
    budget_errors: tuple[KvBudgetError, ...] = ()
    max_allowed_input_lengths: tuple[int, ...] = ()
    """From a rejected request: `maximum allowed length (N tokens)` (SGLang's max_req_input_len)."""

    @property
    def target_load(self) -> WeightLoad | None:
        """The first weight load (the served model)."""
        return self.weight_loads[0] if self.weight_loads else None

    @property
    def draft_load(self) -> WeightLoad | None:
        """The second weight load, when a speculative draft model was loaded."""
        return self.weight_loads[1] if len(self.weight_loads) > 1 else None


# --- vLLM -----------------------------------------------------------------------------------


class ModelLoading(_Frozen):
    """`Model loading took X GiB …` (V1) or `Loading model weights took X GB` (V0)."""

    memory: Measured
    seconds: float | None = None


class Concurrency(_Frozen):
    """`Maximum concurrency for L tokens per request: C x`."""

    tokens_per_request: int
    concurrency: Rounded


class BlocksOverride(_Frozen):
    """`Overriding num_gpu_blocks=A with num_gpu_blocks_override=B`."""

    num_gpu_blocks: int
    override: int


class GraphAdvisory(_Frozen):
    """The CUDA-graph profiling advisory: util, its equivalent without profiling, the suggestion."""

    util: Rounded | None = None
    equivalent_util: Rounded | None = None
    suggested_util: Rounded | None = None


class GraphCaptureFinished(_Frozen):
    """`Graph capturing finished in N secs, took X GiB`."""

    seconds: float
    memory: Measured


class GraphPool(_Frozen):
    """`CUDA graph pool memory: a GiB (actual), b GiB (estimated), difference: d GiB (p%)`."""

    actual: Measured | None = None
    estimated: Measured | None = None
    difference: Measured | None = None
    difference_pct: Rounded | None = None


class StartupLedger(_Frozen):
    """The per-rank `Free memory on device (F/T GiB) on startup. …` ledger.

    Version A names weights, peak activation and non-torch memory; Version B names consumed
    memory (weights + non-torch) and peak activation (transient + CUDA graphs).
    """

    free: Measured | None = None
    total: Measured | None = None
    util: Rounded | None = None
    requested: Measured | None = None
    weights: Measured | None = None
    consumed: Measured | None = None
    peak_activation: Measured | None = None
    non_torch: Measured | None = None
    cuda_graph: Measured | None = None
    fit_kv_bytes: int | None = None
    fit_kv: Measured | None = None
    full_kv_bytes: int | None = None
    full_kv: Measured | None = None
    kv_in_use: Measured | None = None

    @property
    def wording(self) -> Literal["A", "B"] | None:
        """'B' when the line names consumed memory, 'A' when it names weights."""
        if self.consumed is not None:
            return "B"
        return "A" if self.weights is not None else None


class StartupShortfall(_Frozen):
    """`Free memory on device (F/T GiB) on startup is less than desired … (u, R GiB)`."""

    free: Measured | None = None
    total: Measured | None = None
    util: Rounded | None = None
    requested: Measured | None = None


class KvAdmissionError(_Frozen):
    """`To serve at least one request with the model's max seq len (L), X GiB KV cache is needed …`."""

    max_seq_len: int | None = None
    needed: Measured | None = None
    available: Measured | None = None
    estimated_max_model_len: int | None = None


class KvTokenShortfall(_Frozen):
    """V0: `The model's max seq len (L) is larger than … stored in KV cache (N)`."""

    max_seq_len: int
    kv_tokens: int


class KvMemoryReserved(_Frozen):
    """`Initial free memory F GiB, reserved R GiB memory for KV Cache as specified by kv_cache_memory_bytes`."""

    initial_free: Measured
    reserved: Measured


class V0MemoryProfile(_Frozen):
    """V0 `Memory profiling results: …` figures, keyed by the printed name.

    Keys: total_gpu_memory, initial_memory_usage, peak_torch_memory, memory_usage_post_profile,
    non_torch_memory, kv_cache_size, and from the v0.7 sentences requested, weights,
    peak_activation (with kv_cache_size for 'the rest … reserved for KV Cache').
    """

    figures: dict[str, Measured] = {}
    gpu_memory_utilization: float | None = None


class VllmRankLog(_Frozen):
    """Everything one vLLM process printed (a worker or the engine core), in printed order."""

    rank: RankKey
    model_loading: tuple[ModelLoading, ...] = ()
    available_kv_cache_memory: tuple[Measured, ...] = ()
    kv_cache_tokens: tuple[int, ...] = ()
    max_concurrency: tuple[Concurrency, ...] = ()
    num_gpu_blocks: tuple[int, ...] = ()
    num_cpu_blocks: tuple[int, ...] = ()
    blocks_overrides: tuple[BlocksOverride, ...] = ()
    graph_advisories: tuple[GraphAdvisory, ...] = ()
    estimated_cuda_graph_memory: tuple[Measured, ...] = ()
    graph_captures: tuple[GraphCaptureFinished, ...] = ()
    graph_pools: tuple[GraphPool, ...] = ()
    startup_ledgers: tuple[StartupLedger, ...] = ()
    startup_shortfalls: tuple[StartupShortfall, ...] = ()
    admission_errors: tuple[KvAdmissionError, ...] = ()
    token_shortfalls: tuple[KvTokenShortfall, ...] = ()
    kv_memory_reserved: tuple[KvMemoryReserved, ...] = ()
    v0_profiles: tuple[V0MemoryProfile, ...] = ()
    init_engine_seconds: tuple[float, ...] = ()
    block_sizes: tuple[int, ...] = ()
    """`Setting kv cache block size to N …` / `Setting attention block size to N tokens …`."""
