"""The desktop's share of a start that printed only its capacity is found by halving, and halving finds what a walk
a MiB at a time finds (benchmarks/calibration/desktop.py `most_held`: until session 53 the walk, ≈ 170 plans a fold
for lmdeploy#1703's Windows start, 87 % of a leave-one-source-out judgement's time; halving takes 13)."""

from __future__ import annotations

from benchmarks.calibration.desktop import SEARCH_LIMIT_MIB, _plan, desktop_excess, most_held
from kvtop.domain.calibration.terms import Term
from kvtop.domain.wording import MIB
from tests.calibration_fits import CORPUS, ONE_WORKER, corpus_fits

pytestmark = ONE_WORKER  # its fits are tests/calibration_fits.py's: made once per run

WINDOWS = next(record for record in CORPUS["lmdeploy"] if record.id == "case-lmdeploy-1703-internlm-20b-w4-3090")


def test_halving_finds_the_last_mib_that_holds() -> None:
    assert most_held(lambda mib: mib <= 170) == 170 * MIB
    assert most_held(lambda mib: mib == 0) == 0
    assert most_held(lambda mib: False) is None
    assert most_held(lambda mib: True) == (SEARCH_LIMIT_MIB - 1) * MIB  # the walk's end: nothing found past it


def test_the_windows_start_s_share_is_where_the_mib_walk_stops() -> None:
    """lmdeploy#1703 logged 7,552 tokens (118 blocks of 64) on a Windows RTX 3090: planned with every record's fits
    and its free memory before the load given a MiB less at a time, the plan still sizes 7,552 tokens or more at every
    MiB up to the share halving found, and fewer one MiB past it, so the walk MiB by MiB stops where halving did."""
    fits = corpus_fits()
    found = desktop_excess(WINDOWS, fits)
    assert found is not None and found % MIB == 0 and WINDOWS.tokens == 7_552
    terms = {estimate.term: estimate.bytes for estimate in _plan(WINDOWS, fits, None).estimate.terms}
    linux_free = terms[Term.CUDA_TOTAL] - terms[Term.CONTEXT]
    capacities = [_plan(WINDOWS, fits, linux_free - mib * MIB).ledger.token_capacity for mib in range(found // MIB + 2)]
    assert min(capacities[:-1]) >= 7_552 > capacities[-1]
