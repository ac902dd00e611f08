"""A WSL2 start whose engine sizes from CUDA's total still measures the desktop where its source printed the free
memory at the start (`free_at_start`): the desktop held the card's whole memory less that, less one process's CUDA
context (benchmarks/calibration/desktop.py `held_at_start`). With it three WSL2 sources measure the desktop's share,
and the SGLang RTX 3090 start's fold takes another source's, as large as its own (session 58)."""

from __future__ import annotations

import pytest

from benchmarks.calibration.desktop import desktop_excess, desktop_fits
from benchmarks.calibration.evaluate import observed
from kvtop.domain.calibration.linear import LinearTerm
from kvtop.domain.calibration.plan_fits import desktop_held_bytes
from kvtop.domain.calibration.terms import Term
from kvtop.domain.wording import GIB, MIB
from tests.calibration_fits import CORPUS, ONE_WORKER, corpus_fits

pytestmark = ONE_WORKER  # its fits are tests/calibration_fits.py's: made once per run

RECORDS = {record.id: record for records in CORPUS.values() for record in records}
RTX5080 = RECORDS["file60166145902-qwen2.5-3b-rtx5080-wsl2-v0260"]
RTX3050 = RECORDS["file68393499563-qwen2.5-3b-awq-rtx3050-4gb-wsl2-v0110"]
RTX3090 = RECORDS["my-deepseek-r1-distill-qwen-7b-3090"]


@pytest.fixture(scope="module")
def fits() -> dict[str, LinearTerm]:
    """The whole corpus's fits, made once for this module when its tests run (at import they were made on every
    xdist worker, ≈ 3.5 s of CPU each, whether it ran them or not)."""
    return corpus_fits()


def test_the_rtx_5080_source_s_free_at_start_measures_its_desktop(fits: dict[str, LinearTerm]) -> None:
    """Its source: 'the Windows desktop permanently holds ~1.3 GiB of the 15.92 GiB, so only ~14.6 GiB is free at
    startup'. Under WSL2 CUDA's total is nvidia-smi's 16,303 MiB; 1.32 GiB was held, and beyond one process's CUDA
    context (a few tenths of a GiB on a card of 84 SMs) the desktop held about 1 GiB."""
    assert RTX5080.gpu_total_bytes == 16_303 * MIB and RTX5080.raw["free_at_start"] == "14.6"
    held = desktop_excess(RTX5080, fits)
    assert held is not None
    context = 16_303 * MIB - round(14.6 * GIB) - held
    assert 0.1 * GIB < context < 0.6 * GIB
    assert 0.7 * GIB < held < 1.25 * GIB


def test_the_rtx_3050_laptop_card_s_free_at_start_measures_its_desktop(fits: dict[str, LinearTerm]) -> None:
    """The RTX 3050 4 GB laptop card printed 'Free memory on device (3.21/4.0 GiB) on startup': 0.79 GiB held before
    the load. With its row (RTX3050-LAPTOP, 16 SMs: session 58) one process's context is the calibrated per-SM term,
    not assumed, so the desktop's share is read from it: what the start held less that context (the fit's per-thread
    share: 16 SMs of 1,536 threads, a tenth of an H100's, so well under the 0.79 GiB), the card's whole 4,096 MiB
    being CUDA's total under WSL2. Before the row the card's context was only assumed and nothing was read."""
    assert RTX3050.gpu == "RTX3050-LAPTOP" and RTX3050.raw["free_at_start"] == "3.21"
    assert RTX3050.gpu_total_bytes == 4_096 * MIB
    held = desktop_excess(RTX3050, fits)
    assert held is not None
    context = 4_096 * MIB - round(3.21 * GIB) - held
    assert 0 < context < 0.2 * GIB
    assert 0.59 * GIB < held < 0.79 * GIB


def test_the_rtx_3090_fold_takes_a_desktop_as_large_as_its_own(fits: dict[str, LinearTerm]) -> None:
    """The SGLang RTX 3090 start held 24.00 − 22.76 GiB before its load (its own log); judged without its source,
    the desktop's share its fold's low end takes (the RTX 5080's and lmdeploy#1703's) is no smaller than what its
    own desktop held beyond the plan's Linux context, so its interval can hold."""
    own = desktop_excess(RTX3090, fits)
    held = observed(RTX3090, Term.CONTEXT, fits)
    assert own is not None and held is not None and abs(held - round((24.00 - 22.76) * GIB)) < 0.01 * GIB
    fold = corpus_fits(RTX3090.source)
    assert desktop_held_bytes(desktop_fits(CORPUS, fold, RTX3090.source)) >= own
