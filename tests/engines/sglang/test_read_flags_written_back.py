"""SGLang's flags that kvtop's rules read are written back on the plan's "engine flags:" line (and the planner's copy),
as vLLM's are (#27, session 70 operator pass).

Gemma-3 is served as a text model unless `--enable-multimodal` (the VLM fraction and reserve apply only then, README
"Not modelled yet"): google--gemma-3-27b-it at TP 2 on H100s plans 134,450 tokens with the flag and 157,700 without.
The line dropped it, so the flags an operator copied planned (and launched) the second. Expected: every read flag
typed comes back, a list flag one token a value as argparse's nargs="+" takes it, and the line planned again gives
the same figure.
"""

from __future__ import annotations

import shlex

import pytest

from tests.conftest import CONFIGS
from tests.data_paths import DATA
from tests.engines.measured_flags import plan_json

GEMMA3 = ("--model", str(CONFIGS / "google--gemma-3-27b-it.json"), "--engine", "sglang", "--gpu", "H100",
          "--tp", "2")  # fmt: skip


def test_enable_multimodal_is_on_the_line(capsys: pytest.CaptureFixture[str]) -> None:
    on = plan_json(capsys, GEMMA3, "--enable-multimodal")
    off = plan_json(capsys, GEMMA3)
    assert (on["token_capacity"], off["token_capacity"]) == (134_450, 157_700)
    assert shlex.join(on["engine_flags"]) == "--tp-size 2 --enable-multimodal"
    assert plan_json(capsys, GEMMA3, *on["engine_flags"][2:])["token_capacity"] == 134_450


def test_a_list_flag_comes_back_one_token_a_value(capsys: pytest.CaptureFixture[str]) -> None:
    typed = plan_json(capsys, GEMMA3, "--enable-multimodal", "--cuda-graph-bs", "1", "2", "4", "8")
    assert shlex.join(typed["engine_flags"]) == "--tp-size 2 --cuda-graph-bs 1 2 4 8 --enable-multimodal"
    again = plan_json(capsys, GEMMA3, *typed["engine_flags"][2:])
    assert again["token_capacity"] == typed["token_capacity"]


def test_a_partly_read_flag_from_the_engine_s_line_comes_back(capsys: pytest.CaptureFixture[str]) -> None:
    """`--language-only` from a `--cmd` line drops the automatic fraction's VLM factor at 0.5.12 (`and not
    self.language_only`, server_args.py:1593 at 0.5.12): the line that dropped it launched the language server as a
    whole VLM, the factor back on. Expected: the flag on the line, and the line as a `--cmd` plans the same figure."""
    vl = str(DATA / "calibration" / "configs" / "Qwen--Qwen3-VL-235B-A22B-Instruct-FP8.RECONSTRUCTED.json")
    base = ("--model", vl, "--engine", "sglang", "--engine-version", "0.5.12", "--gpu", "H200")
    server = "python3 -m sglang.launch_server --model-path x"
    # with its encoder servers' URLs (SGLang refuses --language-only without them: 0.5.12 server_args.py:4115-4118),
    # which come back as given, each a token (`nargs="+"`, 0.5.12 :6939-6940)
    urls = "--encoder-urls http://10.0.0.1:30002 http://10.0.0.2:30002"
    typed = plan_json(capsys, base, "--cmd", f"{server} --tp 4 --kv-cache-dtype fp8_e4m3 --language-only {urls}")
    without = plan_json(capsys, base, "--cmd", f"{server} --tp 4 --kv-cache-dtype fp8_e4m3")
    assert typed["token_capacity"] != without["token_capacity"]  # the flag moves the figure
    assert shlex.join(typed["engine_flags"]) == f"--tp-size 4 --kv-cache-dtype fp8_e4m3 {urls} --language-only"
    again = plan_json(capsys, base, "--cmd", f"{server} {shlex.join(typed['engine_flags'])}")
    assert again["token_capacity"] == typed["token_capacity"]
