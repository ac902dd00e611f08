"""Prose a command prints (its notes, hints and error lines) wraps to the terminal's width, COLUMNS or 100, through
one helper (`kvtop.commands.output.prose`); tables keep their width, JSON its strings whole, and an error keeps its
one line where a program reads it (not a terminal: the contract every test of an error reads).

Before (session 66): `kvtop --demo nosuch snapshot` printed one 411-column error line naming the 15 demo scenarios;
`plan --compare all` printed notes of 155 and 186 columns; a plan's start notes ran to 421 columns.
"""

from __future__ import annotations

import io
import itertools
import json
import os
import shlex
import shutil
import sys

import pytest

from kvtop.cli import main
from kvtop.commands.output import prose, shell_prose, terminal_columns
from kvtop.sources.scenario import scenario_dir
from tests.cli_in_process import run_kvtop

COMPARE = ("plan", "--model", "llama-3-70b", "--tp", "4", "--gpu", "H100", "--compare", "all")


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("KVTOP_NO_CALIBRATION_STORE", "1")
    monkeypatch.delenv("COLUMNS", raising=False)  # its own width: not tests/conftest.py's wide COLUMNS


class Terminal(io.StringIO):
    """stderr as a person's terminal has it."""

    def isatty(self) -> bool:
        return True


def _at_terminal(monkeypatch: pytest.MonkeyPatch, *argv: str) -> tuple[int, list[str]]:
    err = Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    return main(list(argv)), err.getvalue().splitlines()


def test_a_long_error_wraps_at_100_columns_at_a_terminal_with_every_word_and_scenario_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    code, lines = _at_terminal(monkeypatch, "--demo", "nosuch", "snapshot")
    assert code != 0 and len(lines) > 1
    assert all(len(line) <= 100 for line in lines), [len(line) for line in lines]
    assert lines[0].startswith("kvtop: error: --demo: no demo scenario 'nosuch' (scenarios: ")
    assert all(line.startswith(" " * len("kvtop: error: ")) for line in lines[1:])  # hung under the text
    said = " ".join(" ".join(lines).split())
    names = sorted(path.stem for path in scenario_dir().glob("*.json"))  # the demo files themselves
    assert len(names) == 15 and f"(scenarios: {', '.join(names)}; or a .json path)" in said


def test_columns_sets_the_width(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "60")
    _, lines = _at_terminal(monkeypatch, "--demo", "nosuch", "snapshot")
    assert max(len(line) for line in lines) <= 60 and len(lines) > 6


def test_an_error_a_program_reads_stays_one_line() -> None:
    """Piped (a script, a log), the error is its one `kvtop: error:` line, as every test of an error reads it."""
    ran = run_kvtop("--demo", "nosuch", "snapshot")
    assert ran.stderr.count("\n") == 1 and len(ran.stderr) > 300


def test_the_compare_notes_wrap_and_its_tables_do_not() -> None:
    out = run_kvtop(*COMPARE).stdout.splitlines()
    notes = [line for line in out if line.startswith("note")]
    assert notes and all(len(line) <= 100 for line in out[out.index(notes[0]) :])
    # the same-budget table keeps its row whole (169 columns): a table is read across, never wrapped
    assert any(line.startswith("  LMDeploy ") and len(line) > 100 for line in out)
    assert "note (TensorRT-LLM): final blocks rounded down: TensorRT-LLM latest may round up" in out
    assert "    (docs/engines/trtllm.md §12)" in out


def test_json_keeps_each_note_whole() -> None:
    document = json.loads(run_kvtop(*COMPARE, "--json").stdout)
    text = json.dumps(document, ensure_ascii=False)
    assert "final blocks rounded down: TensorRT-LLM latest may round up (§12)" in text


def test_a_word_longer_than_the_line_stays_whole_and_a_short_line_is_unchanged() -> None:
    path = "tests/data/cases/trtllm/" + "x" * 90 + "/engine.log"
    assert prose("note: ", f"read {path} whole", width=40).splitlines() == ["note: read", f"      {path}", "      whole"]
    assert prose("note: ", "short", width=40) == "note: short"


def _terminal_of(monkeypatch: pytest.MonkeyPatch, columns: int) -> None:
    """The terminal's own size as `shutil` reads it (no COLUMNS exported: the fixture removed it)."""
    monkeypatch.setattr(shutil, "get_terminal_size", lambda fallback=(100, 24): os.terminal_size((columns, 50)))


def _compare_notes(monkeypatch: pytest.MonkeyPatch, out: io.StringIO) -> list[str]:
    monkeypatch.setattr(sys, "stdout", out)
    assert main(list(COMPARE)) == 0
    lines = out.getvalue().splitlines()
    return lines[next(i for i, line in enumerate(lines) if line.startswith("note")) :]


def test_a_wide_terminal_without_columns_gets_its_own_width(monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: a 160-column terminal whose shell exported no COLUMNS had its notes wrapped at 100."""
    _terminal_of(monkeypatch, 160)
    notes = _compare_notes(monkeypatch, Terminal())
    assert max(len(line) for line in notes) > 100 and all(len(line) <= 160 for line in notes)
    # 110 columns: one line at this terminal (at 100 it was broken before `(docs/engines/trtllm.md §12)`)
    assert "note (TensorRT-LLM): final blocks rounded down: TensorRT-LLM latest may round up (docs/engines/trtllm.md §12)" in notes


def test_a_pipe_wraps_at_100_whatever_the_terminal_and_columns_wins_at_a_terminal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _terminal_of(monkeypatch, 160)
    assert terminal_columns(io.StringIO()) == 100  # a pipe, a log: the README's and the tests' bytes
    assert all(len(line) <= 100 for line in _compare_notes(monkeypatch, io.StringIO()))
    assert terminal_columns(Terminal()) == 160
    monkeypatch.setenv("COLUMNS", "60")
    assert terminal_columns(Terminal()) == 60 and terminal_columns(io.StringIO()) == 60
    monkeypatch.delenv("COLUMNS")
    _terminal_of(monkeypatch, 30)  # too narrow to be meant (a mis-sized pane): the default
    assert terminal_columns(Terminal()) == 100


QWEN_EAGLE = ("plan", "--model", "qwen3-235b-a22b", "--tp", "8", "--ep-size", "8", "--gpu", "H200", "--speculative-algorithm",
              "EAGLE3", "--draft-model", "qwen3-235b-a22b-eagle3", "--ep-num-redundant-experts", "16",
              "--moe-a2a-backend", "deepep", "--host-cache", "1TiB")  # fmt: skip


def test_the_engine_flags_wrap_between_flags_and_paste_as_one_command() -> None:
    """Before (session 66): one 231-column `engine flags:` line. Now lines of at most 100 columns, each but the last
    ending in ` \\`, broken only between flags; a shell reads them back as the JSON's `engine_flags`."""
    out = run_kvtop(*QWEN_EAGLE).stdout.splitlines()
    at = next(i for i, line in enumerate(out) if line.startswith("engine flags: "))
    block = [out[at], *itertools.takewhile(lambda line: line.startswith(" " * 14 + "--"), out[at + 1 :])]
    assert len(block) == 3 and all(len(line) <= 100 for line in block), [len(line) for line in block]
    assert all(line.endswith(" \\") for line in block[:-1]) and not block[-1].endswith("\\")
    pasted = shlex.split("\n".join(block).removeprefix("engine flags: ").replace("\\\n", ""))
    assert pasted == json.loads(run_kvtop(*QWEN_EAGLE, "--json").stdout)["engine_flags"]
    assert "--hicache-size 137.438953" in block[1]  # a flag beside its value


def test_a_quoted_value_stays_with_its_flag_and_a_short_command_is_shlex_join() -> None:
    spec = '{"method": "eagle3", "model": "' + "m" * 60 + '", "num_speculative_tokens": 3}'
    words = ["--tensor-parallel-size", "2", "--speculative-config", spec, "--max-num-seqs", "-1", "--enforce-eager"]
    lines = shell_prose("engine flags: ", words, width=60).split("\n")
    assert lines == [
        "engine flags: --tensor-parallel-size 2 \\",
        f"              --speculative-config {shlex.quote(spec)} \\",  # longer than the line: whole
        "              --max-num-seqs -1 --enforce-eager",
    ]
    assert shlex.split(" ".join(line.removesuffix("\\") for line in lines).removeprefix("engine flags: ")) == words
    assert shell_prose("engine flags: ", words[:2], width=60) == f"engine flags: {shlex.join(words[:2])}"


def test_a_section_stays_beside_its_doc() -> None:
    """`docs/engines/trtllm.md §12` on one line: `§12` alone at a line's start names no doc
    (at 89 columns it was so before: `test_doc_refs_in_outputs` read it bare)."""
    text = "final blocks rounded down: TensorRT-LLM latest may round up (docs/engines/trtllm.md §12)"
    assert prose("note: ", text, width=89).splitlines() == [
        "note: final blocks rounded down: TensorRT-LLM latest may round up",
        "      (docs/engines/trtllm.md §12)",
    ]
