"""SGLang given only the free memory after the load: the pre-load figure its slack reads is that + the weights
(model_runner.py `load_model`: weight_load_mem_usage = before − after, docs/engines/sglang.md §4), so it is as
measured as the weights are. Before: labelled from the calibration's weights term alone, "assumed" wherever a plan
had no calibration, even with the weights measured (`--weights-memory`)."""

from __future__ import annotations

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.ledger import predict
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_model
from tests.data_paths import CONFIGS

LLAMA_8B = str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")


def _pre_load_step(measured: MeasuredInputs) -> tuple[int | None, str | None]:
    ledger = predict(load_model(LLAMA_8B), LaunchSettings(engine="sglang", model="llama"), gpu_total_bytes=80 * GIB,
                     gpu_name="H100", measured=measured)  # fmt: skip
    step = next(s for s in ledger.engine.steps if s.label.startswith("free before weight load"))
    return step.bytes, step.source


def test_measured_weights_make_the_pre_load_figure_measured() -> None:
    # 60 GiB free after the load + 15 GiB of weights measured = 75 GiB free before it
    after, weights = 60 * GIB, 15 * GIB
    assert _pre_load_step(MeasuredInputs(free_after_load_bytes=after, weights_bytes=weights)) == (75 * GIB, "measured")


def test_the_books_weights_without_calibration_stay_assumed() -> None:
    # Llama-3.1-8B's book: 8,030,261,248 parameters × 2 B = 16,060,522,496 B (embedding and head untied)
    size, source = _pre_load_step(MeasuredInputs(free_after_load_bytes=60 * GIB))
    assert (size, source) == (60 * GIB + 16_060_522_496, "assumed")
