"""The node's host memory, for the offloaded KV tiers beside each engine's GPU pool (psutil reads it: the
same `virtual_memory().available` SGLang's HiCache checks its request against)."""

from __future__ import annotations

from kvtop.domain.observe import HostMemory


def read_host_memory() -> HostMemory | None:
    """Total and available host memory, or None when the OS will not say (the view then shows none)."""
    try:
        import psutil

        memory = psutil.virtual_memory()
        return HostMemory(total_bytes=int(memory.total), available_bytes=int(memory.available))
    except (ImportError, OSError, AttributeError, ValueError):
        return None
