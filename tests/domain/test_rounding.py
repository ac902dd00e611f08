"""rounding: the one "up to a multiple", "down to a multiple" and "units that hold it" rules kvtop models read."""

from __future__ import annotations

from pathlib import Path

from kvtop.domain.rounding import ceil_div, round_down, round_up


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


def test_round_down_to_whole_pages() -> None:
    """SGLang's pool holds whole pages (`max_total_num_tokens // page_size * page_size`): 1,000 tokens at 64 a page
    are 15 pages, 960 tokens; 63 tokens are no page; a whole number of pages stays itself."""
    assert round_down(1000, 64) == 960
    assert round_down(63, 64) == 0
    assert round_down(960, 64) == 960
    assert round_down(2**60 + 1, 2) == 2**60


def test_ceil_div_counts_a_partial_unit_whole() -> None:
    """A 1-byte request takes one 512 B block, 513 B take two, none take none; exact beyond float precision."""
    assert ceil_div(1, 512) == 1
    assert ceil_div(513, 512) == 2
    assert ceil_div(0, 512) == 0
    assert ceil_div(2**60 + 1, 2) == 2**59 + 1


def test_the_ceil_rule_is_written_once() -> None:
    """rounding.py's promise, "each is written once, here": no module of kvtop spells ceil(a / b) as `-(-a // b)`
    (it calls ceil_div or round_up). A scan of the package's sources; rounding.py itself excepted."""
    root = Path(__file__).resolve().parents[2] / "kvtop"
    spelled = [
        f"{path.relative_to(root)}:{number}"
        for path in sorted(root.rglob("*.py"))
        if path.name != "rounding.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "-(-" in line.split("#")[0]
    ]
    assert len(list(root.rglob("*.py"))) > 100  # the scan read the package
    assert spelled == []
