"""The fits one engine's plan reads, assembled once: the product's plan and the corpus's judgement of it take the same.

A plan reads its engine's own fits and the engine-neutral ones every engine shares by design: CUDA's total per GPU
model (`gpu_totals.py`), one process's CUDA context per 100 SMs (`cuda_context.py`), the assumed context's error
(`features.py`), the weights book's errors (`weights.py`) and what a desktop sharing the card held beyond Linux
(`host_memory.DESKTOP_HELD_BYTES`, the low end of a plan that says a desktop is there) and, for an engine that sizes
from the total, what its desktop starts left beside weights and KV beyond the plan (`DESKTOP_PROFILE_BYTES`) and below
it (`DESKTOP_GIVEN_BACK_BYTES`). Another engine's fit is not among them: where a plan's
term uses a feature its fit never measured, the part measured elsewhere (`support.measured_elsewhere`) is another
era of the same engine's term, or an engine-neutral fit, never what SGLang's context says of a vLLM launch.

`plan_fits` draws that set out of one corpus's fits: the committed blocks in a product plan (`committed_fits`), the
fits refitted without the judged source in benchmarks/calibration (`fit_all`). docs/calibration.md then measures the
plan `kvtop plan` prints, with the fits the corpus less that source would commit.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from kvtop.domain.calibration.cuda_context import CUDA_CONTEXT_FITS, CUDA_CONTEXT_KEY
from kvtop.domain.calibration.features import (
    ASSUMED_CONTEXT_ERROR_FEATURES,
    ASSUMED_CONTEXT_ERROR_GIB,
    ASSUMED_CONTEXT_ERROR_KEY,
    ASSUMED_CONTEXT_RECORDS,
    ASSUMED_CONTEXT_SOURCES,
)
from kvtop.domain.calibration.gpu_totals import CUDA_TOTAL_FITS, KEY_PREFIX
from kvtop.domain.calibration.host_memory import (
    DESKTOP_GIVEN_BACK_BYTES,
    DESKTOP_GIVEN_BACK_KEY,
    DESKTOP_HELD_BYTES,
    DESKTOP_HELD_KEY,
    DESKTOP_PROFILE_BYTES,
    DESKTOP_PROFILE_KEY,
)
from kvtop.domain.calibration.linear import LinearTerm
from kvtop.domain.calibration.unified_start import UNIFIED_START_KEY, committed_unified_start
from kvtop.domain.calibration.weights import (
    BUILT_ERROR_KEY,
    BUILT_WEIGHTS_RECORDS,
    BUILT_WEIGHTS_RELATIVE_ERROR,
    ERROR_FEATURES,
    LOADED_ERROR_KEY,
    WEIGHTS_RECORDS,
    WEIGHTS_RELATIVE_ERROR,
)

# the engine-neutral fits every engine's plan reads, besides CUDA's totals (keys `KEY_PREFIX` + GPU model)
SHARED_KEYS = frozenset(
    {CUDA_CONTEXT_KEY, ASSUMED_CONTEXT_ERROR_KEY, LOADED_ERROR_KEY, BUILT_ERROR_KEY, DESKTOP_HELD_KEY, DESKTOP_PROFILE_KEY,
     DESKTOP_GIVEN_BACK_KEY}
) | {UNIFIED_START_KEY}  # what a unified-memory host takes during a start, as the engine charges it (unified_start.py)
DESKTOP_HELD_FEATURES = ("bytes a desktop held before the load beyond a Linux start's",)
DESKTOP_PROFILE_FEATURES = ("bytes a desktop start left beside weights and KV beyond the plan's terms",)
DESKTOP_GIVEN_BACK_FEATURES = ("bytes a desktop start left beside weights and KV below the plan's terms",)


def error_fit(key: str, features: tuple[str, ...], error: float, records: int, sources: int) -> LinearTerm:
    """A measured error held as a fit (one coefficient: the error itself, no error of its own), as the corpus's
    judgement refits it without the judged source and the committed constants hold it."""
    return LinearTerm(key=key, features=features, coefficients=(error,), error_bytes=0, records=records,
                      sources=sources)  # fmt: skip


def desktop_fit(held_bytes: int, records: int, sources: int) -> LinearTerm:
    """What a desktop held beyond Linux as a fit (its one coefficient: the bytes), as `run.py` fits it on the corpus
    (or the corpus less the judged source) and `DESKTOP_HELD_BYTES` holds it committed."""
    return error_fit(DESKTOP_HELD_KEY, DESKTOP_HELD_FEATURES, float(held_bytes), records, sources)


def desktop_profile_fit(excess_bytes: int, records: int, sources: int) -> LinearTerm:
    """What a desktop start of an engine that sizes from the total left beside weights and KV beyond its plan, the
    most of them, as a fit (its one coefficient: the bytes), as `run.py` fits it and `DESKTOP_PROFILE_BYTES` holds it."""
    return error_fit(DESKTOP_PROFILE_KEY, DESKTOP_PROFILE_FEATURES, float(excess_bytes), records, sources)


def desktop_profile_bytes(fits: Mapping[str, LinearTerm]) -> int:
    """What the low end of such a plan takes as runtime memory for the desktop during the profile, of `fits`: 0
    where they hold none (no desktop start measured it: the state is said and nothing is widened)."""
    fit = fits.get(DESKTOP_PROFILE_KEY)
    return int(fit.coefficients[0]) if fit is not None else 0


def desktop_given_back_fit(given_back_bytes: int, records: int, sources: int) -> LinearTerm:
    """What a desktop start of an engine that sizes from the total left beside weights and KV below its plan, the most
    of them (≥ 0), as a fit, as `run.py` fits it and `DESKTOP_GIVEN_BACK_BYTES` holds it."""
    return error_fit(DESKTOP_GIVEN_BACK_KEY, DESKTOP_GIVEN_BACK_FEATURES, float(given_back_bytes), records, sources)


def desktop_given_back_bytes(fits: Mapping[str, LinearTerm]) -> int:
    """What the high end of such a plan gives back of its runtime memory for the desktop during the profile, of
    `fits`: 0 where they hold none."""
    fit = fits.get(DESKTOP_GIVEN_BACK_KEY)
    return int(fit.coefficients[0]) if fit is not None else 0


def desktop_held_bytes(fits: Mapping[str, LinearTerm]) -> int:
    """What the low end of a plan that says a desktop shares the card takes, of `fits`: 0 where they hold no desktop
    share (a corpus with no desktop start measured none: kvtop states the desktop "not modelled" and widens nothing)."""
    fit = fits.get(DESKTOP_HELD_KEY)
    return int(fit.coefficients[0]) if fit is not None else 0


def committed_fits(own: Mapping[str, LinearTerm]) -> dict[str, LinearTerm]:
    """The committed blocks as one corpus's fits: the engine-neutral ones (CUDA's totals, one process's context, the
    assumed context's error, the weights book's errors) and `own` (an engine's committed `FITS`)."""
    assumed = error_fit(ASSUMED_CONTEXT_ERROR_KEY, ASSUMED_CONTEXT_ERROR_FEATURES, ASSUMED_CONTEXT_ERROR_GIB,
                        ASSUMED_CONTEXT_RECORDS, ASSUMED_CONTEXT_SOURCES)  # fmt: skip
    # the weights' errors: the committed constants keep no count of sources (nothing reads it of them)
    loaded = error_fit(LOADED_ERROR_KEY, ERROR_FEATURES, WEIGHTS_RELATIVE_ERROR, WEIGHTS_RECORDS, 0)
    built = error_fit(BUILT_ERROR_KEY, ERROR_FEATURES, BUILT_WEIGHTS_RELATIVE_ERROR, BUILT_WEIGHTS_RECORDS, 0)
    desktop = desktop_fit(DESKTOP_HELD_BYTES, 0, 0)  # the committed figure keeps no counts (nothing reads them)
    profile = desktop_profile_fit(DESKTOP_PROFILE_BYTES, 0, 0)
    given_back = desktop_given_back_fit(DESKTOP_GIVEN_BACK_BYTES, 0, 0)
    shared = {fit.key: fit for fit in (assumed, loaded, built, desktop, profile, given_back)}
    unified = committed_unified_start()
    if unified is not None:
        shared[unified.key] = unified
    return {**CUDA_TOTAL_FITS, **CUDA_CONTEXT_FITS, **shared, **own}


def plan_fits(fits: Mapping[str, LinearTerm], own_keys: Collection[str]) -> dict[str, LinearTerm]:
    """Of `fits` (one corpus's: the committed blocks, or those refitted without a source), the ones a plan of one
    engine reads: its own (`own_keys`: its calibration's `FIT_TERMS`) and the engine-neutral ones."""
    return {key: fit for key, fit in fits.items()
            if key in own_keys or key in SHARED_KEYS or key.startswith(KEY_PREFIX)}  # fmt: skip
