"""The local calibration store: one JSON line per engine start, nothing secret, robust to a bad file."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from kvtop.domain.calibration.node import NodeMeasure
from kvtop.domain.calibration.terms import Term
from kvtop.sources.calibration_store import OFF_ENV, append_measure, read_store, store_disabled, store_path

MEASURE = NodeMeasure(
    date="2026-11-30", engine="vllm", engine_version="0.19.0", gpu="H100", tp=2, pp=1, model_key="0123456789abcdef",
    model_type="llama", settings={"max_num_batched_tokens": None, "enforce_eager": False},
    terms={Term.WEIGHTS: 7 * 2**30, Term.ACTIVATION: 2 * 2**30},
)  # fmt: skip


def test_a_start_written_is_read_back(tmp_path: Path) -> None:
    path = tmp_path / "kvtop" / "calibration.jsonl"
    later = MEASURE.model_copy(update={"date": "2026-12-01"})  # another start of the same launch
    assert append_measure(MEASURE, path) is None and append_measure(later, path) is None
    assert read_store(path).measures == (MEASURE, later)
    line = json.loads(path.read_text().splitlines()[0])
    assert set(line) == {"date", "engine", "engine_version", "gpu", "tp", "pp", "model_key", "model_type", "settings",
                         "terms", "schema_version", "together", "weights_stage", "read_as"}  # fmt: skip


def test_the_same_start_kept_again_is_one_line_the_newest(tmp_path: Path) -> None:
    """Explaining a log again gives a line of the same start (engine, release, GPU, layout, model, settings, the
    log's date): it replaces the line there was, whatever kvtop measured of it then; another start is kept beside,
    and a line that does not read stays as it was."""
    path = tmp_path / "calibration.jsonl"
    other = MEASURE.model_copy(update={"tp": 1})
    again = MEASURE.model_copy(update={"terms": {Term.WEIGHTS: 7 * 2**30}})
    append_measure(MEASURE, path)
    append_measure(other, path)
    with path.open("a") as handle:
        handle.write("{not json\n")
    assert append_measure(MEASURE, path) is None and append_measure(again, path) is None
    assert read_store(path).measures == (other, again)
    assert path.read_text().count("\n") == 3 and "{not json\n" in path.read_text()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and [p.name for p in tmp_path.iterdir()] == ["calibration.jsonl"]


def test_the_store_lives_in_the_xdg_state_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert store_path() == tmp_path / "kvtop" / "calibration.jsonl"


def test_unreadable_lines_are_skipped_and_said_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "calibration.jsonl"
    append_measure(MEASURE, path)
    with path.open("a") as handle:
        handle.write("{not json\n" + json.dumps({"engine": "vllm"}) + "\n\x00\xff garbage\n")
    read = read_store(path)
    assert read.measures == (MEASURE,)
    assert read.notice is not None and "3 unreadable lines ignored" in read.notice and "\n" not in read.notice


def test_a_missing_store_is_empty_and_an_unwritable_one_a_notice(tmp_path: Path) -> None:
    assert read_store(tmp_path / "none.jsonl").measures == ()
    blocker = tmp_path / "file"
    blocker.write_text("")
    notice = append_measure(MEASURE, blocker / "kvtop" / "calibration.jsonl")
    assert notice is not None and "not written" in notice and "--no-calibration-store" in notice


def test_the_flag_and_the_environment_turn_it_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(OFF_ENV, raising=False)
    assert not store_disabled() and store_disabled(True)
    monkeypatch.setenv(OFF_ENV, "1")
    assert store_disabled()
    monkeypatch.setenv(OFF_ENV, "0")
    assert not store_disabled()


def test_a_truncated_line_wrong_types_and_another_schema_are_one_line(tmp_path: Path) -> None:
    """A line cut short, one whose tp is a word, and one a later kvtop wrote (schema 2, its terms perhaps
    meaning something else): none is used, the newer one no less than the broken ones; the notice is one line."""
    path = tmp_path / "calibration.jsonl"
    append_measure(MEASURE, path)
    line = json.dumps(MEASURE.model_dump(mode="json"))
    newer = MEASURE.model_dump(mode="json") | {"schema_version": 2, "date": "2027-01-01"}
    wrong = MEASURE.model_dump(mode="json") | {"tp": "two"}
    with path.open("a") as handle:
        handle.write(line[:40] + "\n" + json.dumps(wrong) + "\n" + json.dumps(newer) + "\n")
    read = read_store(path)
    assert read.measures == (MEASURE,)
    assert read.notice is not None and "\n" not in read.notice
    assert "3 unreadable lines ignored, 1 of another store schema than 1" in read.notice


def test_a_new_store_is_its_users_alone(tmp_path: Path) -> None:
    """It names the models and engines this node runs: kvtop creates the file 0600 and its kvtop folder 0700
    (whatever the umask allows beyond that), never world-readable as a plain open()'s 0644 would be."""
    import os

    old = os.umask(0o022)  # the common default, under which open("a") would give 0644
    try:
        path = tmp_path / "state" / "kvtop" / "calibration.jsonl"
        assert append_measure(MEASURE, path) is None
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_a_store_read_from_its_end_drops_the_cut_line_unsaid(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past MAX_STORE_BYTES the store is read from its end: the line the window cuts through is older than it, not
    an unreadable one, so no notice is given (each line is len(line) bytes; the window holds the last two and a part)."""
    import kvtop.sources.calibration_store as store

    path = tmp_path / "calibration.jsonl"
    starts = [MEASURE.model_copy(update={"date": f"2026-11-{day}"}) for day in (28, 29, 30)]  # lines of one length
    for start in starts:
        append_measure(start, path)
    line = len(path.read_bytes()) // 3
    monkeypatch.setattr(store, "MAX_STORE_BYTES", 2 * line + 10)
    read = read_store(path)
    assert read.measures == tuple(starts[1:]) and read.notice is None
    monkeypatch.setattr(store, "MAX_STORE_BYTES", 2 * line)  # a window starting on a line's first byte keeps it
    assert read_store(path).measures == tuple(starts[1:])
