"""`explain`'s weights row for a vLLM log says whose figure it is in the column's width (operator pass, session 72).

It read `weights (loading took) 32.19 GB (29.98 GiB)`: a half-quoted label two characters past the 20-wide column.
The figure is the log's own `Model loading took 29.98 GiB memory` (tests/data/served_model/, vLLM 0.19.0 on an H100):
29.98 × 2³⁰ B = 32.19 GB."""

from __future__ import annotations

import pytest

from kvtop.cli import main
from tests.conftest import DATA

H100_LOG = DATA / "served_model" / "vllm-0.19.0-llama-3.1-8b-float32-h100.log"
LLAMA = DATA / "configs" / "meta-llama--Llama-3.1-8B-Instruct.json"


def test_the_vllm_weights_row_names_the_model_load_in_its_column(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "--no-calibration-store", str(H100_LOG), "--model", str(LLAMA), "--gpu", "H100"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "  weights (model load) 32.19 GB (29.98 GiB)" in lines
    assert "  available KV memory  45.96 GB (42.80 GiB)" in lines  # the same column
    assert not any("loading took)" in line for line in lines)
