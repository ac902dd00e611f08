"""What the log parser keeps of a very long log: the first and last values of a kind per rank, and
only the first `MAX_LOG_BYTES` of a longer file, said in the explanation (issue 17: a 64 MiB log
of one repeated sizing line held a million values, 958 MB of RSS; a log of launch lines was parsed
in quadratic time, 16 MiB in 16 s, 64 MiB past 10 minutes).
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from kvtop.cli import main
from kvtop.domain.engines.sglang.log_records import SglangRankLog
from kvtop.sources import engine_logs
from kvtop.sources.engine_logs import parse_engine_log, read_engine_log
from tests.data_paths import CASES

# SGLang's KV line as a real log prints it (tests/data/cases/sglang/C01), with its count varied.
_KV_LINE = "KV Cache is allocated. #tokens: {tokens}, K size: 8.23 GB, V size: 8.23 GB"
_LAUNCH = (
    "python3 -m sglang.launch_server --model /path/to/Qwen3-235B-A22B-FP8 --tp 4 "
    "--trust-remote-code --host 0.0.0.0 --port 8000 --mem-fraction-static 0.93"
)


def test_a_sizing_line_printed_10000_times_keeps_its_first_and_last_32() -> None:
    counts = list(range(100_000, 110_000))
    log = parse_engine_log("\n".join(_KV_LINE.format(tokens=n) for n in counts))
    (rank,) = log.ranks(SglangRankLog)
    kept = [allocation.tokens for allocation in rank.kv_allocations]
    assert kept == counts[:32] + counts[-32:]
    assert log.lines_parsed == 10_000  # every line was still read and counted


def test_a_launch_command_after_a_flood_of_them_is_the_first_one_joined() -> None:
    """Launch lines index the log rather than copy its rest; the first command (continuations joined) wins."""
    first = "python3 -m sglang.launch_server --model /models/a \\\n    --tp 8 \\\n    --mem-fraction-static 0.9"
    text = "\n".join([first, *[_LAUNCH] * 5_000, _KV_LINE.format(tokens=367_404)])
    log = parse_engine_log(text)
    assert log.launch_command == "python3 -m sglang.launch_server --model /models/a --tp 8 --mem-fraction-static 0.9"
    assert log.lines_parsed == 3 + 5_000 + 1


def test_a_log_longer_than_the_cap_is_cut_and_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    case = (CASES / "sglang" / "C01" / "engine.log").read_bytes()
    long_log = tmp_path / "engine.log"
    long_log.write_bytes(case + b"\n".join(b"INFO request %d finished" % n for n in range(2_000)))
    monkeypatch.setattr(engine_logs, "MAX_LOG_BYTES", 4096)
    assert read_engine_log(long_log).cut_at_bytes == 4096
    short_log = tmp_path / "short.log"
    short_log.write_bytes(case)
    assert read_engine_log(short_log).cut_at_bytes is None

    assert main(["explain", str(long_log), "--model", "qwen3-235b-a22b", "--gpu", "H100"]) == 0
    out = capsys.readouterr().out
    assert "only its first 4.00 KiB were parsed" in out


def test_a_gzip_log_is_inflated_no_further_than_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    """A compressed log that inflates past the cap (a zip bomb: 1 MiB of one byte packs into ~1 KiB) is inflated to
    the cap + 1 byte only, what tells `_parse_start` it was cut, never whole into memory."""
    monkeypatch.setattr(engine_logs, "MAX_LOG_BYTES", 4096)
    packed = gzip.compress(b"x" * (1 << 20))
    assert len(packed) < 4096  # read whole by the byte cap: only the inflating is bounded here
    assert len(engine_logs._inflated(packed, "log", "bomb.log.gz")) == 4096 + 1


def test_the_logs_date_is_looked_for_in_its_first_10000_lines() -> None:
    """The date sets the version era of a log that names no version; a log's date is at its start."""
    dated = "[2025-06-30 10:00:01 TP0] " + _KV_LINE.format(tokens=367_404)
    assert parse_engine_log("\n".join(["undated"] * 9_999 + [dated])).first_date == "2025-06-30"
    assert parse_engine_log("\n".join(["undated"] * 10_000 + [dated])).first_date is None
