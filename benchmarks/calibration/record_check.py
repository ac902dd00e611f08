"""A quick per-record check: each record of one engine planned with fits on the whole corpus, fully blind and with
the logged weights, its error, interval and whether the interval holds; with no ids, the engine's counts.

A fast approximation, not the corpus's judgement: the fits saw the record (no source is left out), so its figures run
a little kinder than the leave-one-source-out ones of `judgement.py` that docs/calibration.md reports. It answers
"did this change move these records?" in seconds where the held-out judgement takes minutes.

Usage: `PYTHONPATH=. python -m benchmarks.calibration.record_check ENGINE [id-substring ...]` (every record of ENGINE
whose id contains one of the substrings, all of its records when none are given; each judged line is printed only
when substrings are given, the counts always).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping, Sequence

from benchmarks.calibration.corpus import Record, load_all
from benchmarks.calibration.evaluate import Judged, blind, fit_all
from kvtop.domain.calibration.linear import LinearTerm

WITHIN = 0.05  # the corpus's "within 5 %"


def verdict_line(judged: Judged, *, weights_logged: bool) -> str:
    """One judged plan: the way (blind or logged weights), id, error, interval, the log's and the plan's figure."""
    way = "logged" if weights_logged else "blind "
    holds = "holds" if judged.covered else "MISS "
    return (f"{way:6} {judged.record.id:70.70} {judged.error * 100:+7.2f}% [{judged.low:.4g},{judged.high:.4g}] "
            f"truth {judged.truth:.6g} pred {judged.predicted:.6g} {holds} {judged.dominant}")  # fmt: skip


def check(records: Iterable[Record], fits: Mapping[str, LinearTerm], *, lines: bool) -> list[str]:
    """The verdict lines (when `lines`) and, per way, the count line: judged, within 5 %, intervals held."""
    records = list(records)
    out: list[str] = []
    for weights_logged in (False, True):
        judged = [
            j for r in records if (j := blind(r, dict(fits), weights_logged=weights_logged)) is not None
        ]
        if lines:
            out.extend(verdict_line(j, weights_logged=weights_logged) for j in judged)
        within = sum(abs(j.error) <= WITHIN for j in judged)
        held = sum(j.covered for j in judged)
        share = within / max(len(judged), 1) * 100
        way = "logged" if weights_logged else "blind"
        out.append(f"== {way}: {len(judged)} judged, {within} within 5% ({share:.1f}%), {held} held")
    return out


def main(argv: Sequence[str]) -> int:
    if not argv:
        print(
            "usage: python -m benchmarks.calibration.record_check ENGINE [id-substring ...]", file=sys.stderr
        )
        return 2
    engine, subs = argv[0], list(argv[1:])
    corpus = load_all(fresh=True)
    if engine not in corpus:
        print(
            f"record_check: no engine {engine!r} in the corpus (one of {', '.join(sorted(corpus))})",
            file=sys.stderr,
        )
        return 2
    records = [r for r in corpus[engine] if not subs or any(s in r.id for s in subs)]
    for line in check(records, fit_all(corpus), lines=bool(subs)):
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
