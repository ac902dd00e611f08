"""One GiB formatter: wording.py's forms, and no inline `/ GIB:` figure elsewhere in kvtop (the brief: 'one GIB,
one formatter; GB vs GiB always stated').

Expected values are the GiB arithmetic by hand (2**30 bytes): 1.5 GiB is 1,610,612,736 B.
"""

from __future__ import annotations

import re
from pathlib import Path

from kvtop.domain.wording import GIB, gib, gib_about, gib_range, gib_setting

ROOT = Path(__file__).resolve().parents[2]
KVTOP = ROOT / "kvtop"
BENCHMARKS = ROOT / "benchmarks"  # the report that writes docs/calibration.md formats through the same forms
# a byte figure divided by the GiB and formatted in place (`f"{x / GIB:.2f} GiB"`, `{x / 2**30:.2f}`): wording.py's
# forms say it (views: kvtop/units.py's fmt_gib)
INLINE = re.compile(r"/ (?:GIB(?:_BYTES)?|2 ?\*\* ?30|\(1 << 30\)|1024 ?\*\* ?3):[^}]*\}")
# a float already in GiB (a fit's coefficient, `mlp_transient_gib`'s) formatted in place with the unit after it
# (`f"{value:.2f} GiB"`, `f"{x:g}GiB"`): `gib(value * GIB)` says it; a rate (GiB/s, s/GiB) is no byte figure
SPELLED = re.compile(r"\{[^{}]*:,?\.?\d*[fg]\} ?GiB(?![/\w])")
# places left, each with why: convert them and strike them off
LEFT = {
    "domain/wording.py": "the formatter itself",
    "domain/engines/trtllm/explain.py": "a Measured's text, the bare number as the engine's log prints it (unit apart)",
    "ui/screens/ledger.py": "tokens per GB from tokens per GiB: a rate's unit changed, no byte figure written",
}


def test_a_value_a_range_an_error_and_a_flag() -> None:
    assert gib(3 * GIB // 2) == "1.50 GiB"
    assert gib(1024 * GIB) == "1,024.00 GiB"  # the thousands comma, as the views' fmt_gib writes it
    assert gib(1_000_000_000, digits=4) == "0.9313 GiB"  # 10**9 / 2**30 = 0.931322…
    assert gib_range(GIB // 2, 6 * GIB) == "0.50–6.00 GiB"
    assert gib_range(1_000_000_000, 2_000_000_000, digits=4) == "0.9313–1.8626 GiB"
    assert gib_about(5 * GIB // 4, GIB // 4) == "1.25 ± 0.25 GiB"
    assert gib_about(5 * GIB // 4, 0) == "1.25 GiB"  # no error: none written
    assert gib_setting(4 * GIB) == "4" and gib_setting(GIB // 2) == "0.5" and gib_setting(1024 * GIB) == "1024"


def test_a_negative_reads_as_every_view_writes_it() -> None:
    """One formatter for the domain's sentences and the views (units.fmt_gib is `gib`): a deficit keeps its sign as
    the typographic minus U+2212 (`signed`'s), and a few negative bytes read 0.00, never '−0.00' or '-0.00'."""
    assert gib(-3 * GIB // 4) == "−0.75 GiB"  # 0.75 GiB short: 805,306,368 B
    assert gib(-1_000_000) == "0.00 GiB"  # 1 MB = 0.00093 GiB: no sign on a figure that shows none
    assert gib_range(-GIB // 4, 3 * GIB) == "−0.25–3.00 GiB"
    assert gib_about(-5 * GIB // 4, GIB // 4) == "−1.25 ± 0.25 GiB"
    assert "-" not in gib(-1024 * GIB) + gib_range(-2 * GIB, -GIB) + gib_about(-GIB, GIB)


def _inline_figures(root: Path) -> list[str]:
    return sorted(
        f"{path.relative_to(root)}:{number}"
        for path in root.rglob("*.py")
        if root != KVTOP or str(path.relative_to(KVTOP)) not in LEFT
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if INLINE.search(line) or SPELLED.search(line)
    )


def test_the_guard_sees_each_inline_form() -> None:
    """The two patterns catch what they are for, and pass what the forms write or what is no byte figure."""
    for caught in ('f"{x / GIB:.2f} GiB"', 'f"{x / (1 << 30):g}GiB"', 'f"{value:.2f} GiB assumed"',
                   'f"± {error:.2f} GiB: "', 'f"{gap_gib:,.3f}GiB"'):  # fmt: skip
        assert INLINE.search(caught) or SPELLED.search(caught), caught
    for passed in ('f"{gib(value * GIB)} assumed"', 'f"{rate:,.1f} GiB/s"', 'f"{t:.3f} s/GiB"',
                   'f"{n:,.0f} tokens/GiB"', 'f"{gib_setting(b)}GiB"'):  # fmt: skip
        assert not (INLINE.search(passed) or SPELLED.search(passed)), passed


def test_no_inline_gib_figure_outside_wording() -> None:
    found = _inline_figures(KVTOP) + _inline_figures(BENCHMARKS)
    assert not found, f"format these through kvtop/domain/wording.py (gib, gib_range, gib_about, gib_setting) or units.fmt_gib: {found}"


def test_the_places_left_still_hold_one() -> None:
    """An exception no file needs any more is struck off (else the list hides the next inline figure there)."""
    stale = [name for name in LEFT if not _inline_figures_in(KVTOP / name)]
    assert not stale, stale


def _inline_figures_in(path: Path) -> bool:
    text = path.read_text()
    return bool(INLINE.search(text) or SPELLED.search(text))
