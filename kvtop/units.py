"""Bytes ⇄ text. GB means 10**9 and GiB 2**30, always stated, never guessed.

Sizes cross every boundary as `int` bytes; this module turns them into text for the views and text into them. The
GiB and GB figures themselves are written by kvtop/domain/wording.py (`gib`, `gb` and `gb_gib`, re-exported here as
`fmt_gib`, `fmt_gb` and `fmt_both`): one formatter for the domain's sentences and every view.
"""

from __future__ import annotations

import re

from pydantic import ByteSize, TypeAdapter, ValidationError

from kvtop.domain.errors import InputError
from kvtop.domain.redact import shown_cut
from kvtop.domain.wording import GB, GIB, MIB, byte_count, whole
from kvtop.domain.wording import gb as fmt_gb  # one GB formatter: the domain's sentences and every view
from kvtop.domain.wording import gb_gib as fmt_both  # one pair of GB and GiB: every sentence and view
from kvtop.domain.wording import gib as fmt_gib  # one GiB formatter: the domain's sentences and every view
from kvtop.domain.wording import gib_figure as fmt_gib_figure  # its figure alone, under a 'GiB' column header
from kvtop.domain.wording import percent as fmt_percent  # one percent: a KV usage, a deviation
from kvtop.domain.wording import signed as fmt_signed  # one formatter for a signed token change
from kvtop.domain.wording import spread as fmt_spread  # one formatter for an interval's ends about its centre

#: The least budget step written in both GB and GiB: below 0.01 GB two decimals read '0.00 GB (0.00 GiB)' (fmt_both_or_exact).
BOTH_UNITS_FROM = GB // 100
#: The least size `fmt_both_or_binary` writes in GB and GiB: below 0.1 GB two decimals keep one digit ('0.02 GB (0.02
#: GiB)' for a KV block's 17.50 MiB gap), the binary figure keeps three or four
LEGIBLE_BOTH_FROM = GB // 10
MAX_SIZE = 1 << 60  # 1 EiB: a size beyond it is a typo or an overflow, never memory

__all__ = ["BOTH_UNITS_FROM", "GB", "GIB", "MIB", "fmt_both", "fmt_both_legible", "fmt_both_or_binary", "fmt_both_or_exact", "fmt_bytes", "fmt_gb", "fmt_gib", "fmt_gib_figure", "fmt_percent", "fmt_signed", "fmt_spread", "fmt_tokens", "fmt_tokens_brief", "in_gib", "legible_digits", "parse_size"]

_BYTESIZE = TypeAdapter(ByteSize)
_NUMBER = re.compile(r"^\s*[-+]?\d+(\.\d+)?\s*$")
#: '20G', '512m': a prefix without B, which one tool reads as GB and another (vLLM: upper case) as GiB
_BARE_PREFIX = re.compile(r"^\s*[-+]?\d+(\.\d+)?\s*([kmgtpe])\s*$", re.IGNORECASE)


def parse_size(text: str, *, field: str = "size") -> int:
    """Parse '80GiB', '80 GB', '1.5TiB', '512MiB' or a plain byte count into int bytes.

    A bare number is bytes. Negative sizes are an error naming `field`; so is a prefix without its
    unit ('20G', '20g'): GB or GiB is always written, never guessed.
    """
    raw = str(text).strip()
    shown = shown_cut(raw, 40)
    if raw.startswith("-"):
        raise InputError(f"a size cannot be negative (got {shown!r})", field=field)
    bare = _BARE_PREFIX.match(raw)
    if bare:
        number, prefix = raw[: bare.start(2)].strip(), bare.group(2).upper()
        raise InputError(
            f"{shown!r} does not say GB or GiB: write {number}{prefix}iB (2^{_POWERS[prefix]}) or {number}{prefix}B (10^{_POWERS[prefix] * 3 // 10})",
            field=field,
        )
    try:
        size = float(raw) if _NUMBER.match(raw) else _BYTESIZE.validate_python(raw)
    except ValidationError:
        raise InputError(f"not a size: {shown!r} (write e.g. 80GiB, 81.5GB or 512MiB)", field=field) from None
    if not size <= MAX_SIZE:  # 400 digits read as infinity; no memory or disk holds an exbibyte
        raise InputError(f"{shown!r} is larger than any memory (at most 1 EiB)", field=field)
    return int(size)


_POWERS = {"K": 10, "M": 20, "G": 30, "T": 40, "P": 50, "E": 60}


def in_gib(num_bytes: int | float) -> float:
    """Bytes as a number of GiB (2**30), a float to compute with (the process panel's sort key, rounded as its
    column shows it); a figure is written by `fmt_gib` / `fmt_gib_figure` (kvtop/domain/wording.py's), never here."""
    return num_bytes / GIB


def legible_digits(num_bytes: int | float) -> int:
    """Decimals that keep a small figure from reading 0 in GB: 1 from 1 GB (and for 0), 2 from 0.1 GB
    (`LEGIBLE_BOTH_FROM`), else 3 (7 MB reads 0.007 GB, not 0.0 GB)."""
    size = abs(num_bytes)
    return 1 if size >= GB or size == 0 else 2 if size >= LEGIBLE_BOTH_FROM else 3


def fmt_both_legible(num_bytes: int | float) -> str:
    """`fmt_both` with `legible_digits`: '80.0 GB (74.5 GiB)', '0.30 GB (0.28 GiB)', '0.007 GB (0.007 GiB)', for a
    column of sizes from a whole GPU down to a few MB (the rank ledger's)."""
    return fmt_both(num_bytes, legible_digits(num_bytes))


def fmt_both_or_binary(num_bytes: int | float) -> str:
    """`fmt_both`, or a size under 0.1 GB (a norm, a rope cache, a KV block's gap) as `fmt_bytes` writes it ('2.52
    MiB', '17.50 MiB'), where two decimals of GB and GiB would read '0.00 GB (0.00 GiB)' or '0.02 GB (0.02 GiB)';
    0 B stays in both units."""
    return fmt_both(num_bytes) if abs(num_bytes) >= LEGIBLE_BOTH_FROM or not num_bytes else fmt_bytes(num_bytes)


def fmt_both_or_exact(num_bytes: int) -> str:
    """`fmt_both`, or a size under 0.01 GB (`BOTH_UNITS_FROM`), 0 B included, as its exact byte count
    ('4,096 B', '−4,096 B'): a budget step's figure, where the steps' bytes are what adds up (`plan`, `explain`)."""
    return fmt_both(num_bytes) if abs(num_bytes) >= BOTH_UNITS_FROM else byte_count(num_bytes)


def fmt_bytes(num_bytes: int | float) -> str:
    """A compact binary size for tables: '57,344 B', '56.0 KiB', '4.60 GiB'."""
    value = float(num_bytes)
    sign = "−" if value < 0 else ""
    value = abs(value)
    if value < 1 << 10:
        return f"{sign}{value:,.0f} B"
    for unit, scale in (("TiB", 1 << 40), ("GiB", GIB), ("MiB", MIB), ("KiB", 1 << 10)):
        if value >= scale:
            return f"{sign}{value / scale:,.2f} {unit}"
    return f"{sign}{value:,.0f} B"


def fmt_tokens(tokens: int | float) -> str:
    """'1,512,448' ('−4,096' below zero: the one minus, `fmt_signed`'s)."""
    return whole(int(tokens))


def fmt_tokens_brief(change: int) -> str:
    """A signed token change in at most six cells, for a table cell: '−1,005', '−129k', '+1.1M', '0'."""
    size = abs(change)
    if size < 10_000:
        return fmt_signed(change)
    sign = "−" if change < 0 else "+"
    return f"{sign}{size / 1e6:.1f}M" if size >= 999_500 else f"{sign}{round(size / 1000)}k"
