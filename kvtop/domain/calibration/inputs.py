"""What an engine's calibration reads to estimate its pre-load terms, and the interface it implements."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from pydantic import BaseModel, ConfigDict

from kvtop.domain.calibration.coverage import IntervalScale
from kvtop.domain.calibration.extrapolation import Extrapolation
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
    # a WSL2 host (`MeasuredInputs.wsl2`, the total's origin `GpuTotalOrigin.WSL2`): CUDA's total is the whole card
    wsl2: bool = False
    # the operator says torch.compile's cache is warm (`MeasuredInputs.compile_cache`): vLLM's V2 profile compiles nothing
    compile_cache_warm: bool = False
    # the operator says it is cold (`MeasuredInputs.compile_cache`): vLLM's V1 runner's profile holds the compile's
    # benchmark copy of the embedding table (engines/vllm/compile_benchmark.py `with_v1_compile_copy`)
    compile_cache_cold: bool = False
    # the launch's speculative draft was sized: its config read or its weights given (vLLM's unsized EAGLE-3 head
    # widens the weights term otherwise, engines/vllm/eagle3_head.py)
    draft_weights_known: bool = False
    # the launch's speculative draft's config where its weights were not measured (a DFlash drafter's assumed-shared
    # embedding and head widen the weights term, engines/vllm/dflash.py `shared_error`); None: none
    draft: ModelSpec | None = None


class EngineCalibration(Protocol):
    """One engine's fitted pre-load terms (each package's `calibration` module)."""

    FITS: dict[str, LinearTerm]  # the committed fits, by key (docs/calibration.md)
    INTERVAL_SCALE: IntervalScale | None  # the committed interval scale (coverage.py); None: unscaled
    EXTRAPOLATION: Extrapolation | None  # what the corpus covers and the widening outside it; None: no groups judged
    FIT_TERMS: dict[str, tuple[Term, tuple[str, ...]]]  # each fit's term and what its coefficients multiply
    START_MEASURES: StartMeasures  # which terms a start's log measures (the calibration store keeps only those)
    # whether the engine's budget reads the free memory after the load, so that a measured one (with the free memory
    # before it) fixes the weights term; False: the weights stay the calibrated term (`estimate._with_measured`)
    READS_FREE_AFTER_LOAD: bool
    # by fit key: the indices of the features a term is fitted on where its records are too few for all of them (the
    # one that carries most of the term), the others' coefficients 0; {}: such a term is left to its assumption
    FEWER_ROWS_FEATURES: dict[str, tuple[int, ...]]
    # the fits whose logs print no figure of their term: each row is what the capacity a log printed leaves of the term
    # once the plan's other terms are taken (benchmarks/calibration/implied.py); frozenset(): none
    IMPLIED_FITS: frozenset[str]
    # the fits whose interval is their held-out misses' signed spread (`LinearTerm.span_bytes`), kept by the corpus's
    # fit (benchmarks/calibration/evaluate.py) and read by the engine's plan; frozenset(): none
    SPAN_FITS: frozenset[str]

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

    def fit_offset(self, key: str, inputs: CalibrationInputs) -> int:
        """Bytes of what fit `key` measures that the engine's code sizes (a workspace beside the term), taken off the
        logged figure before the corpus fits it and added back to the estimate by `terms`; 0 where the code sizes
        none."""
        ...

    def weights_built_ahead(self, inputs: CalibrationInputs) -> bool:
        """Whether this launch holds weights an engine build wrote ahead of its start (their own weights error,
        `weights.BUILT_WEIGHTS_RELATIVE_ERROR`), not a checkpoint loaded as it starts."""
        ...
