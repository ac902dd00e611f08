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


def parse_vllm_bytes(text: str) -> int:
    """vLLM's `human_readable_int`: k/m/g are powers of 10, K/M/G powers of 2."""
    raw = text.strip()
    try:
        if raw and raw[-1] in _SUFFIX:
            return int(float(raw[:-1]) * _SUFFIX[raw[-1]])
        return int(raw)
    except ValueError:
        raise InputError(
            f"not a size: {raw!r} (e.g. 20G or 21474836480)", field="--kv-cache-memory-bytes"
        ) from None
