"""Engine-specific size spellings that the domain must read (no formatting here)."""

from __future__ import annotations

import re

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


#: '20GiB', '20 GB', '1.5TiB': the units kvtop's own sizes are written in (the byte count is what the
#: engine is handed, so a launch copied from kvtop holds the same bytes)
_UNIT = re.compile(r"^(\d+(?:\.\d+)?)\s*([KMGT])(i?)B$", re.IGNORECASE)
_POWER = {"K": 1, "M": 2, "G": 3, "T": 4}


def parse_vllm_bytes(text: str, field: str = "--kv-cache-memory-bytes") -> int:
    """vLLM's `human_readable_int` (k/m/g are powers of 10, K/M/G powers of 2: vLLM's own rule, so
    '20g' is 20 GB and '20G' 20 GiB), and kvtop's spelling with the unit written: 20GiB, 20GB."""
    raw = text.strip()
    try:
        if len(raw) > 40:
            raise ValueError(raw)
        unit = _UNIT.match(raw)
        if unit:
            base = 1024 if unit.group(3) else 1000
            return int(float(unit.group(1)) * base ** _POWER[unit.group(2).upper()])
        if raw and raw[-1] in _SUFFIX:
            return int(float(raw[:-1]) * _SUFFIX[raw[-1]])
        return int(raw)
    except (ValueError, OverflowError):
        shown = raw if len(raw) <= 40 else raw[:37] + "..."
        raise InputError(
            f"not a size: {shown!r} (e.g. 20GiB, 20GB, a byte count, or vLLM's own 20G = GiB / 20g = GB)",
            field=field,
        ) from None
