"""A desktop sharing the card, for LMDeploy (docs/engines/lmdeploy.md §15.5): one fact, `--desktop`, however it is
known. LMDeploy ships Windows wheels; under WDDM the display driver and the desktop hold part of the card before
TurboMind or the PyTorch engine measures its free memory once the weights are in, and no LMDeploy line prints how
much. `plan --desktop` says so and lowers only the interval's low end; `explain` reads the fact off the line only
LMDeploy's Windows wheel prints (`turbomind/__init__.py` `bootstrap`, `os.name == 'nt'`), as `--desktop` gives it.

The log lines are case 1703's (InternLM/lmdeploy#1703, the Windows wheel of 0.4.2 on an RTX 3090: 118 blocks of
75 MiB, `tests/data/cases/lmdeploy/lmdeploy-1703-internlm-chat-20b-w4-3090-v042`) and the `Add dll path` line as
InternLM/lmdeploy#3825 quotes it from a Windows start. The share the low end takes is the most a desktop start held
beyond Linux (calibration/host_memory.py): the WSL2 SGLang start's 0.82 GiB held less the per-SM context fit's 0.45 (379.9 MiB,
rounded up to 380 MiB), larger than the most this case may have held and still sized 118 blocks (167 MiB; it was 844
MiB, this case's 9 blocks before TurboMind's zero points and pages were charged; 246 MiB against the older context fit).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from kvtop.cli import main
from kvtop.domain.calibration.host_memory import DESKTOP_HELD_BYTES
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
NOTE = "memory the desktop holds (not modelled)"
FROM_LOG = "a desktop shares this GPU (as --desktop says), read from the log: LMDeploy's Windows wheel"
DESKTOP_HELD = DESKTOP_HELD_BYTES  # the WSL2 start's ~0.37 GiB beyond Linux, rounded up to the MiB (test_host_memory)
# TurboMind keeps an AWQ group's zero point in 16 bits beside its scale (0.4.2 LlamaDecoderLayerWeight.cc
# mallocWeights: scales_and_zeros of input / 128 × output × 2 halves), the checkpoint packs it in 4: 1.5 B more a
# group. internlm-chat-20b: 60 layers × (40 × 15,360 qkv + 40 × 5,120 o + 40 × 27,648 w1|w3 + 108 × 5,120 w2) groups
ZEROS_1703 = 60 * (40 * 15_360 + 40 * 5_120 + 40 * 27_648 + 108 * 5_120) * 3 // 2  # 223,027,200 B = 212.7 MiB
ZEROS_STEP = "− zero points TurboMind holds in 16 bits (the book: as the checkpoint packs them)"
PAGES_STEP = "− weight tensors rounded up to whole device pages (one cudaMalloc each)"
RATIO = 0.8  # --cache-max-entry-count's default at 0.4.2 (TurbomindEngineConfig, PytorchEngineConfig)


def _plan(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    launch = ["--model", LLAMA_8B, "--engine", "lmdeploy", "--gpu", "RTX3090", "--engine-version", "0.4.2"]
    assert main(["plan", "--json", *launch, *args]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("backend", ["turbomind", "pytorch"])
def test_plan_desktop_says_it_and_lowers_only_the_low_end_by_the_ratio_of_it(
    capsys: pytest.CaptureFixture[str], backend: str
) -> None:
    """Both engines give `size_t(free × 0.8)` of the free memory after the weights to KV: a desktop holding 380 MiB
    more takes 0.8 × 380 MiB from the low end's budget (to the byte, `size_t` flooring both sides)."""
    plain = _plan(capsys, "--backend", backend)
    desktop = _plan(capsys, "--backend", backend, "--desktop")
    # plan --json's host_memory is {unified, desktop} (09eddc4), the prose kept as the desktop's note
    assert plain["host_memory"]["desktop"] is None
    assert desktop["host_memory"]["desktop"]["note"].startswith(NOTE)
    assert desktop["host_memory"]["desktop"]["low_end_bytes"] == DESKTOP_HELD
    assert not any(
        "Windows host" in note for note in desktop["notes"]
    )  # one notion: no second, LMDeploy's own
    assert (desktop["token_capacity"], desktop["token_capacity_max"]) == (
        plain["token_capacity"], plain["token_capacity_max"])  # fmt: skip
    taken = plain["kv_budget_min_bytes"] - desktop["kv_budget_min_bytes"]
    assert abs(taken - RATIO * DESKTOP_HELD) <= 1
    assert desktop["token_capacity_min"] < plain["token_capacity_min"]


def test_the_turbomind_low_end_is_its_blocks_of_that_budget(capsys: pytest.CaptureFixture[str]) -> None:
    """TurboMind's blocks of the lowered budget: Llama-3.1-8B's 32 layers × 8 KV heads × 128 × 2 (K, V) × 2 B =
    131,072 B a token, 64 tokens a block."""
    desktop = _plan(capsys, "--backend", "turbomind", "--desktop")
    block = 64 * 32 * 8 * 128 * 2 * 2
    assert desktop["token_capacity_min"] == desktop["kv_budget_min_bytes"] // block * 64


@pytest.mark.parametrize(
    ("line", "desktop"),
    [(DLL_LINE, True), ("2024-06-05 18:11:25,328 - lmdeploy - INFO - model_source: workspace", False)],
)
def test_the_windows_wheels_dll_line_proves_a_desktop(line: str, desktop: bool) -> None:
    log = parse_engine_log(line + "\n" + (CASE_1703 / "engine.log").read_text())
    assert (log.desktop is not None) is desktop
    assert not any("windows" in decision for decision in log.decisions)  # a fact of the host, not a setting
    assert log.ranks  # the block lines are read as before


def test_windows_host_is_no_flag_any_more(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--model", LLAMA_8B, "--gpu", "H100", "--engine", "lmdeploy", "--windows-host"]) == 2
    assert "--windows-host: not a kvtop flag (kvtop plan --help lists them), nor one of LMDeploy's" in capsys.readouterr().err


def _explain(capsys: pytest.CaptureFixture[str], log: Path, *args: str) -> dict:
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
    assert main([*base, *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_explain_reads_the_line_as_desktop_says_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Case 1703's log: TurboMind 0.4.2 prints no free memory, so explain estimates it as `plan` does. With the
    Windows wheel's line it judges as `--desktop` does without it: the same interval, the desktop said; the low end's
    free memory before the load is 380 MiB less, and its blocks are TurboMind's `size_t(free × 0.8) // block`."""
    windows = tmp_path / "engine.log"
    windows.write_text(DLL_LINE + "\n" + (CASE_1703 / "engine.log").read_text())
    from_line = _explain(capsys, windows)
    from_flag = _explain(capsys, CASE_1703 / "engine.log", "--desktop")
    plain = _explain(capsys, CASE_1703 / "engine.log")
    assert from_line["predicted"] == from_flag["predicted"] != plain["predicted"]
    assert from_line["estimated"]["low_bytes"] == plain["estimated"]["low_bytes"] - DESKTOP_HELD
    assert any(note.startswith(FROM_LOG) for note in from_line["notes"])
    assert any(note.startswith(NOTE) for note in from_line["notes"]) and not any(
        note.startswith(NOTE) for note in plain["notes"])  # fmt: skip
    steps = {step["label"]: step["bytes"] for step in from_line["steps"]}
    low_free_after = (
        from_line["estimated"]["low_bytes"] + steps["− weights"] + steps[ZEROS_STEP] + steps[PAGES_STEP]
    )  # the low end: the same weights book, the zero points TurboMind widens to 16 bits, its tensors' pages
    assert steps[ZEROS_STEP] == -ZEROS_1703
    assert steps[PAGES_STEP] == -509_280_256  # test_turbomind_pages.py's hand count (v0.4.2: a cudaMalloc a tensor)
    block = 75 << 20  # the log's `block_size = 75 MB`
    free_low = math.floor(low_free_after * RATIO) // block * 64  # the free memory's own low end
    # the interval also holds the weights book's error (#27: every estimated input's), below the free memory's end by
    # at most its blocks (LMDeploy's interval scale is × 1: docs/calibration.md)
    weights = next(term for term in from_line["estimated"]["others"] if term["term"] == "weights")
    below = free_low - from_line["predicted"]["token_capacity_min"]
    assert 0 < below <= (math.ceil(weights["error_bytes"] * RATIO / block) + 1) * 64


def test_a_free_memory_given_holds_the_desktops_share(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """With `--free-after-load` nothing is estimated: the desktop is still said from the log, its share is not."""
    windows = tmp_path / "engine.log"
    windows.write_text(DLL_LINE + "\n" + (CASE_1703 / "engine.log").read_text())
    given = _explain(capsys, windows, "--free-after-load", "10.85GiB")
    assert any(note.startswith(FROM_LOG) for note in given["notes"])
    assert not any(note.startswith(NOTE) for note in given["notes"])
