"""Engine-specific size spellings that the domain must read (no formatting here)."""

from __future__ import annotations

from kvtop.domain.errors import InputError

_SUFFIX = {
    "k": 10**3,
    "m": 10**6,
    "g": 10**9,
    "t": 10**12,
    "K": 1 << 10,
    "M": 1 << 20,
    "G": 1 << 30,
    "T": 1 << 40,
}


def parse_vllm_bytes(text: str, field: str = "--kv-cache-memory-bytes") -> int:
    """vLLM's `human_readable_int`: k/m/g are powers of 10, K/M/G powers of 2."""
    raw = text.strip()
    try:
        if len(raw) > 40:
            raise ValueError(raw)
        if raw and raw[-1] in _SUFFIX:
            return int(float(raw[:-1]) * _SUFFIX[raw[-1]])
        return int(raw)
    except (ValueError, OverflowError):
        shown = raw if len(raw) <= 40 else raw[:37] + "..."
        raise InputError(f"not a size: {shown!r} (e.g. 20G or 21474836480)", field=field) from None
