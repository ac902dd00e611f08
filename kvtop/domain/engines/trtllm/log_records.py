"""The values TensorRT-LLM's startup log states, per process (read by its `log_lines`).

Python lines (`[TRT-LLM] [RANK n] [I] …`) carry their MPI rank; the C++ runtime's lines
(`[TensorRT-LLM][INFO] …`) carry none. Memory figures are `Measured` (GiB, or MiB where the line says
MiB); counts are ints; each process keeps its values in printed order, because the PyTorch backend
allocates the KV pool twice, a temporary one for its profiling run and then the real one
(docs/engines/trtllm.md §3, §7).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from kvtop.domain.engine_log_records import Measured, RankLog


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ProfileSummary(_Frozen):
    """`Peak memory during memory usage profiling (torch + non-torch): P GiB, available KV cache memory
    when calculating max tokens: A GiB[, fraction is set F, kv size [per token] is K[ bytes/token]. device
    total memory T GiB, , tmp kv_mem M GiB | temporary kv cache memory during profiling M GiB]`."""

    peak: Measured | None = None
    available: Measured | None = None
    fraction: float | None = None  # as printed, full precision (0.8999999761581421: a C++ float)
    kv_bytes_per_token: int | None = None  # the estimator's cost (§1.1)
    device_total: Measured | None = None
    temporary_pool: Measured | None = None


class PoolAllocation(_Frozen):
    """`[MemUsageChange] Allocated X GiB for max tokens in paged KV cache (N).`: one pool of N tokens."""

    memory: Measured
    tokens: int


class ModelCreation(_Frozen):
    """`Model: B / A` in the 1.0+ PyTorch backend's creation summary ("Previously created components and free GPU
    memory before/after creation (GiB)", pyexecutor `_ExecutorMemoryMonitor`, `.2f`): the free memory before and after
    the model was built on the device, so B − A is what its weights took. Only where `_ExecutorCreationStage`'s value
    is "Model" (trtllm-5872, 1.0.0rc); later releases print `ExecutorMemoryType` values (`model`, `model_weights`), not
    read (docs/engines/trtllm.md)."""

    before: Measured
    after: Measured

    @property
    def weights(self) -> Measured:
        """B − A with the interval of the two rounded figures (each ± half a hundredth of a GiB)."""
        value = self.before.value_bytes - self.after.value_bytes
        low, high = self.before.low_bytes - self.after.high_bytes, self.before.high_bytes - self.after.low_bytes
        text = f"{self.before.text} − {self.after.text}"
        return Measured(value_bytes=value, low_bytes=low, high_bytes=high, decimals=2, text=text, unit="GiB")


class BlocksPerSequence(_Frozen):
    """`Max KV cache blocks per sequence: M [window size=W], tokens per block=T, primary blocks=P, …`."""

    max_blocks_per_sequence: int
    window_size: int | None = None
    tokens_per_block: int | None = None
    primary_blocks: int | None = None
    secondary_blocks: int | None = None
    max_sequence_length: int | None = None


class CppMemory(_Frozen):
    """`Memory usage when calculating max tokens in paged kv cache: total: T GiB, available: A GiB`."""

    total: Measured
    available: Measured


class ExecutorSummary(_Frozen):
    """`max_seq_len=…, max_num_requests=…, max_num_tokens=…, max_batch_size=…` after each pool."""

    max_seq_len: int | None = None
    max_num_requests: int | None = None
    max_num_tokens: int | None = None
    max_batch_size: int | None = None


class TrtllmRankLog(RankLog):
    """Everything one TensorRT-LLM process printed (a rank, or the unranked C++ runtime), in order."""

    pytorch_backend: bool = False
    """`Using LLM with PyTorch backend` (or a PyTorch-backend profiling line)."""
    weights_loaded: tuple[Measured, ...] = ()  # `Use X GB for model weights.` (host-side estimate)
    weights_inside_torch: tuple[Measured, ...] = ()
    outside_torch_after_load: tuple[Measured, ...] = ()
    activation: tuple[Measured, ...] = ()  # `Memory dynamically allocated during inference (inside torch)`
    outside_torch_profiling: tuple[
        Measured, ...
    ] = ()  # `Memory used outside torch (e.g., NCCL and CUDA graphs)`
    profiles: tuple[ProfileSummary, ...] = ()
    estimated_max_memory: tuple[Measured, ...] = ()  # `Estimated max memory in KV cache : A GiB`
    max_tokens_set: tuple[int, ...] = ()
    """The exact `max_tokens` of each pool: `Both free_gpu_memory_fraction and max_tokens are set (to F and T…)`
    or `max_tokens is set by kv_cache_config.max_tokens: T`."""
    window_upper_bounds: tuple[int, ...] = ()  # `Attention window size W exceeds upper bound U …`
    inferred_max_seq_len: tuple[int, ...] = ()  # `max_seq_len is not specified, using inferred value N`
    executor_summaries: tuple[ExecutorSummary, ...] = ()
    cpp_memory: tuple[CppMemory, ...] = ()
    starts_at: tuple[int, ...] = ()
    """At each `[TensorRT-LLM] TensorRT-LLM version: X` banner (printed as a process imports tensorrt_llm, once a
    start: trtllm-bench's MPI workers print none of their own), how many `cpp_memory` lines came before it."""
    primary_pool_blocks: tuple[int, ...] = ()  # `Number of blocks in KV cache primary pool: B`
    blocks_per_sequence: tuple[BlocksPerSequence, ...] = ()
    tokens_per_block: tuple[int, ...] = ()  # `Number of tokens per block: T.`
    allocations: tuple[PoolAllocation, ...] = ()
    legacy_pool_bytes: tuple[int, ...] = ()  # ≤ v0.8 `Allocate N bytes for k/v cache.`
    legacy_pool_tokens: tuple[int, ...] = ()  # ≤ v0.8 `Using N [total ]tokens in paged KV cache[, and M blocks …]`
    legacy_blocks_per_sequence: tuple[int, ...] = ()  # ≤ v0.7 `…, and M blocks per sequence`
    # 1.0+ PyTorch backend, `Executor creation failed due to insufficient GPU memory.` and its summary:
    components_not_created: tuple[str, ...] = ()  # `The following component could not be created: KV cache`
    free_before_creation: tuple[Measured, ...] = ()  # `Free GPU memory before component creation attempt (GiB): F`
    creation_total: tuple[Measured, ...] = ()  # `Total GPU memory (GiB): T`
    model_creation: tuple[ModelCreation, ...] = ()  # `Model: B / A` (free GiB before / after the model was built)
    engine_size: tuple[Measured, ...] = ()  # `Loaded engine size: N MiB`
    execution_context: tuple[
        Measured, ...
    ] = ()  # `[MemUsageChange] Allocated X MiB for execution context memory.`

    @property
    def last_start_cpp_memory(self) -> tuple[CppMemory, ...]:
        """The `cpp_memory` lines of the last start that printed any: those after the last banner that has lines
        after it (a log holding two starts, a restarted container's `docker logs`, keeps the later one's; a log
        without a banner, all of them)."""
        begun = max((at for at in self.starts_at if at < len(self.cpp_memory)), default=0)
        return self.cpp_memory[begun:]
