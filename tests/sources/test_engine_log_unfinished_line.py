"""A log whose last line was cut mid-write never yields a cut figure (session 44, task E2).

`head -c 371 tests/data/cases/sglang/C04/engine.log > t.log; kvtop explain t.log ...` printed
"logged capacity 2,795 tokens": the file ends in `#tokens: 2795` of the line
`KV Cache is allocated. #tokens: 2795207, K size: 53.31 GB, V size: 53.31 GB` (case C04, SOURCES.md).
An engine's stdout block-buffered into a file ends like that while the engine still writes it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kvtop.domain.engines.sglang.log_records import SglangRankLog
from kvtop.sources import engine_logs
from kvtop.sources.engine_logs import read_engine_log
from tests.conftest import CASES

C04 = (CASES / "sglang" / "C04" / "engine.log").read_bytes()
KV_LINE = b"KV Cache is allocated. #tokens: 2795207, K size: 53.31 GB, V size: 53.31 GB"


def _allocations(path: Path) -> list[tuple[int | None, str | None]]:
    log = read_engine_log(path)
    return [
        (kv.tokens, kv.k_size.text if kv.k_size else None)
        for rank in log.ranks(SglangRankLog)
        for kv in rank.kv_allocations
    ]


def _cut_after(tmp_path: Path, marker: bytes) -> Path:
    path = tmp_path / "engine.log"
    path.write_bytes(C04[: C04.index(marker) + len(marker)])
    return path


def test_the_whole_log_states_the_whole_capacity(tmp_path: Path) -> None:
    assert KV_LINE in C04
    path = tmp_path / "engine.log"
    path.write_bytes(C04)
    assert _allocations(path) == [(2_795_207, "53.31")]


def test_a_capacity_cut_mid_number_is_not_read(tmp_path: Path) -> None:
    assert _allocations(_cut_after(tmp_path, b"#tokens: 2795")) == []  # was [(2795, None)]


def test_a_cut_figure_is_dropped_and_the_rest_of_the_line_kept(tmp_path: Path) -> None:
    assert _allocations(_cut_after(tmp_path, b"K size: 53.3")) == [(2_795_207, None)]  # not "53.3"


def test_a_whole_last_line_without_its_newline_is_read(tmp_path: Path) -> None:
    assert _allocations(_cut_after(tmp_path, KV_LINE)) == [(2_795_207, "53.31")]


def test_a_log_cut_at_the_read_cap_drops_its_partial_last_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "engine.log"
    path.write_bytes(C04)
    monkeypatch.setattr(engine_logs, "MAX_LOG_BYTES", C04.index(KV_LINE) + len(b"KV Cache is allocated. #tokens: 27"))
    log = read_engine_log(path)
    assert log.cut_at_bytes is not None
    assert [kv for rank in log.ranks(SglangRankLog) for kv in rank.kv_allocations] == []
