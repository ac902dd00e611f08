"""What an engine's calibration reads to estimate its pre-load terms, and the interface it implements."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from pydantic import BaseModel, ConfigDict

from kvtop.domain.calibration.coverage import IntervalScale
from kvtop.domain.calibration.linear import LinearTerm
from kvtop.domain.calibration.start_facts import StartMeasures
from kvtop.domain.calibration.terms import Term, TermEstimate
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec


class CalibrationInputs(BaseModel):
    """One launch as the term models see it: the model's shapes, the settings, the GPU, the release."""

    model_config = ConfigDict(frozen=True)

    model: ModelSpec | None  # None only in the corpus, for a record whose model has no config at hand
    settings: LaunchSettings
    layout: ParallelLayout
    gpu_name: str | None
    gpu_total_bytes: int  # as nvidia-smi reports it (the GPU table or --gpu-memory)
    version: ResolvedVersion
    weights_bytes: int  # the predicted weights of the largest rank
    context_length: int


class EngineCalibration(Protocol):
    """One engine's fitted pre-load terms (each package's `calibration` module)."""

    FITS: dict[str, LinearTerm]  # the committed fits, by key (docs/calibration.md)
    INTERVAL_SCALE: IntervalScale | None  # the committed interval scale (coverage.py); None: unscaled
    FIT_TERMS: dict[str, tuple[Term, tuple[str, ...]]]  # each fit's term and what its coefficients multiply
    START_MEASURES: StartMeasures  # which terms a start's log measures (the calibration store keeps only those)

    def terms(self, inputs: CalibrationInputs, fits: dict[str, LinearTerm] | None = None) -> tuple[TermEstimate, ...]:
        """Every term this launch's budget reads, estimated with `fits` (the committed ones in a plan; a
        fit that left a record out when the corpus checks itself)."""
        ...

    def context(self, inputs: CalibrationInputs, fits: dict[str, LinearTerm] | None = None) -> TermEstimate:
        """What a start of this launch takes on each GPU before its weights load (CUDA context, NCCL and
        the engine's own buffers): fitted by the engine's mechanism, else a stated assumption. An engine
        that sizes from it has it among `terms`; every engine has it for a restart's free memory."""
        ...

    def logged_terms(self, inputs: CalibrationInputs, figures: Mapping[str, int]) -> dict[str, int | None]:
        """A start's logged figures (bytes, by term name) in this engine's terms, for the corpus's fits: the
        figures as printed (`read_back.logged_terms`) unless a release prints another split; None: the log does
        not measure that term apart."""
        ...

    def fit_features(self, key: str, inputs: CalibrationInputs) -> tuple[float, ...] | None:
        """The feature values (GiB) of fit `key` for this launch; None where that fit does not apply
        (another era, a part it does not model)."""
        ...
