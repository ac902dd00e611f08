"""`kvtop plan`'s 'outside the corpus' line names the widening's source once.

Operator trial (session 58): `kvtop plan` of SGLang 0.5.9 on an L20 (no record ran one) printed 'the interval, outside
the corpus: no record on a L20; … (± 0.10 GiB of KV, calibrated: calibrated: the 90th percentile …)'.
"""

from __future__ import annotations

import pytest

from kvtop.cli import main
from kvtop.domain.engines.sglang.calibration import EXTRAPOLATION


def test_the_outside_the_corpus_line_says_calibrated_once(capsys: pytest.CaptureFixture[str]) -> None:
    assert EXTRAPOLATION is not None and "L40" not in EXTRAPOLATION.gpus
    if EXTRAPOLATION.gpu_fraction <= 0:  # a refit that measured no miss: no widening term, no line to word
        pytest.skip("the committed fit widens nothing on a GPU no record ran")
    args = ["plan", "--no-calibration-store", "--model", "llama-3.1-8b", "--engine", "sglang"]
    assert main([*args, "--engine-version", "0.5.9", "--gpu", "L40"]) == 0
    line = next(
        each for each in capsys.readouterr().out.splitlines() if "the interval, outside the corpus:" in each
    )
    assert "of KV, calibrated: the 90th percentile of the extra half-width" in line, line
    assert "calibrated: calibrated:" not in line
