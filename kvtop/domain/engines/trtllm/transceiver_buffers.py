"""A disaggregated worker's cache transceiver buffers (`cache_transceiver_config`): named in the plan, not charged
(docs/engines/trtllm.md §8).

What the code does, read in stored copies of TensorRT-LLM (no 1.2.x release tree was readable; the copies are the
search index's, 2025–2026): the PyTorch executor builds its cache transceiver once, with the executor that runs the
KV-estimation forward, before the KV cache is sized (NVIDIA/TensorRT-LLM PR #4153, merged 2025-05: "Since
cacheTransceiver has been created once before calculate kvCache tokens, we don't need to add prealloc size to
peak_memory"; before it `estimate_max_kv_cache_tokens` added `get_cache_transceiver_prealloc_size` to the peak:
_torch/pyexecutor/_util.py, stored copy id 9136361103). `CacheTransBufferManager` (batch_manager/cacheTransBuffer.cpp,
stored copies ids 57029962989, 798615167) sizes one transfer buffer as Σ over layers of (min(the layer's attention
window rounded up to whole blocks, max_tokens_in_buffer) + one block) × the layer's KV bytes per token (without
max_tokens_in_buffer: TRTLLM_KVCACHE_TRANSFER_BUFFER_SIZE's size) and allocates one receive buffer (more under
TRTLLM_REQUEST_KV_CACHE_CONCURRENT) and TRTLLM_KVCACHE_SEND_MAX_CONCURRENCY_NUM send buffers, outside torch. In those
copies `BaseTransBufferManager`'s constructor allocates every buffer whole (`allocateBuffer`, baseTransBuffer.cpp,
stored copy id 3481365997): held through the estimation forward, they would be in its peak, the pool losing
free_gpu_memory_fraction × their bytes. The one start below fell short of the plan by less than that mechanism
gives at any default read (one receive and one send buffer are already 2.26 GiB before the fraction against its
1.46), so the mechanism is a reading of copies not tied to a release, not a measured term.

Why not charged: the send count's default differs by copy (2 in envUtils.cpp ids 2541780136 and 7571199783; 1 and 4
in the disaggregated-serving docs' copies ids 1199309999 and 9018995822) and whether each buffer is allocated whole at
construction at a given release was not read at its tag. The only start in kvtop's corpus that runs the transceiver
(ddpslab-disagg-t1-qwen3-4b-l4-trtllm-121, 1.2.1, L4, NIXL, 8,192 tokens) kept 9,024 tokens (1.24 GiB) fewer than the
plan: 1.46 GiB before the fraction, between one buffer (1.13 GiB) and two (2.26), on a card and with CUDA graphs off
(cuda_graph_config: null, read since: cuda_graphs.py, §37) that no other TensorRT-LLM record shares. The plan names the buffers and their
size per buffer; it charges none.
"""

from __future__ import annotations

from kvtop.domain.deployment_flags import flag_int, flag_text
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.rounding import ceil_div
from kvtop.domain.wording import gib

BACKEND_KEY = "cache_transceiver_config.backend"
TOKENS_KEY = "cache_transceiver_config.max_tokens_in_buffer"


def runs_transceiver(settings: LaunchSettings) -> bool:
    """Whether the launch configures a cache transceiver (a backend, or a buffer size): a disaggregated worker."""
    return flag_text(settings, BACKEND_KEY) is not None or flag_int(settings, TOKENS_KEY) is not None


def transfer_buffer_bytes(max_tokens: int, window: int, tokens_per_block: int, bytes_per_token: int) -> int:
    """One transfer buffer for a model whose layers share one window: (min(the window rounded up to whole blocks,
    max_tokens_in_buffer) + one block) × KV bytes per token (cacheTransBuffer.cpp computeTransferBufferSize)."""
    aligned = ceil_div(window, tokens_per_block) * tokens_per_block
    return (min(aligned, max_tokens) + tokens_per_block) * bytes_per_token


def transceiver_note(
    settings: LaunchSettings, window: int, tokens_per_block: int, bytes_per_token: int, fraction: float
) -> str | None:
    """The plan's words for a launch that runs the cache transceiver: its buffers named, sized per buffer where
    max_tokens_in_buffer is given, not charged; None for a launch without one."""
    if not runs_transceiver(settings):
        return None
    backend = flag_text(settings, BACKEND_KEY) or "DEFAULT"
    tokens = flag_int(settings, TOKENS_KEY)
    head = (f"cache_transceiver_config (backend {backend}): the disaggregated worker's KV transfer buffers are not "
            "modelled; in TensorRT-LLM's code as read (not at this release) they are built before the KV cache is "
            "sized (PR #4153), one receive and TRTLLM_KVCACHE_SEND_MAX_CONCURRENCY_NUM send buffers (its default not "
            "read at this release), and would each cost the pool free_gpu_memory_fraction × its bytes")  # fmt: skip
    if tokens is None or bytes_per_token <= 0 or tokens_per_block <= 0:
        return f"{head} (TRTLLM_KVCACHE_TRANSFER_BUFFER_SIZE's size each: not read)"
    one = transfer_buffer_bytes(tokens, window, tokens_per_block, bytes_per_token)
    lost = int(one * fraction) // bytes_per_token
    return (f"{head}: {gib(one)} each at max_tokens_in_buffer {tokens:,} (min(window, {tokens:,}) + {tokens_per_block} "
            f"tokens × {bytes_per_token:,} B), ≈ {lost:,} tokens of this plan per buffer (cacheTransBuffer.cpp)")
