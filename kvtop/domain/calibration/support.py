"""The widening a plan takes where it extrapolates: a fitted term whose records hold no start on its GPU model, or
none (or one source's only) with a feature the plan uses.

A fit's held-out error (`LinearTerm.error_bytes`) is measured mostly on sources whose GPU models other sources
share; a plan on a GPU model none of the fit's records ran is outside that support, and its error is the one the
corpus measured on such rows (`LinearTerm.novel_error_bytes`: rows whose GPU model no other source held, each
judged by a fit that left its source out). Releases are not compared: each engine's fits are per era already.

A plan whose feature vector uses a feature (non-zero) that no row of the fit carried has a coefficient the fit never
measured (0, by the non-negative fit): the part it multiplies is missing, not estimated. One carried by rows of a
single source is measured once, with no held-out error of its own. Either way the term's error is the error of its
fit on rows whose feature it had not seen (`LinearTerm.unseen_error_bytes`: rows carrying a feature no other source
did, each judged by a fit on the other sources). Where that was not measured (no row carried the feature), it is
at least the feature's part in another fit whose rows of two sources or more carried it (the same feature, named
alike: another era of the term; coefficient × the plan's value) and the term's own value (a missing part as large as
what was seen). The term's interval grows by the difference and says why (`TermEstimate.beyond`), which the plan's
JSON and the planner's pane show: in words (the term's label, the release where its fit is one era's), never the fit's
key, which the JSON gives beside it (`fit_key`).
"""

from __future__ import annotations

from collections.abc import Mapping

from kvtop.domain.calibration.gpu_totals import KEY_PREFIX as TOTAL_KEY_PREFIX
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.linear import LinearTerm
from kvtop.domain.calibration.terms import TermEstimate
from kvtop.domain.gpus import gpu_model_key
from kvtop.domain.wording import GIB

SOURCES_TO_MEASURE = 2  # a coefficient carried by one source's rows has no held-out error of its own


def fit_words(fit: LinearTerm, label: str, inputs: CalibrationInputs) -> str:
    """The fitted term as a person reads it: its label, and the release where its fit holds for one era of the engine
    (a key 'engine.term.era', `LinearTerm.key`): "vLLM's non-torch memory at 0.18.0". The key stays in the plan's
    JSON (`fit_key`), never the only name on a screen."""
    if fit.key.count(".") < 2:
        return label
    version = inputs.version
    return f"{label} at {version.label if version.text or version.build else 'the latest release'}"


def outside(fit: LinearTerm, label: str, inputs: CalibrationInputs) -> str | None:
    """Why `inputs` lies outside the records `fit` (of the term `label`) was made on (no record on its GPU model), in
    words, or None."""
    gpu = gpu_model_key(inputs.gpu_name) if inputs.gpu_name else ""
    return f"no record of {fit_words(fit, label, inputs)} on the {gpu}" if fit.gpus and gpu and gpu not in fit.gpus else None


def unsupported(fit: LinearTerm, values: tuple[float, ...]) -> list[tuple[str, int]]:
    """The features `values` uses (non-zero) that fewer than two of the fit's sources carried (a fit of one source
    asks no more than its own), with how many did; [] where the fit does not track them."""
    if len(fit.feature_sources) != len(values) or len(fit.features) != len(values):
        return []
    needed = min(SOURCES_TO_MEASURE, fit.sources)
    return [(name, carried) for name, value, carried in zip(fit.features, values, fit.feature_sources, strict=True)
            if value and carried < needed]  # fmt: skip


def measured_elsewhere(fits: Mapping[str, LinearTerm], fit: LinearTerm, feature: str, value: float) -> int:
    """The largest part `feature` takes at `value` in another fit whose rows of two sources or more carried it (bytes;
    0: none did). A part one source measured is not a measure (`unsupported` says the same of the fit's own). `fits`
    are a plan's (`plan_fits`: its engine's and the engine-neutral ones); a GPU's CUDA total among them is no part of
    any term, though its one feature is named '1 GiB' as a term's constant is."""
    parts = [other.predict_gib([value if name == feature else 0.0 for name in other.features])
             for other in fits.values() if other.key != fit.key and not other.key.startswith(TOTAL_KEY_PREFIX)
             and feature in other.features and _measured(other, feature)]  # fmt: skip
    return round(max(parts, default=0.0) * GIB)


def _measured(fit: LinearTerm, feature: str) -> bool:
    index = fit.features.index(feature)
    return len(fit.feature_sources) == len(fit.features) and fit.feature_sources[index] >= SOURCES_TO_MEASURE


def _unseen(
    estimate: TermEstimate, fit: LinearTerm, fits: Mapping[str, LinearTerm], inputs: CalibrationInputs
) -> tuple[str, int] | None:
    """Why the plan uses a feature the fit did not measure, and the error it takes there; None where it does not."""
    found = unsupported(fit, estimate.values)
    if not found:
        return None
    error = fit.unseen_error_bytes
    if error == 0 or any(carried == 0 for _, carried in found):
        own = max(fit.predict(estimate.values), 0)
        elsewhere = max(measured_elsewhere(fits, fit, name, estimate.values[fit.features.index(name)])
                        for name, _ in found)  # fmt: skip
        error = max(error, own, elsewhere)
    term = fit_words(fit, estimate.label, inputs)
    why = "; ".join(f"{'no record' if carried == 0 else 'one source only'} of {term} with '{name}'"
                    for name, carried in found)  # fmt: skip
    return why, error


def widened(
    estimate: TermEstimate, fits: Mapping[str, LinearTerm], inputs: CalibrationInputs
) -> TermEstimate:
    """The calibrated term with its error widened to its fit's error outside the support, where the plan is outside
    (on a GPU model no record ran, with a feature no record or one source carried): the larger widening, both named."""
    fit = fits.get(estimate.fit_key) if estimate.fit_key and estimate.source == "calibrated" else None
    if fit is None:
        return estimate
    gpu = outside(fit, estimate.label, inputs)
    feature = _unseen(estimate, fit, fits, inputs)
    whys = [why for why in (gpu, feature[0] if feature else None) if why]
    if not whys:
        return estimate
    extra = max(fit.novel_error_bytes - fit.error_bytes if gpu else 0,
                feature[1] - fit.error_bytes if feature else 0, 0)  # fmt: skip
    return estimate.widened_by(extra, beyond="; ".join(whys))
