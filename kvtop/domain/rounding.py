"""The one rounding rule every allocator kvtop models applies: a size up to a whole number of units.

torch's caching allocator (512 B blocks, 2 MiB segments), CUDA's virtual-memory granularities, the engines' weight
and workspace alignments all read it here, so the rule is written once.
"""

from __future__ import annotations


def round_up(size: int, unit: int) -> int:
    """`size` up to the next multiple of `unit` (itself where it already is one): ceil(size / unit) × unit in
    integers, with no float on the way (sizes reach 2^40 and more)."""
    return -(-size // unit) * unit
