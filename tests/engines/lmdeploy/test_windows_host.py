"""A Windows host (docs/engines/lmdeploy.md §15.5): LMDeploy ships Windows wheels, and under WDDM the display driver
and the desktop hold part of the card before TurboMind measures its free memory. No LMDeploy line prints how much,
so kvtop names it as not modelled: `--windows-host` (kvtop's own flag) puts that in the plan's notes and moves no
figure; `explain` reads it off the line only LMDeploy's Windows wheel prints (`turbomind/__init__.py` `bootstrap`,
`os.name == 'nt'`).

The log lines are case 1703's (InternLM/lmdeploy#1703, the Windows wheel of 0.4.2 on an RTX 3090: 118 blocks of
75 MiB, `tests/data/cases/lmdeploy/lmdeploy-1703-internlm-chat-20b-w4-3090-v042`) and the `Add dll path` line as
InternLM/lmdeploy#3825 quotes it from a Windows start.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtop.cli import main
from kvtop.sources.engine_logs import parse_engine_log
from tests.conftest import CONFIGS

LLAMA_8B = str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")
DLL_LINE = (
    r"Add dll path C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.8\bin, please note cuda version should "
    ">= 11.3 when compiled with cuda 11"
)
DATA = Path(__file__).parents[2] / "data"
CASE_1703 = DATA / "cases" / "lmdeploy" / "lmdeploy-1703-internlm-chat-20b-w4-3090-v042"
CONFIG_1703 = DATA / "calibration" / "configs" / "internlm--internlm-chat-20b-w4.RECONSTRUCTED.json"
NOTE = "a Windows host (--windows-host)"


def _plan(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    launch = ["--model", LLAMA_8B, "--engine", "lmdeploy", "--gpu", "RTX3090", "--engine-version", "0.4.2"]
    assert main(["plan", "--json", *launch, *args]) == 0
    return json.loads(capsys.readouterr().out)


def _notes(plan: dict) -> list[str]:
    return [note for note in plan["notes"] if note.startswith(NOTE)]


@pytest.mark.parametrize("backend", ["turbomind", "pytorch"])
def test_the_plan_names_it_and_moves_no_figure(capsys: pytest.CaptureFixture[str], backend: str) -> None:
    plain = _plan(capsys, "--backend", backend)
    windows = _plan(capsys, "--backend", backend, "--windows-host")
    assert _notes(plain) == [] and len(_notes(windows)) == 1
    assert "not modelled" in _notes(windows)[0] and "WDDM" in _notes(windows)[0]
    assert windows["token_capacity"] == plain["token_capacity"]
    assert (windows["token_capacity_min"], windows["token_capacity_max"]) == (
        plain["token_capacity_min"], plain["token_capacity_max"])  # fmt: skip


@pytest.mark.parametrize(
    ("line", "windows"),
    [(DLL_LINE, True), ("2024-06-05 18:11:25,328 - lmdeploy - INFO - model_source: workspace", False)],
)
def test_the_windows_wheels_dll_line_says_a_windows_host(line: str, windows: bool) -> None:
    log = parse_engine_log(line + "\n" + (CASE_1703 / "engine.log").read_text())
    assert ("windows_host=True" in log.decisions) is windows
    assert log.ranks  # the block lines are read as before


def test_to_another_engine_it_is_named_as_lmdeploys_own(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--model", LLAMA_8B, "--gpu", "H100", "--engine", "vllm", "--windows-host"]) == 2
    assert "--windows-host: is kvtop's own flag for LMDeploy" in capsys.readouterr().err


def test_explain_says_it_where_the_free_memory_is_estimated(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Case 1703's log with the Windows wheel's line: TurboMind 0.4.2 prints no free memory, so explain estimates it
    as `plan` does and names the host's share as not modelled; with `--free-after-load` it holds that share already."""
    log = tmp_path / "engine.log"
    log.write_text(DLL_LINE + "\n" + (CASE_1703 / "engine.log").read_text())
    base = [
        "explain",
        str(log),
        "--model",
        str(CONFIG_1703),
        "--gpu",
        "RTX3090",
        "--json",
        "--no-calibration-store",
    ]
    assert main(base) == 0
    assert any(note.startswith(NOTE) for note in json.loads(capsys.readouterr().out)["notes"])
    assert main([*base, "--free-after-load", "10.85GiB"]) == 0
    assert not any(note.startswith(NOTE) for note in json.loads(capsys.readouterr().out)["notes"])
