"""One GiB formatter: wording.py's forms, and no inline `/ GIB:` figure elsewhere in kvtop (the brief: 'one GIB,
one formatter; GB vs GiB always stated'); a MiB figure likewise through wording.mib, no inline `/ MIB:` or `>> 20`.

Expected values are the GiB and MiB arithmetic by hand (2**30 and 2**20 bytes): 1.5 GiB is 1,610,612,736 B.
"""

from __future__ import annotations

import re
from pathlib import Path

from kvtop.domain.wording import GIB, MIB, gib, gib_about, gib_range, gib_setting, mib

ROOT = Path(__file__).resolve().parents[2]
KVTOP = ROOT / "kvtop"
BENCHMARKS = ROOT / "benchmarks"  # the report that writes docs/calibration.md formats through the same forms
# a byte figure divided by the GiB and formatted in place (`f"{x / GIB:.2f} GiB"`, `{x / 2**30:.2f}`): wording.py's
# forms say it (views: kvtop/units.py's fmt_gib)
INLINE = re.compile(r"/ (?:GIB(?:_BYTES)?|2 ?\*\* ?30|\(1 << 30\)|1024 ?\*\* ?3):[^}]*\}")
# a float already in GiB (a fit's coefficient, `mlp_transient_gib`'s) formatted in place with the unit after it
# (`f"{value:.2f} GiB"`, `f"{x:g}GiB"`): `gib(value * GIB)` says it; a rate (GiB/s, s/GiB) is no byte figure
SPELLED = re.compile(r"\{[^{}]*:,?\.?\d*[fg]\} ?GiB(?![/\w])")
# a byte figure divided or shifted to MiB and formatted in place (`f"{x / MIB:,.0f} MiB"`, `{x >> 20} MiB`,
# `{x // MIB} MiB`): wording.mib says it. A figure already counted in MiB (nvidia-smi's total, SGLang's reserve
# formula in its own MB) is no byte figure and is not caught
INLINE_MIB = re.compile(r"/ (?:MIB(?:_BYTES)?|2 ?\*\* ?20|\(1 << 20\)|1024 ?\*\* ?2):[^}]*\}|>> ?20\}|// ?MIB(?:_BYTES)?\}")
# places left, each with why: convert them and strike them off
LEFT_MIB = {
    "domain/engines/lmdeploy/budget_turbomind.py": "TurboMind's own print of block_size ('%.3f' MiB from v0.8.0, an "
                                                   "integer before), the text the log is matched against",
}
LEFT = {
    "domain/wording.py": "the formatter itself",
    "domain/engines/trtllm/explain.py": "a Measured's text, the bare number as the engine's log prints it (unit apart)",
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


def test_a_mib_figure() -> None:
    """A workspace, a page, a reserve in whole MiB; a llama.cpp log's KV buffer said back at its two decimals."""
    assert mib(512 * MIB) == "512 MiB" and mib(2 * MIB) == "2 MiB"
    assert mib(1124 * MIB) == "1,124 MiB"  # SGLang's 100 MiB VLM cache + 1,024 MiB feature pool: the thousands comma
    assert mib(1_000_000_000) == "954 MiB"  # 10**9 / 2**20 = 953.67…
    assert mib(1024 * MIB, 2) == "1,024.00 MiB" and mib(1_000_000, 2) == "0.95 MiB"  # 10**6 / 2**20 = 0.9537
    assert mib(-3 * MIB) == "−3 MiB" and mib(-100_000) == "0 MiB"  # the typographic minus; 0.1 MiB short reads 0


def _inline_figures(root: Path) -> list[str]:
    return sorted(
        f"{path.relative_to(root)}:{number}"
        for path in root.rglob("*.py")
        if root != KVTOP or str(path.relative_to(KVTOP)) not in LEFT
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if INLINE.search(line) or SPELLED.search(line)
    )


def _inline_mib_figures(root: Path) -> list[str]:
    return sorted(
        f"{path.relative_to(root)}:{number}"
        for path in root.rglob("*.py")
        if str(path.relative_to(root)) not in LEFT_MIB
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if INLINE_MIB.search(line)
    )


def test_the_guard_sees_each_inline_form() -> None:
    """The two patterns catch what they are for, and pass what the forms write or what is no byte figure."""
    for caught in ('f"{x / GIB:.2f} GiB"', 'f"{x / (1 << 30):g}GiB"', 'f"{value:.2f} GiB assumed"',
                   'f"± {error:.2f} GiB: "', 'f"{gap_gib:,.3f}GiB"'):  # fmt: skip
        assert INLINE.search(caught) or SPELLED.search(caught), caught
    for passed in ('f"{gib(value * GIB)} assumed"', 'f"{rate:,.1f} GiB/s"', 'f"{t:.3f} s/GiB"',
                   'f"{n:,.0f} tokens/GiB"', 'f"{gib_setting(b)}GiB"'):  # fmt: skip
        assert not (INLINE.search(passed) or SPELLED.search(passed)), passed
    for caught in ('f"{x / MIB:,.0f} MiB"', 'f"{size >> 20} MiB"', 'f"{reserve // MIB} MiB"',
                   'f"{v / MIB_BYTES:,.2f} MiB"', 'f"{(a - b) / 2**20:.1f}"'):  # fmt: skip
        assert INLINE_MIB.search(caught), caught
    for passed in ('f"{mib(x)} more"', 'f"{gpu_mib} MiB"', 'f"{mib(v, 2)}"', "size_mib * MIB", "x >> 20"):
        assert not INLINE_MIB.search(passed), passed


def test_no_inline_gib_figure_outside_wording() -> None:
    found = _inline_figures(KVTOP) + _inline_figures(BENCHMARKS)
    assert not found, f"format these through kvtop/domain/wording.py (gib, gib_range, gib_about, gib_setting) or units.fmt_gib: {found}"


def test_no_inline_mib_figure_outside_wording() -> None:
    found = _inline_mib_figures(KVTOP)
    assert not found, f"format these through kvtop/domain/wording.py's mib: {found}"


def test_the_places_left_still_hold_one() -> None:
    """An exception no file needs any more is struck off (else the list hides the next inline figure there)."""
    stale = [name for name in LEFT if not _inline_figures_in(KVTOP / name)]
    stale += [name for name in LEFT_MIB if not INLINE_MIB.search((KVTOP / name).read_text())]
    assert not stale, stale


def _inline_figures_in(path: Path) -> bool:
    text = path.read_text()
    return bool(INLINE.search(text) or SPELLED.search(text))
