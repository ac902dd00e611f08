"""benchmarks/calibration/record_check.py: one record's verdict lines and counts, in the format the docs quote."""

from __future__ import annotations

import re

from benchmarks.calibration.record_check import check
from tests.calibration_fits import CORPUS, ONE_WORKER, corpus_fits

pytestmark = ONE_WORKER

RECORD = "msamuelson-gemma-4-31b-fp8-block-3090x2-tp2-len8192-u95-v0210"
LINE = re.compile(
    r"^(blind |logged) (\S+)\s+ ([+-]\d+\.\d\d)% \[(\S+),(\S+)\] truth (\S+) pred (\S+) (holds|MISS ) \S+"
)


def test_one_record_prints_both_ways_and_the_counts() -> None:
    record = next(r for r in CORPUS["vllm"] if r.id == RECORD)
    out = check([record], corpus_fits(), lines=True)
    assert len(out) == 4
    blind, blind_count, logged, logged_count = out
    for line, way in ((blind, "blind "), (logged, "logged")):
        match = LINE.match(line)
        assert match, line
        assert match.group(1) == way and match.group(2) == RECORD
        # the log's capacity (the journal's probe A: 'MML 8192 | 4.04 GiB | 14,561'), not the plan's
        assert float(match.group(6)) == 14561
        error = float(match.group(7)) / 14561 - 1
        assert abs(error * 100 - float(match.group(3))) < 0.01
        assert float(match.group(4)) <= float(match.group(7)) <= float(match.group(5))
        assert (match.group(8) == "holds") == (float(match.group(4)) <= 14561 <= float(match.group(5)))
    assert re.fullmatch(r"== blind: 1 judged, [01] within 5% \((0|100)\.0%\), [01] held", blind_count)
    assert re.fullmatch(r"== logged: 1 judged, [01] within 5% \((0|100)\.0%\), [01] held", logged_count)
