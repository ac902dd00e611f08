"""The calibration corpus's fits (`benchmarks/calibration/evaluate.fit_all`), each made once per test process.

Many test modules plan a record with the fits on the whole corpus, or with those that left its id or its source out
(as the held-out judgement does); each fit takes seconds of one core, and several modules made the same ones. Each
fold is made here once, on the corpus as `load_all` reads it; the fits are shared, so no test may change them.
The modules that ask are one xdist group (`ONE_WORKER`): `--dist loadgroup` (.ci/run) runs them on one worker, so a
fold two modules ask for is made once per run, not once per worker.
"""

from __future__ import annotations

from functools import cache

import pytest

from benchmarks.calibration.corpus import load_all
from benchmarks.calibration.evaluate import fit_all
from kvtop.domain.calibration.linear import LinearTerm

CORPUS = load_all()

#: The xdist group of every module (or test) that reads `corpus_fits`.
FITS_GROUP = "calibration-fits"
ONE_WORKER = pytest.mark.xdist_group(FITS_GROUP)


@cache
def corpus_fits(leave_out: str | None = None) -> dict[str, LinearTerm]:
    """`fit_all(CORPUS, leave_out=leave_out)`: every fit on the whole corpus but the record or source `leave_out`
    names (none: the whole corpus), made once per test process and shared by every module that asks."""
    return fit_all(CORPUS, leave_out=leave_out)
