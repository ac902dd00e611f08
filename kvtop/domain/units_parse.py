"""kvtop's own size spelling, read in the domain: a number with its unit written out (no formatting here).

An engine's own reading of a size flag is its package's (vLLM's `20G` = 20 GiB: engines/vllm/human_ints.py); this
is only what kvtop itself takes where a size is typed to it, never what an engine's command line holds.
"""

from __future__ import annotations

import re

#: '20GiB', '20 GB', '1.5TiB': the units kvtop's own sizes are written in (GiB = 2^30, GB = 10^9)
_WRITTEN = re.compile(r"(\d+(?:\.\d+)?)\s*([KMGT])(i?)B", re.IGNORECASE)
_POWER = {"K": 1, "M": 2, "G": 3, "T": 4}
_LONGEST = 40  # characters: a longer value is no size (and float() of it is not asked)


def written_size(text: str) -> int | None:
    """Bytes of a size written with its unit ('20GiB' = 20 × 2^30, '20GB' = 20 × 10^9, '1.5TiB'), or None where
    `text` is not one (a byte count, an engine's suffix like '20G': the engine's reading decides those)."""
    unit = written_unit(text)
    if unit is None:
        return None
    name, unit_bytes = unit
    number = text.strip()[: -len(name)]  # the unit's letters end the text: what comes before is the number
    return int(float(number) * unit_bytes)


def written_unit(text: str) -> tuple[str, int] | None:
    """The unit a size was written in and its bytes ('1000TiB': ('TiB', 2^40); '20gb': ('GB', 10^9)), or None where
    `text` is no size written with its unit: a refusal then says its bounds in the unit the operator typed."""
    raw = text.strip()
    written = _WRITTEN.fullmatch(raw) if len(raw) <= _LONGEST else None
    if written is None:
        return None
    prefix, binary = written.group(2).upper(), bool(written.group(3))
    return f"{prefix}{'i' if binary else ''}B", (1024 if binary else 1000) ** _POWER[prefix]
