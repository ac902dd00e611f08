"""llama-server's own slot line (`slot load_model: id  0 | task -1 | new slot, n_ctx = 32768`, `SLT_INF` in
ggml-org/llama.cpp tools/server/; `new slot n_ctx_slot = N` in the older examples/server/server.cpp): the context one
slot may fill, measured. explain sets it beside the rule's figure (slot_context.py): where they agree the slot step
says measured; where not, a note names both.

Expected figures are the logs' own lines: Hermes 3 (Llama 3.1 8B, -c 32768 -np 1) prints 32768 once; Gemma 2 2B
(-np 4, kv_unified, n_ctx 8192) prints 8192 for each of its four slots.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtop.cli import main
from kvtop.domain.engines.llamacpp.log_records import LlamacppRankLog
from kvtop.sources.engine_logs import read_engine_log
from tests.data_paths import CASES, CONFIGS, DATA
from tests.engines.llamacpp.gguf_files import GEMMA2_2B, write_gguf

LOGS = CASES / "llamacpp"
HERMES = LOGS / "ollama-hermes3-llama31-8b-q4_0-rtx2060" / "engine.log"
GEMMA2 = LOGS / "gemma2-2b-it-q4_k_m-np-auto-unified" / "engine.log"
SLOT_STEP = "context one slot may fill (n_ctx_slot)"


@pytest.fixture(autouse=True)
def _no_store(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVTOP_NO_CALIBRATION_STORE", "1")


def _explain(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(["explain", "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)


def _slot_step(out: dict) -> dict:
    (step,) = [s for s in out["steps"] if s["label"] == SLOT_STEP]
    return step


def _slot_notes(out: dict) -> list[str]:
    return [note for note in out["notes"] if note.startswith("slot context:")]


def test_the_slot_lines_are_read() -> None:
    (hermes,) = read_engine_log(str(HERMES)).ranks(LlamacppRankLog)
    assert hermes.slot_ctx == (32768,)
    (gemma,) = read_engine_log(str(GEMMA2)).ranks(LlamacppRankLog)
    assert gemma.slot_ctx == (8192, 8192, 8192, 8192)
    (no_line,) = read_engine_log(str(LOGS / "ollama-llama31-8b-np4-kv-self-size" / "engine.log")).ranks(LlamacppRankLog)
    assert no_line.slot_ctx == ()


def test_agreeing_slot_is_measured(capsys: pytest.CaptureFixture[str]) -> None:
    """Llama 3.1 8B trains on 131072 positions: the slot keeps -c 32768, as printed."""
    out = _explain(capsys, str(HERMES), "--model", str(CONFIGS / "meta-llama--Llama-3.1-8B.json"))
    step = _slot_step(out)
    assert (step["value"], step["measured"], step["source"]) == (32768, True, "measured")
    assert "`new slot, n_ctx = 32768`" in step["note"]
    assert out["logged"]["context_length"] == 32768 and _slot_notes(out) == []


def test_gemma2_four_unified_slots_agree(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """kv_unified: each slot's n_ctx_seq is the whole 8192, capped at Gemma 2's 8192 training positions."""
    model = write_gguf(tmp_path / "gemma2.gguf", GEMMA2_2B, "Gemma 2 2b It")
    out = _explain(capsys, str(GEMMA2), "--model", str(model))
    assert (_slot_step(out)["value"], _slot_step(out)["measured"]) == (8192, True) and _slot_notes(out) == []


def test_a_model_with_a_shorter_training_context_disagrees(capsys: pytest.CaptureFixture[str]) -> None:
    """Llama 3 8B has Llama 3.1's KV geometry (the cells still match) but 8192 training positions: the rule caps
    the slot at 8192 where the log printed 32768, which the note says; the step stays the rule's, not measured."""
    config = DATA / "calibration" / "configs" / "meta-llama--Meta-Llama-3-8B-Instruct.json"
    out = _explain(capsys, str(HERMES), "--model", str(config))
    assert out["verdict"] == "match"  # the cells are -c's either way
    step = _slot_step(out)
    assert (step["value"], step["measured"]) == (8192, False)
    (note,) = _slot_notes(out)
    assert "`new slot, n_ctx = 32768`, the rule gives 8,192" in note


def test_a_build_before_b6925_disagrees(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Named build 3673 (before b6925) would give each of the four slots n_ctx / n_parallel = 2048; the Gemma log
    printed 8192 each, so the note shows the build line does not fit the log's slots."""
    log = tmp_path / "with-build.log"
    log.write_text("main: build = 3673 (4084ca73)\n" + GEMMA2.read_text())
    model = write_gguf(tmp_path / "gemma2.gguf", GEMMA2_2B, "Gemma 2 2b It")
    out = _explain(capsys, str(log), "--model", str(model))
    (note,) = _slot_notes(out)
    assert "`new slot, n_ctx = 8192`, the rule gives 2,048" in note
    # the ledger's slot step is that build's figure, the one the note names (not the latest rules' 8,192)
    assert (_slot_step(out)["value"], _slot_step(out)["measured"]) == (2048, False)
