"""The widening a plan takes where it extrapolates: a fitted term whose records hold no start on its GPU model.

A fit's held-out error (`LinearTerm.error_bytes`) is measured mostly on sources whose GPU models other sources
share; a plan on a GPU model none of the fit's records ran is outside that support, and its error is the one the
corpus measured on such rows (`LinearTerm.novel_error_bytes`: rows whose GPU model no other source held, each
judged by a fit that left its source out). Releases are not compared: each engine's fits are per era already. The term's interval grows by the
difference and says why (`TermEstimate.beyond`), which the plan's JSON and the planner's pane show.
"""

from __future__ import annotations

from collections.abc import Mapping

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.linear import LinearTerm
from kvtop.domain.calibration.terms import TermEstimate
from kvtop.domain.gpus import gpu_model_key


def outside(fit: LinearTerm, inputs: CalibrationInputs) -> str | None:
    """Why `inputs` lies outside the records `fit` was made on (no record on its GPU model), or None."""
    gpu = gpu_model_key(inputs.gpu_name) if inputs.gpu_name else ""
    return f"no record of {fit.key} on the {gpu}" if fit.gpus and gpu and gpu not in fit.gpus else None


def widened(
    estimate: TermEstimate, fits: Mapping[str, LinearTerm], inputs: CalibrationInputs
) -> TermEstimate:
    """The calibrated term with its error widened to its fit's error outside the support, where the plan is outside."""
    fit = fits.get(estimate.fit_key) if estimate.fit_key and estimate.source == "calibrated" else None
    why = outside(fit, inputs) if fit is not None else None
    if fit is None or why is None:
        return estimate
    extra = max(fit.novel_error_bytes - fit.error_bytes, 0)
    return estimate.model_copy(update={"error_bytes": estimate.error_bytes + extra, "beyond": why})
