"""rounding.round_up: the one 'up to a multiple' rule every allocator kvtop models reads."""

from __future__ import annotations

from kvtop.domain.rounding import round_up


def test_torch_caching_allocator_sizes() -> None:
    """c10/cuda/CUDACachingAllocator.cpp: a 1-byte request takes a 512 B block (kMinBlockSize), 512 B stays 512 B,
    and a 10 MiB + 1 B request opens a segment rounded to 2 MiB (kRoundLarge): 12 MiB."""
    assert round_up(1, 512) == 512
    assert round_up(512, 512) == 512
    assert round_up((10 << 20) + 1, 2 << 20) == 12 << 20
    assert round_up(0, 512) == 0


def test_exact_beyond_float_precision() -> None:
    """Integer arithmetic: 2^60 + 1 up to a multiple of 2 is 2^60 + 2, where math.ceil((2^60 + 1) / 2) * 2 gives
    2^60 (the float quotient loses the odd byte)."""
    assert round_up(2**60 + 1, 2) == 2**60 + 2
