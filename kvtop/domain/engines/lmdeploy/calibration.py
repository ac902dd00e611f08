"""LMDeploy's pre-load terms (docs/engines/lmdeploy.md §1, docs/calibration.md).

Both LMDeploy engines give `cache_max_entry_count` of the memory free once the weights are resident
(the least over TP ranks): CUDA's total less the CUDA context and NCCL less the weights. Its logs print
the blocks, not the free memory, so the corpus measures the context only through the block count.
"""

from __future__ import annotations

import math

from kvtop.domain.calibration.coverage import IntervalScale
from kvtop.domain.calibration.defaults import FEWER_ROWS_FEATURES as FEWER_ROWS_FEATURES
from kvtop.domain.calibration.defaults import IMPLIED_FITS as IMPLIED_FITS
from kvtop.domain.calibration.defaults import READS_FREE_AFTER_LOAD as READS_FREE_AFTER_LOAD
from kvtop.domain.calibration.defaults import SPAN_FITS as SPAN_FITS
from kvtop.domain.calibration.defaults import fit_offset as fit_offset
from kvtop.domain.calibration.defaults import weights_built_ahead as weights_built_ahead
from kvtop.domain.calibration.extrapolation import Extrapolation
from kvtop.domain.calibration.features import (
    CONTEXT_FEATURES,
    CONTEXT_LABEL,
    context_estimate,
    free_memory_terms,
    tp_features,
)
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.linear import LinearTerm
from kvtop.domain.calibration.plan_fits import committed_fits
from kvtop.domain.calibration.read_back import logged_terms as logged_terms  # its log prints its terms
from kvtop.domain.calibration.start_facts import StartMeasures
from kvtop.domain.calibration.terms import Term, TermEstimate
from kvtop.domain.engines.lmdeploy.budget_turbomind import staging_leftover_bytes
from kvtop.domain.engines.lmdeploy.eras import turbomind_share
from kvtop.domain.engines.lmdeploy.memory import resolve_backend
from kvtop.domain.engines.lmdeploy.turbomind_pages import charged_page_bytes
from kvtop.domain.errors import InputError
from kvtop.domain.wording import mib

# §15.3: no LMDeploy line prints the free memory, so no record of its own measures the context: it stays assumed
# with the error every other engine's measured contexts give the assumption (features.ASSUMED_CONTEXT_ERROR_GIB),
# not one fitted to the capacity misses of the records it is judged on (session 46; until then ± 2 GiB, cases 3411
# and 4285's misses).

FIT_TERMS: dict[str, tuple[Term, tuple[str, ...]]] = {"lmdeploy.context": (Term.CONTEXT, CONTEXT_FEATURES)}

# what a start's log measures of the terms, read by the calibration store (calibration/node.py)
START_MEASURES = StartMeasures(source=(
    "docs/engines/lmdeploy.md: the PyTorch engine's runtime reserve is its logits formula of the launch (budget_pytorch.py), printed by no log line; TurboMind charges none"
))

# BEGIN FITTED by `python benchmarks/calibration/run.py --write` from tests/data/calibration/ (docs/calibration.md)
FITS: dict[str, LinearTerm] = {
}  # fmt: skip
INTERVAL_SCALE: IntervalScale | None = IntervalScale(
    engine='lmdeploy', factor=1.0, records=4, sources=4,
)
EXTRAPOLATION: Extrapolation | None = Extrapolation(
    engine='lmdeploy', gpus=('A100-80GB', 'RTX3090'), band_depth=3, newest_band=(0, 7, 2), classes=('dense', 'vision-language'), gpu_fraction=0.0117, version_fraction=0.0, class_fraction=0.0, records=9, sources=4,
)  # fmt: skip
# END FITTED


def fit_features(key: str, inputs: CalibrationInputs) -> tuple[float, ...] | None:
    return tp_features(inputs) if key == "lmdeploy.context" else None


def terms(inputs: CalibrationInputs, fits: dict[str, LinearTerm] | None = None) -> tuple[TermEstimate, ...]:
    """CUDA's total, the context before the weights load, the weights (CUDA's total alone where TurboMind's share is
    of the total, v0.1.0 – v0.2.1: neither the context nor the weights move its blocks); where TurboMind stages a checkpoint through
    torch (v0.6.2 – v0.8.x, §15.1), the weights' error holds the attention's staging, which its charge leaves out,
    and where it cudaMallocs each tensor (≤ v0.5.x, §15.7) the pages' charge, whose page size is assumed."""
    found = free_memory_terms("lmdeploy.context", committed_fits(FITS) if fits is None else fits, inputs)
    if _shares_total(inputs):
        return tuple(term for term in found if term.term is Term.CUDA_TOTAL)
    leftover, pages = _staging_leftover(inputs), _pages(inputs)
    if not leftover and pages == 0:  # pages None: charged but not bounded, said in the weights term
        return found
    return tuple(_with_beside(term, leftover, pages) if term.term is Term.WEIGHTS else term for term in found)


#: where the release charges the pages but kvtop does not list the model's TurboMind tensors (MoE, MLA, …) no bound is
#: known: the weights term says its interval leaves them out, as the budget's step names them not modelled (§15.7)
PAGES_OMITTED = ("the interval leaves out the pages each weight tensor's cudaMalloc leaves unused: kvtop does not "
                 "list this model's TurboMind tensors, so it has no bound for them (not modelled, lmdeploy.md §15.7)")


def _turbomind(inputs: CalibrationInputs) -> bool:
    """Whether TurboMind serves the launch (False where the budget refuses the launch itself, naming the flag)."""
    if inputs.model is None:
        return False
    try:
        backend, _ = resolve_backend(inputs.model, inputs.settings, inputs.version)
    except InputError:
        return False
    return backend == "turbomind"


def _shares_total(inputs: CalibrationInputs) -> bool:
    """TurboMind v0.1.0 – v0.2.1 with a share below 1: `size_t(total × ratio) // block` reads CUDA's total only
    (`eras.TURBOMIND_SHARE_ERAS`); a ratio of 1 or more is a block count, which reads nothing."""
    ratio = inputs.settings.cache_max_entry_count
    return (turbomind_share(inputs.version).value == "total" and (ratio is None or ratio < 1)
            and _turbomind(inputs))  # fmt: skip


def _staging_leftover(inputs: CalibrationInputs) -> int:
    """`staging_leftover_bytes` of a TurboMind start (0 for the PyTorch engine, which stages nothing)."""
    if inputs.model is None or not _turbomind(inputs):
        return 0
    return staging_leftover_bytes(inputs.model, inputs.settings, inputs.version, inputs.layout.tp)


def _pages(inputs: CalibrationInputs) -> int | None:
    """The pages charge of a TurboMind release that cudaMallocs each weight tensor (§15.7): its page size is
    assumed, so the charge is its own error (0 where it is not charged; None where it is but the model's tensors are
    not listed: the interval says it leaves them out)."""
    if inputs.model is None or not _turbomind(inputs):
        return 0
    return charged_page_bytes(inputs.model, inputs.layout.tp, inputs.version)


def _with_beside(weights: TermEstimate, leftover: int, pages: int | None) -> TermEstimate:
    """The weights term with the staging's leftover and the pages' assumed size beside its error (independent
    errors: the root of squares); pages None: the basis says the interval leaves them out (`PAGES_OMITTED`)."""
    beside = round(math.hypot(leftover, pages or 0))
    said: list[str] = []
    if leftover:
        said.append(f"± {mib(leftover)} of torch's cache the staging charge leaves out "
                    "(the attention's projections read whole and copied once, lmdeploy.md §15.1)")  # fmt: skip
    if pages:
        said.append(f"± {mib(pages)}: the pages each weight tensor's cudaMalloc leaves unused, charged "
                    "with a page size assumed (lmdeploy.md §15.7)")  # fmt: skip
    if pages is None:
        said.append(PAGES_OMITTED)
    # beside: kept when a judged plan swaps in the fitted error (with_fitted_error)
    return weights.plus(error_bytes=beside, why="; ".join(said) or None, beside=True)


def context(inputs: CalibrationInputs, fits: dict[str, LinearTerm] | None = None) -> TermEstimate:
    """The memory a start takes before the weights load (its term among `terms`)."""
    return context_estimate(
        "lmdeploy.context", CONTEXT_LABEL, committed_fits(FITS) if fits is None else fits, inputs, tp_features(inputs)
    )
