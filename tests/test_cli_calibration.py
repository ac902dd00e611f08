"""`kvtop plan` says what its capacity rests on and how far it may be off; `explain` teaches this node."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kvtop.cli import main
from tests.data_paths import CASES, CONFIGS

LLAMA_8B = str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json")
CASE_LOG = str(CASES / "vllm" / "vllm-10517-llama31-8b-3090-v0" / "engine.log")


def plan(capsys: pytest.CaptureFixture[str], *flags: str) -> dict:
    assert main(["plan", "--model", LLAMA_8B, "--json", *flags]) == 0
    return json.loads(capsys.readouterr().out)


def test_plan_json_has_the_interval_and_each_terms_source(capsys: pytest.CaptureFixture[str]) -> None:
    out = plan(capsys, "--engine", "vllm", "--gpu", "H100", "--engine-version", "0.19.0")
    assert out["token_capacity_min"] < out["token_capacity"] < out["token_capacity_max"]
    terms = {term["term"]: term for term in out["terms"]}
    assert set(terms) == {"cuda_total", "weights", "activation", "non_torch"}  # v0.19: graphs not charged yet
    assert {term["source"] for term in terms.values()} == {"calibrated"}
    assert out["interval_term"] == max(out["terms"], key=lambda t: t["error_bytes"])["term"]
    assert out["calibrated_on_node"] is None
    # the budget's first step is CUDA's H100 total, calibrated on the corpus (79.19 GiB printed by its logs)
    assert out["steps"][0]["source"] == "calibrated" and abs(out["steps"][0]["bytes"] / 2**30 - 79.19) < 0.01


def test_a_measured_free_memory_is_said_measured(capsys: pytest.CaptureFixture[str]) -> None:
    out = plan(capsys, "--gpu", "H100", "--free-memory", "78GiB")
    terms = {term["term"]: term for term in out["terms"]}
    assert terms["context"]["source"] == "measured" and terms["context"]["error_bytes"] == 0
    assert terms["cuda_total"]["bytes"] - terms["context"]["bytes"] == 78 * 2**30


def test_plan_text_shows_the_interval_and_its_widest_term(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--model", LLAMA_8B, "--gpu", "H100", "--tp", "8"]) == 0
    text = capsys.readouterr().out
    line = next(line for line in text.splitlines() if line.startswith("Interval"))
    assert "tokens (±" in line and "mostly CUDA context and NCCL before the weights load (calibrated)" in line
    assert "Before the start (docs/calibration.md): what the plan assumes, per rank" in text


def test_explain_teaches_the_node_and_a_later_plan_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    """The RTX 3090 case printed 14.99 GiB of weights and 3.81 GiB of KV memory under V0 (rules of 0.7.3)."""
    flags = ["--engine", "vllm", "--gpu", "RTX3090", "--engine-version", "0.7.3", "--max-model-len", "20000",
             "--gpu-memory-utilization", "0.9"]  # fmt: skip
    before = plan(capsys, *flags)
    assert before["calibrated_on_node"] is None
    assert main(["explain", CASE_LOG, "--model", LLAMA_8B, "--gpu", "RTX3090"]) == 0
    capsys.readouterr()
    store = Path(os.environ["XDG_STATE_HOME"]) / "kvtop" / "calibration.jsonl"
    line = json.loads(store.read_text())
    assert line["engine"] == "vllm" and line["gpu"] == "RTX3090" and line["model_type"] == "llama"
    assert "/" not in json.dumps(line)  # no path of the model or the log
    after = plan(capsys, *flags)
    assert after["calibrated_on_node"] is not None and after["calibrated_on_node"].startswith("calibrated on this node")
    weights = next(term for term in after["terms"] if term["term"] == "weights")
    assert weights["source"] == "measured" and abs(weights["bytes"] - 14.99 * 2**30) <= 0.005 * 2**30
    # with the store off, neither read nor written
    off = plan(capsys, *flags, "--no-calibration-store")
    assert off["calibrated_on_node"] is None


def test_a_corrupt_store_is_one_line_and_the_plan_goes_on(capsys: pytest.CaptureFixture[str]) -> None:
    store = Path(os.environ["XDG_STATE_HOME"]) / "kvtop" / "calibration.jsonl"
    store.parent.mkdir(parents=True, exist_ok=True)
    store.write_bytes(b"\x00\x01 not json\n")
    assert main(["plan", "--model", LLAMA_8B, "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["token_capacity"] > 0
    assert captured.err.count("\n") == 1 and "1 unreadable line ignored" in captured.err


def test_the_tui_takes_no_calibration_store_like_the_headless_commands(capsys: pytest.CaptureFixture[str]) -> None:
    """`kvtop --no-calibration-store` (the TUI, no subcommand) parses, and its planner then reads nothing from the
    store an earlier `explain` wrote; without the flag the same store's start reaches the planner."""
    from kvtop.cli import build_parser
    from kvtop.commands.tui import _node_measures

    assert main(["explain", CASE_LOG, "--model", LLAMA_8B, "--gpu", "RTX3090"]) == 0
    capsys.readouterr()
    parser = build_parser(full=False)
    on, extra = parser.parse_known_args([])
    off, extra_off = parser.parse_known_args(["--no-calibration-store"])
    assert extra == extra_off == [] and off.command is None and off.no_calibration_store is True
    measures, notice = _node_measures(on)
    assert [measure.gpu for measure in measures] == ["RTX3090"] and notice is None
    assert _node_measures(off) == ((), None)


async def test_the_tuis_corrupt_store_note_is_said_on_its_screen() -> None:
    """Session 54 (operator trial): `kvtop` on a node whose store holds an unreadable line printed the note to
    stderr before the app took the screen, where nobody saw it until quitting. `_node_measures` hands the line to
    the app, which shows it as a notification once its screen is up (the store's line count: one bad line)."""
    from kvtop.cli import build_parser
    from kvtop.commands.tui import _node_measures
    from kvtop.sources.hub import load_model
    from kvtop.ui.app import KvtopApp
    from tests.ui.fakes import FakeSource, FixedClock, llama_snapshot

    store = Path(os.environ["XDG_STATE_HOME"]) / "kvtop" / "calibration.jsonl"
    store.parent.mkdir(parents=True, exist_ok=True)
    store.write_bytes(b"\x00\x01 not json\n")
    args, _ = build_parser(full=False).parse_known_args([])
    measures, notice = _node_measures(args)
    assert measures == () and notice == f"calibration store {store}: 1 unreadable line ignored (delete the file to start afresh)"
    app = KvtopApp(FakeSource(llama_snapshot()), load_model, interval_s=3600.0, clock=FixedClock(), theme="dark",
                   startup_notice=notice)  # fmt: skip
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await pilot.pause()
        assert [note.message for note in app._notifications] == [notice]
