"""The rounding rules every allocator and pool kvtop models applies: a count of whole units, a size up to a whole
number of units, a size down to one.

torch's caching allocator (512 B blocks, 2 MiB segments), CUDA's virtual-memory granularities, the engines' weight
and workspace alignments round up; the engines' token pools round down to whole pages (a partial page holds no
token). Each is written once, here, in integers with no float on the way (sizes reach 2^40 and more).
"""

from __future__ import annotations


def ceil_div(size: int, unit: int) -> int:
    """How many `unit`s hold `size`: ceil(size / unit), a partial unit counted whole."""
    return -(-size // unit)


def round_up(size: int, unit: int) -> int:
    """`size` up to the next multiple of `unit` (itself where it already is one): ceil(size / unit) × unit."""
    return ceil_div(size, unit) * unit


def round_down(size: int, unit: int) -> int:
    """`size` down to a multiple of `unit` (itself where it already is one): floor(size / unit) × unit, the whole
    units in it (for sizes ≥ 0)."""
    return size // unit * unit
