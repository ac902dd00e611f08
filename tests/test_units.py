"""Units at the edge: GB and GiB as a person reads them."""

from kvtop.units import fmt_both, fmt_both_legible, fmt_bytes, fmt_gb, fmt_gib, legible_digits

GIB = 1 << 30


def test_sizes_read_in_both_units_and_a_few_negative_bytes_read_zero():
    assert fmt_both(17_640_734_720) == "17.64 GB (16.43 GiB)"
    assert fmt_gib(-6 * GIB, 1) == "−6.0 GiB"  # a real deficit keeps its sign, the typographic minus
    assert fmt_both(-20_000_000, 1) == "0.0 GB (0.0 GiB)"  # −20 MB rounds to zero, not "-0.0"
    assert fmt_gb(1_255_785 * 40_960) == "51.44 GB"


def test_one_minus_in_every_formatter():
    """The trial's '-0.097 GB (-0.090 GiB)': every size formatter signs a negative with '−' (U+2212), as
    `fmt_signed` does, never an ASCII hyphen. 97,000,000 B = 0.097 GB = 0.0903 GiB = 92.51 MiB."""
    assert fmt_both(-97_000_000, 3) == "−0.097 GB (−0.090 GiB)"
    assert fmt_bytes(-97_000_000) == "−92.51 MiB" and fmt_bytes(-512) == "−512 B"
    assert "-" not in fmt_both(-97_000_000) + fmt_bytes(-(3 << 40))


def test_a_small_size_keeps_the_digits_that_keep_it_from_reading_zero():
    """The rank ledger's column runs from a whole GPU to a few MB: 1 decimal from 1 GB (and for 0), 2 from 0.1 GB,
    else 3. 80e9 B = 74.506 GiB; 3e8 B = 0.2794 GiB; 7e6 B = 0.00652 GiB; −7e6 B keeps its sign."""
    assert [legible_digits(n) for n in (0, 7 * 10**6, 3 * 10**8, 2 * 10**9, -(3 * 10**8))] == [1, 3, 2, 1, 2]
    assert fmt_both_legible(80 * 10**9) == "80.0 GB (74.5 GiB)"
    assert fmt_both_legible(3 * 10**8) == "0.30 GB (0.28 GiB)"
    assert fmt_both_legible(7 * 10**6) == "0.007 GB (0.007 GiB)"
    assert fmt_both_legible(-(7 * 10**6)) == "−0.007 GB (−0.007 GiB)"
    assert fmt_both_legible(0) == "0.0 GB (0.0 GiB)"


def test_the_views_gib_is_the_domains():
    """'one GIB, one formatter': fmt_gib is kvtop/domain/wording.py's gib, not a second spelling of it."""
    from kvtop.domain.wording import gib

    assert fmt_gib is gib


def test_a_size_without_gb_or_gib_is_refused_naming_both_readings():
    """'20G' is 20 GB to pydantic and 20 GiB to vLLM: kvtop's own sizes say which, or are refused."""
    import pytest

    from kvtop.domain.errors import InputError
    from kvtop.units import parse_size

    assert parse_size("20GiB") == 20 * GIB and parse_size("20GB") == 20 * 10**9 and parse_size("20gib") == 20 * GIB
    for bare in ("20G", "20g", " 1.5T "):
        with pytest.raises(InputError) as refused:
            parse_size(bare, field="--gpu-memory")
        assert refused.value.field == "--gpu-memory" and "GB or GiB" in str(refused.value)
    with pytest.raises(InputError, match=r"write 20GiB \(2\^30\) or 20GB \(10\^9\)"):
        parse_size("20g")


def test_kvtops_own_written_size_says_its_unit_and_leaves_the_engines_spellings_alone():
    """'20GiB' = 20 × 2^30, '20GB' = 20 × 10^9, written out; a byte count or vLLM's '20G' is no written size (the
    engine's reading decides those: tests/engines/vllm/test_human_readable_ints.py)."""
    from kvtop.domain.units_parse import written_size

    assert written_size("20GiB") == written_size("20 gib") == 21_474_836_480
    assert written_size("20GB") == 20_000_000_000 and written_size("1.5TiB") == 3 << 39
    assert [written_size(text) for text in ("21474836480", "20G", "20g", "20 G", "GiB", "1" * 41 + "GiB")] == [None] * 6


def test_written_size_is_the_number_times_the_unit_written_unit_reads():
    """One reading of a written size: its unit ('1000TiB': TiB, 2^40 bytes) and its bytes (1000 × 2^40) agree."""
    from kvtop.domain.units_parse import written_size, written_unit

    cases = {" 1000 TiB ": ("TiB", 1 << 40, 1000 << 40), "20gb": ("GB", 10**9, 20 * 10**9), "0.5 KiB": ("KiB", 1024, 512)}
    for text, (unit, unit_bytes, size) in cases.items():
        assert written_unit(text) == (unit, unit_bytes) and written_size(text) == size
    assert written_unit("20G") is None and written_unit("1" * 41 + "GiB") is None


def test_a_gib_columns_figure_is_fmt_gibs_without_its_unit():
    """A table whose header says GiB shows the figure alone ('6.00' for 6 × 2^30 B), written as `fmt_gib` writes it."""
    from kvtop.units import fmt_gib, fmt_gib_figure

    assert fmt_gib_figure(6 << 30) == "6.00" and fmt_gib_figure(1 << 40) == "1,024.00"
    assert fmt_gib_figure(-(96 << 20)) == "−0.09" and fmt_gib_figure(3 << 29, digits=1) == "1.5"
    for size in (0, 6 << 30, 81559 << 20, -(96 << 20)):
        assert fmt_gib(size) == f"{fmt_gib_figure(size)} GiB"
