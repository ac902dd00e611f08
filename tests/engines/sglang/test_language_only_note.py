"""The plan's "kvtop ignored …" note no longer contradicts the budget on `--language-only` (#27, session 70 operator
pass).

A `--cmd` of SGLang 0.5.12 with `--language-only` printed "kvtop ignored 1 flag of SGLang whose effect on memory it
does not model: --language-only" on stderr while the same plan's budget read it ("--language-only: SGLang 0.5.12
leaves the VLM factor off", server_args.py:1593 at 0.5.12; vlm_fraction_skip.py) for Qwen3-VL-235B-A22B-FP8 at TP 4
on H200s. The flag stays unmodelled for the rest of what it does; the note now says what is read.
"""

from __future__ import annotations

import pytest

from kvtop.cli import main
from tests.data_paths import DATA

MODEL = DATA / "calibration" / "configs" / "Qwen--Qwen3-VL-235B-A22B-Instruct-FP8.RECONSTRUCTED.json"
SERVER = "python3 -m sglang.launch_server --model-path x --tp 4 --kv-cache-dtype fp8_e4m3"


def test_the_note_says_the_flag_is_read_for_the_factor(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--no-calibration-store", "--model", str(MODEL), "--engine", "sglang", "--engine-version",
                 "0.5.12", "--gpu", "H200", "--cmd", f"{SERVER} --language-only"]) == 0  # fmt: skip
    captured = capsys.readouterr()
    assert ("--cmd: kvtop ignored 1 flag of SGLang whose effect on memory it does not model: --language-only (read "
            "for the automatic fraction's VLM factor and for whether the encoder runs on this instance; its other effects "
            "on memory are not)") in captured.err  # fmt: skip
