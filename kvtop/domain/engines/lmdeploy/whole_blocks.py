"""Why LMDeploy's KV pool is a little less than the cache share it is cut from (session 69's operator pass).

TurboMind (`max_block_count = cache bytes / block bytes`, integer division) and the PyTorch engine
(`int(free × share / per_block)`) allocate whole blocks only, so the pool the plan prints is the cache share less
what does not fill one more block: an operator read "object cache 13.93 GiB", "KV pool 13.92 GiB" as a leak. The
blocks step says the difference, from the same figures.
"""

from __future__ import annotations

from kvtop.domain.wording import gib, mib


def whole_blocks_note(cache_bytes: int, blocks: int, block_bytes: int, cache_word: str) -> str:
    """'whole blocks only: 891 × 16,777,216 B = 13.92 GiB, the KV pool's blocks: the object cache less the 7.0 MiB
    that do not fill one more block'; '' where the share is whole blocks (a block count given) or none fits."""
    left = cache_bytes - blocks * block_bytes
    if blocks < 1 or not 0 < left < block_bytes:
        return ""
    return (f"whole blocks only: {blocks:,} × {block_bytes:,} B = {gib(blocks * block_bytes)}, the KV pool's blocks: "
            f"the {cache_word} less the {mib(left, 1)} that do not fill one more block")  # fmt: skip
