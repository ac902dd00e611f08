"""A file that is no engine log is said to be none, whatever launch commands its prose quotes (session 49, F2 #1).

`kvtop explain README.md` read the README's quoted `lmdeploy serve api_server` / `trtllm-serve` commands as a
TensorRT-LLM log, took `backend=turbomind` from the prose `TurbomindEngineConfig(…)` and failed on
"--backend: must be pytorch or tensorrt …", a flag nobody gave.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kvtop.cli import main
from kvtop.sources.engine_logs import parse_engine_log

README = Path(__file__).resolve().parents[1] / "README.md"

#: README.md's LMDeploy section as of session 49 (lines 752-754): prose that quotes a launch command and a config.
LMDEPLOY_PROSE = (
    "`--engine lmdeploy` reads `lmdeploy serve api_server` flags (`--backend turbomind|pytorch`, `--tp`,\n"
    "`--cache-max-entry-count`, `--session-len`, `--max-batch-size`, `--quant-policy`, `--cache-block-seq-len`,\n"
    "`--max-prefill-token-num`, …) and the `TurbomindEngineConfig(…)` / `PytorchEngineConfig(…)` a log prints.\n"
)


def test_quoted_launch_commands_alone_are_no_engine_log() -> None:
    log = parse_engine_log(LMDEPLOY_PROSE, source="README.md")
    assert log.engine is None
    assert not any(log.lines_by_engine.values())
    assert log.decisions == ()  # an empty `TurbomindEngineConfig(…)` states no backend


@pytest.mark.parametrize("path", [README, Path("/etc/hostname")])
def test_explain_of_a_file_that_is_no_log_says_so(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if not path.is_file():
        pytest.skip(f"{path} is absent here")
    assert main(["explain", str(path)]) == 2
    out, err = capsys.readouterr()
    assert err.strip() == (
        f"kvtop: error: log: no SGLang, vLLM, LMDeploy, TensorRT-LLM or llama.cpp startup lines: {path}"
    )
    assert out == ""
