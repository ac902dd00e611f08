"""An engine's logged figures read back into its calibration's terms (the `logged_terms` of `EngineCalibration`).

The corpus's fits take each term's bytes as a start's log printed them. Where a release prints another split than the
engine's terms (vLLM from v0.27.0: `engines/vllm/startup_split.py`), the engine's calibration maps the figures back;
an engine whose log prints its terms as they are states this module's `logged_terms`, the figures as printed.
"""

from __future__ import annotations

from collections.abc import Mapping

from kvtop.domain.calibration.inputs import CalibrationInputs


def logged_terms(inputs: CalibrationInputs, figures: Mapping[str, int]) -> dict[str, int | None]:
    """The figures (bytes, by term name) as the log printed them: the engine's log splits them as its terms do."""
    del inputs  # the split does not depend on the launch
    return dict(figures)
