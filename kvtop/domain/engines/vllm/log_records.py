"""The values vLLM's startup log states, per process (read by its `log_lines`).

Every memory figure is a `Measured` (bytes and the interval that prints the same text); counts are
ints; each process keeps its values in printed order (docs/engines/vllm.md §2, §5, §8).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from kvtop.domain.engine_log_records import Measured, RankLog, Rounded


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ModelLoading(_Frozen):
    """`Model loading took X GiB …` (V1) or `Loading model weights took X GB` (V0)."""

    memory: Measured
    seconds: float | None = None


class WarmupSizing(_Frozen):
    """v0.34.0's `Memory after warmup: F GiB free, C GiB committed to the KV cache, … ; N KV cache blocks (K GiB) fit
    within the requested R GiB.` (v1/worker/extensible_kv_cache.py:693-708): the extensible KV cache's real size,
    measured after warmup and CUDA-graph capture ('Available KV cache memory' before it is only the reservation)."""

    free: Measured
    committed: Measured
    num_blocks: int
    kv_cache: Measured
    requested: Measured


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


class RequestedMemory(_Frozen):
    """DEBUG `Initial free memory: F GiB; Requested memory: u (util), R GiB` (V1 gpu_worker.py
    `determine_available_memory`: u `%.2f` at v0.10.2 and v0.13.0, `%f` at v0.33.0)."""

    initial_free: Measured
    util: Rounded
    requested: Measured


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


class VllmRankLog(RankLog):
    """Everything one vLLM process printed (a worker or the engine core), in printed order."""

    model_loading: tuple[ModelLoading, ...] = ()
    available_kv_cache_memory: tuple[Measured, ...] = ()
    warmup_sizings: tuple[WarmupSizing, ...] = ()
    """v0.34.0's 'Memory after warmup' line (the extensible KV cache sized after warmup; absent before v0.34.0)."""
    kv_cache_tokens: tuple[int, ...] = ()
    max_concurrency: tuple[Concurrency, ...] = ()
    num_gpu_blocks: tuple[int, ...] = ()
    num_cpu_blocks: tuple[int, ...] = ()
    v1_gpu_blocks: tuple[int, ...] = ()  # `# GPU blocks: N` from V1's kv_cache_utils.py (early V1, before v0.8)
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
    requested_memories: tuple[RequestedMemory, ...] = ()
    v0_profiles: tuple[V0MemoryProfile, ...] = ()
    init_engine_seconds: tuple[float, ...] = ()
    block_sizes: tuple[int, ...] = ()
    """`Setting kv cache block size to N …` / `Setting attention block size to N tokens …`."""
    pipeline_stages: tuple[int, ...] = ()
    """`rank N in world size W is assigned as DP rank d, PP rank p, … TP rank t`: the process's stage p."""
    attention_backends: tuple[str, ...] = ()
    """The attention backend a `Using X backend` line names, in vLLM's enum spelling (`Using Triton MLA
    backend.` → TRITON_MLA; `Using AttentionBackendEnum.FLASHMLA backend.` → FLASHMLA)."""
    forced_blocks: tuple[int, ...] = ()
    encoder_cache_budgets: tuple[int, ...] = ()
    """`Encoder cache will be initialized with a budget of N tokens` (gpu_model_runner.py): N = encoder_cache_size
    = max_num_batched_tokens (config/scheduler.py), what an encoder-decoder's cross-attention blocks follow."""
    """`Forcing kv cache block size to N for X backend.` / `Setting kv cache block size to N for X backend(s).`"""
    compile_cache_loads: tuple[str, ...] = ()
    """`Directly load the compiled graph(s) …` / `Directly load AOT compilation from path …`: torch.compile's cache was
    warm (`compile_cache.py`)."""
    compile_cache_misses: tuple[str, ...] = ()
    """`Compiling a graph for compile range … takes …` (and the older `for dynamic shape` / `for shape` / `for general
    shape`): vLLM compiled the model's graph with Inductor in this start, its cache cold (`compile_cache.py`)."""
    compile_cache_disabled: tuple[str, ...] = ()
    """`vLLM's torch.compile cache is disabled.` (compilation/backends.py): this start neither loaded nor saved compiled
    graphs, so every start of the launch compiles cold (`compile_cache.py` DISABLED_LOGGED)."""
    device_names: tuple[str, ...] = ()
    """The CUDA device name a line states (`…/fused_moe/configs/E=160,N=192,device_name=NVIDIA_A100-SXM4-40GB.json`)."""
    ray_folded_kv_figures: tuple[int, ...] = ()
    """N of a KV-memory line ending `[repeated Nx across cluster]`: Ray's log deduplication printed one
    worker's figure and folded N other workers' lines into it, so their figures are not in the log."""
