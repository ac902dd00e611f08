"""The weights term: kvtop's weights book (`kvtop/domain/weights.py`), with the error the corpus measured.

The book counts parameters × bytes per parameter ÷ the shards that split each component; the engine's
resident weights add buffers and padding, or drop a part the book counts. Where a corpus log printed
the engine's weights and its model's config is at hand, the difference is measured: the 90th
percentile of |book − logged| ÷ logged is the relative half-width the term adds to a plan.
"""

from __future__ import annotations

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.terms import Term, TermEstimate

# 90th percentile of |book − logged| ÷ logged over the corpus, and its records (launches that re-cast
# their weights at load left out)
# BEGIN FITTED by `python benchmarks/calibration/run.py --write` from tests/data/calibration/ (docs/calibration.md)
WEIGHTS_RELATIVE_ERROR = 0.0483
WEIGHTS_RECORDS = 43
# END FITTED


# dtypes a launch may ask for that leave a 16-bit checkpoint's bytes as the book counts them
_BOOK_DTYPES = frozenset({"auto", "bfloat16", "bf16", "float16", "fp16", "half"})
RUNTIME_CAST_ERROR = 0.5  # the book's half-width where the launch re-casts or quantizes the weights at load


def runtime_cast(inputs: CalibrationInputs) -> str | None:
    """The flag with which the engine re-casts or quantizes the weights as it loads them (the book counts
    the checkpoint's own bytes), or None."""
    s = inputs.settings
    if s.quantization and (inputs.model is None or not inputs.model.quant.quantized):
        return f"--quantization {s.quantization}"
    if s.dtype and s.dtype.lower() not in _BOOK_DTYPES:
        return f"--dtype {s.dtype}"
    return None


def weights_estimate(
    inputs: CalibrationInputs, relative_error: float = WEIGHTS_RELATIVE_ERROR, records: int = WEIGHTS_RECORDS
) -> TermEstimate:
    model = inputs.model
    if model is not None and model.weights_as_stored and model.checkpoint_bytes == inputs.weights_bytes:
        return TermEstimate(
            term=Term.WEIGHTS, label="weights", bytes=inputs.weights_bytes, error_bytes=0, source="measured",
            basis="the model file's tensors, loaded as stored (their bytes read from its header)",
        )  # fmt: skip
    cast = runtime_cast(inputs)
    if cast is not None:
        return TermEstimate(
            term=Term.WEIGHTS, label="weights", bytes=inputs.weights_bytes,
            error_bytes=round(inputs.weights_bytes * RUNTIME_CAST_ERROR), source="assumed",
            basis=f"the checkpoint's bytes: the book does not model {cast} at load (± 50 %)",
        )  # fmt: skip
    return TermEstimate(
        term=Term.WEIGHTS,
        label="weights",
        bytes=inputs.weights_bytes,
        error_bytes=round(inputs.weights_bytes * relative_error),
        source="calibrated",
        basis=f"kvtop's weights book (parameters × bytes per parameter ÷ shards); ± {relative_error:.1%} (the corpus's 90th percentile "
        f"over {records} logged weights)",
    )
