"""The calibration protocol's members (`inputs.EngineCalibration`) for an engine with no rule of its own: its
calibration module re-exports each one it lacks (`from … import fit_offset as fit_offset`), so every engine's module
holds every member, mypy checks each against the protocol, and the corpus's fits and a plan read them without asking
whether they exist. The values are what kvtop did before an engine had the rule.
"""

from __future__ import annotations

from kvtop.domain.calibration.inputs import CalibrationInputs

# the free memory after the load, measured with the one before it, measures the weights (their difference)
READS_FREE_AFTER_LOAD = True
# no term is fitted on fewer features than it has: one whose records are too few for all of them is assumed
FEWER_ROWS_FEATURES: dict[str, tuple[int, ...]] = {}
# every fit is made of figures its engine's logs print: none of the capacity they leave over
IMPLIED_FITS: frozenset[str] = frozenset()
# every fit's interval is the 90th percentile of its held-out misses: none keeps their signed spread
SPAN_FITS: frozenset[str] = frozenset()


def fit_offset(key: str, inputs: CalibrationInputs) -> int:
    """No part of any fit is sized by the engine's code: a logged figure is fitted whole."""
    del key, inputs  # no fit of the engine has an offset
    return 0


def weights_built_ahead(inputs: CalibrationInputs) -> bool:
    """The engine loads the checkpoint as it starts: its weights carry the loaded checkpoints' error."""
    del inputs  # no launch of the engine runs a build written ahead
    return False
