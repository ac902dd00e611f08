"""The weights term: kvtop's weights book (`kvtop/domain/weights.py`), with the error the corpus measured.

The book counts parameters × bytes per parameter ÷ the shards that split each component; the engine's
resident weights add buffers and padding, or drop a part the book counts. Where a corpus log printed
the engine's weights and its model's config is at hand, the difference is measured: the 90th
percentile of |book − logged| ÷ logged is the relative half-width the term adds to a plan.

A launch that re-casts a checkpoint as it loads (`--dtype float32`, `--quantization fp8` on a 16-bit
checkpoint) is booked on the served model (`kvtop.domain.served_model`, which `ledger.predict` reads), so
`inputs.weights_bytes` is already the book of the cast model (float32: 29.92 vs 29.98 GiB logged; fp8:
8.46 vs 8.49 GiB, llm-d-planner's vLLM 0.19.0 runs, docs/calibration.md). Only a cast the engine's table
does not model (bitsandbytes at load) keeps the checkpoint's bytes, `assumed` ± 50 %. An engine adds what
its own loader holds beside the book (`extra`: vLLM's MXFP4 experts, `engines/vllm/weights_held.py`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.linear import LinearTerm
from kvtop.domain.calibration.terms import Term, TermEstimate
from kvtop.domain.served_model import cast_when, not_modelled_cast, served_casts

# 90th percentile of |book − logged| ÷ logged over the corpus, and its records (launches that re-cast
# their weights at load left out): of checkpoints an engine loads as it starts, and apart, of engines built
# ahead of their start (a TensorRT engine holds what its build wrote: another mechanism, another error;
# which launches run one is the engine calibration's `weights_built_ahead`)
# BEGIN FITTED by `python benchmarks/calibration/run.py --write` from tests/data/calibration/ (docs/calibration.md)
WEIGHTS_RELATIVE_ERROR = 0.0143
WEIGHTS_RECORDS = 617
BUILT_WEIGHTS_RELATIVE_ERROR = 0.0078
BUILT_WEIGHTS_RECORDS = 8
# END FITTED

# the same errors as fits (one coefficient: the relative error), where the corpus's blind plans measure them again
# without the judged record's source (benchmarks/calibration/evaluate.py `weights_fits`); no committed fit holds them
LOADED_ERROR_KEY, BUILT_ERROR_KEY = "weights.relative_error", "weights.built_relative_error"
ERROR_FEATURES = ("× the weights term's bytes",)


def with_fitted_error(estimate: TermEstimate, fits: Mapping[str, LinearTerm], built_ahead: bool) -> TermEstimate:
    """The calibrated weights term with the relative error `fits` carries (a plan judged by fits that left its own
    source out must not read an error its own log helped measure), beside the error the engine's rules add
    (`beside_error_bytes`, root of squares, as the engine combined it); as it is where they carry none."""
    fit = fits.get(BUILT_ERROR_KEY if built_ahead else LOADED_ERROR_KEY)
    if fit is None or estimate.term is not Term.WEIGHTS or estimate.source != "calibrated":
        return estimate
    fitted = round(estimate.bytes * fit.coefficients[0])
    return estimate.with_error(round(math.hypot(fitted, estimate.beside_error_bytes)))

RUNTIME_CAST_ERROR = 0.5  # the book's half-width where the launch re-casts the weights in a way it does not model


def runtime_cast(inputs: CalibrationInputs) -> str | None:
    """The flag with which the engine re-casts or quantizes the weights at load in a way the served
    model does not model (the book counts the checkpoint's bytes), or None."""
    return not_modelled_cast(inputs.model, inputs.settings)


def weights_estimate(
    inputs: CalibrationInputs,
    relative_error: float = WEIGHTS_RELATIVE_ERROR,
    records: int = WEIGHTS_RECORDS,
    extra: tuple[int, str] | None = None,  # (bytes, why): what the engine's loader holds beside the book
    *,
    built_ahead: bool = False,  # an engine built ahead of the start: the built engines' error (BUILT_…)
) -> TermEstimate:
    if built_ahead:
        relative_error, records = BUILT_WEIGHTS_RELATIVE_ERROR, BUILT_WEIGHTS_RECORDS
    model = inputs.model
    if model is not None and model.weights_as_stored and model.checkpoint_bytes == inputs.weights_bytes:
        return TermEstimate(
            term=Term.WEIGHTS, label="weights", bytes=inputs.weights_bytes, error_bytes=0, source="measured",
            basis="the model file's tensors, loaded as stored (their bytes read from its header)",
        )  # fmt: skip
    book, how = inputs.weights_bytes, "kvtop's weights book (parameters × bytes per parameter ÷ shards)"
    cast = runtime_cast(inputs)
    if cast is not None:
        return TermEstimate(
            term=Term.WEIGHTS, label="weights", bytes=book, error_bytes=round(book * RUNTIME_CAST_ERROR),
            source="assumed", basis=f"the checkpoint's bytes: the book does not model {cast} at load (± 50 %)",
        )  # fmt: skip
    served = served_casts(model, inputs.settings) if model is not None else ""
    if served:
        how = f"kvtop's weights book of the model as served ({served} {cast_when(inputs.settings)})"
    if extra is not None:
        book, how = book + extra[0], f"{how}, and {extra[1]}"
    return TermEstimate(
        term=Term.WEIGHTS,
        label="weights",
        bytes=book,
        error_bytes=round(book * relative_error),
        source="calibrated",
        basis=f"{how}; ± {relative_error:.1%} (the corpus's 90th percentile over {records} logged weights"
        + (" of engines built ahead)" if built_ahead else ")"),
    )
