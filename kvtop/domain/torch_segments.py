"""What PyTorch's CUDA caching allocator reserves for tensors allocated one after another and never freed: the
segments it asks CUDA for, which is what `torch.cuda.mem_get_info()` sees after `empty_cache()` (an engine that
measures its weights as the free memory before less after the load sees these, not the tensors' bytes), and the
blocks the tensors hold, which is what `torch.cuda.memory_allocated()` counts (vLLM's measure).

The rules, as PyTorch's c10/cuda/CUDACachingAllocator.cpp states them (the same in torch 2.x; the file as the
search index keeps it, id 171536164): every request is rounded up to 512 B (`round_size`, kMinBlockSize); one of at
most 1 MiB (kSmallSize) is served from the small pool, a larger one from the large pool; a request no free block of
its pool fits opens a segment of `get_allocation_size`: 2 MiB (kSmallBuffer) for a small request, 20 MiB
(kLargeBuffer) for one under 10 MiB (kMinLargeAlloc), else the request rounded up to 2 MiB (kRoundLarge); a free
block is taken best fit (`get_free_block`: the smallest that fits), and the rest of it stays a free block only where
`should_split` says so: 512 B or more in the small pool, more than 1 MiB in the large pool (with the default
`max_split_size`); a rest the allocator does not split stays with the tensor. Not modelled: PYTORCH_CUDA_ALLOC_CONF
(`expandable_segments:True` maps pages as the tensors grow, and wastes almost nothing).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator

from kvtop.domain.rounding import round_up

MIN_BLOCK_BYTES = 512  # kMinBlockSize: every request rounded up to it
SMALL_REQUEST_BYTES = 1 << 20  # kSmallSize: the largest request the small pool serves
SMALL_SEGMENT_BYTES = 2 << 20  # kSmallBuffer: a small pool's segment
LARGE_SEGMENT_BYTES = 20 << 20  # kLargeBuffer: the segment of a request under MIN_LARGE_SEGMENT_REQUEST_BYTES
MIN_LARGE_SEGMENT_REQUEST_BYTES = 10 << 20  # kMinLargeAlloc: from here a request gets a segment of its own
LARGE_ROUNDING_BYTES = 2 << 20  # kRoundLarge: such a segment is the request rounded up to 2 MiB


def segment_bytes(request: int) -> int:
    """The segment opened for a request (already rounded to 512 B) no free block fits (`get_allocation_size`)."""
    if request <= SMALL_REQUEST_BYTES:
        return SMALL_SEGMENT_BYTES
    if request < MIN_LARGE_SEGMENT_REQUEST_BYTES:
        return LARGE_SEGMENT_BYTES
    return round_up(request, LARGE_ROUNDING_BYTES)


def _carve(tensor_bytes: Iterable[int]) -> Iterator[tuple[int, int]]:
    """For each tensor of `tensor_bytes` (in the order allocated, none freed): (the block it holds, the segment it
    opened or 0)."""
    free: dict[bool, list[int]] = {True: [], False: []}  # by pool (small?): the free blocks' sizes, sorted
    for size in tensor_bytes:
        if size <= 0:
            continue
        request = round_up(size, MIN_BLOCK_BYTES)
        small = request <= SMALL_REQUEST_BYTES
        pool = free[small]
        at = bisect.bisect_left(pool, request)
        opened = 0
        if at < len(pool):
            block = pool.pop(at)
        else:
            block = opened = segment_bytes(request)
        rest = block - request
        if rest >= MIN_BLOCK_BYTES if small else rest > SMALL_REQUEST_BYTES:
            bisect.insort(pool, rest)
            block = request
        yield block, opened


def reserved_bytes(tensor_bytes: Iterable[int]) -> int:
    """The bytes of the segments the allocator holds once every tensor of `tensor_bytes` (in the order allocated,
    none freed) is allocated."""
    return sum(opened for _, opened in _carve(tensor_bytes))


def allocated_bytes(tensor_bytes: Iterable[int]) -> int:
    """The bytes torch counts as allocated (`torch.cuda.memory_allocated`, which vLLM's 'Model loading took' reads)
    once every tensor of `tensor_bytes` is allocated: each tensor's block, with the rest of a block the allocator
    did not split (a large-pool rest of 1 MiB or less: the last of a shared 20 MiB segment, or of a segment
    rounded up to 2 MiB)."""
    return sum(block for block, _ in _carve(tensor_bytes))
