"""Units at the edge: GB and GiB as a person reads them."""

from kvtop.units import fmt_both, fmt_gb, fmt_gib

GIB = 1 << 30


def test_sizes_read_in_both_units_and_a_few_negative_bytes_read_zero():
    assert fmt_both(17_640_734_720) == "17.64 GB (16.43 GiB)"
    assert fmt_gib(-6 * GIB, 1) == "-6.0 GiB"  # a real deficit keeps its sign
    assert fmt_both(-20_000_000, 1) == "0.0 GB (0.0 GiB)"  # −20 MB rounds to zero, not "-0.0"
    assert fmt_gb(1_255_785 * 40_960) == "51.44 GB"
