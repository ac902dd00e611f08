"""llama.cpp's budget charges the weights with the label the plan's pre-start block gives that term (operator trial,
I1: `plan --engine llamacpp -c 32768 -np 4` showed "− weights" with no source under a block that said calibrated)."""

from __future__ import annotations

from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.sources.hub import load_model
from tests.data_paths import CONFIGS

LLAMA_8B = str(CONFIGS / "meta-llama--Llama-3.1-8B.json")
# config.json: 8,030,261,248 parameters (embedding and head untied) × 2 B (bf16) = 16,060,522,496 B
BOOK_WEIGHTS = 8_030_261_248 * 2


def _plan(measured: MeasuredInputs | None = None):  # type: ignore[no-untyped-def]
    settings = parse_flags("llamacpp", ["-c", "32768", "-np", "4"])
    return planned_capacity(load_model(LLAMA_8B), settings, gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100",
                            measured=measured)  # fmt: skip


def test_the_weights_step_says_what_the_pre_start_block_says() -> None:
    plan = _plan()
    step = next(s for s in plan.ledger.engine.steps if s.label.startswith("− weights"))
    term = plan.estimate.term(Term.WEIGHTS)
    assert term is not None and term.source == "calibrated"
    assert (step.bytes, step.measured, step.source) == (-BOOK_WEIGHTS, False, "calibrated")
    assert -step.bytes == term.bytes


def test_measured_weights_are_labelled_measured() -> None:
    plan = _plan(MeasuredInputs(weights_bytes=15 * 2**30))  # the operator's --weights-memory 15GiB
    step = next(s for s in plan.ledger.engine.steps if s.label.startswith("− weights"))
    assert (step.bytes, step.measured, step.source) == (-15 * 2**30, True, None)
