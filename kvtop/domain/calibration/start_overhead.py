"""What a (re)start finds taken before its weights: the driver's share of nvidia-smi's total and the engine's CUDA
context and NCCL, from the same pre-load figures as `estimate` (one truth); diagnose's restart arithmetic and the
demo use it."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from kvtop.domain.calibration.estimate import calibration_inputs, engine_fits
from kvtop.domain.calibration.gpu_totals import cuda_total_estimate
from kvtop.domain.calibration.linear import LinearTerm
from kvtop.domain.calibration.terms import TermSource
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.ledger import Ledger


class StartOverhead(BaseModel):
    """What a start of one launch finds taken on each of its GPUs before its weights load, besides other
    processes: the driver's share (nvidia-smi's total less CUDA's) and the CUDA context and NCCL."""

    model_config = ConfigDict(frozen=True)

    driver_bytes: int
    context_bytes: int
    source: TermSource  # measured (the ledger's free memory before load), else the calibration's

    @property
    def taken_bytes(self) -> int:
        return self.driver_bytes + self.context_bytes


def start_overhead(ledger: Ledger, fits: dict[str, LinearTerm] | None = None) -> StartOverhead:
    """The overhead of a start of `ledger`'s launch on its GPU model: CUDA's total per GPU model and the
    engine's context fit (by TP and GPU: the one its calibrated ranks hold, `CalibratedFigures.context_bytes`),
    or, where the ledger measured the free memory before load, the context that measurement leaves against
    CUDA's total."""
    rules = engine_rules(ledger.settings.engine)
    figures = ledger.measured.calibrated if fits is None else None  # other fits: the context is theirs
    fits = engine_fits(ledger.settings.engine, fits)
    given = ledger.measured.engine_total_given()  # the engine's total as given (--gpu-memory) or measured (NVML v2)
    total = given[0] if given is not None else cuda_total_estimate(ledger.gpu_name, ledger.gpu_total_bytes, fits,
                                                                    wsl2=ledger.measured.wsl2).bytes
    driver = max(ledger.gpu_total_bytes - total, 0)
    measured_free = ledger.measured.free_before_load_bytes
    if measured_free is not None:
        return StartOverhead(driver_bytes=driver, context_bytes=max(total - measured_free, 0), source="measured")
    # the context the ledger's ranks hold, where it was calibrated (the same figure, one truth)
    if figures is not None and figures.context_bytes is not None:
        return StartOverhead(driver_bytes=driver, context_bytes=figures.context_bytes, source=figures.context_source)
    context = rules.calibration.context(calibration_inputs(ledger), fits)
    return StartOverhead(driver_bytes=driver, context_bytes=context.bytes, source=context.source)
