"""The held-out replay: each start judged blind before it was added, judged again with the corpus as it was then.

Since session 48 a start added to the corpus is first planned fully blind with the committed fits, and its note says
so ("Judged fully blind before it was added (session 51, …, at d417877e …)"). Here each such record is planned again
with today's kvtop on the corpus as it was at that commit (the records of tests/data/calibration then, as they read
today), with the interval scale of its session's corpus and, beside it, the widening for lying outside that corpus
(`extrapolation.py`): its coverage from the corpus then, its fractions from a leave-one-group-out judgement
(`groups.py`) of the earliest such corpus, which holds no held-out start. It prints how many intervals hold with and
without the widening and the median half-width both ways.

    python benchmarks/calibration/replay.py
"""

from __future__ import annotations

import json
import re
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from benchmarks.calibration.corpus import Record, load_all  # noqa: E402
from benchmarks.calibration.evaluate import Corpus, Judged, blind, fit_all  # noqa: E402
from benchmarks.calibration.groups import extrapolations, judge_groups  # noqa: E402
from benchmarks.calibration.judgement import PlanScores, engine_scale, plan_scores  # noqa: E402
from kvtop.domain.calibration.extrapolation import Extrapolation  # noqa: E402

CORPUS_DIR = "tests/data/calibration"
JUDGED = re.compile(r"blind[^.(]{0,40}? before it was added \(session (\d+)([^)]*)")
COMMIT = re.compile(r"\bat ([0-9a-f]{7,40})\b")


@dataclass(frozen=True)
class HeldOut:
    record: Record
    session: int
    commit: str  # the corpus it was judged against


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout


def ids_at(commit: str) -> frozenset[str]:
    """The ids of the corpus's records at `commit`."""
    found: set[str] = set()
    for path in _git("ls-tree", "--name-only", f"{commit}:{CORPUS_DIR}").split():
        if path.endswith(".jsonl") and path != "gpus.jsonl":
            text = _git("show", f"{commit}:{CORPUS_DIR}/{path}")
            found.update(str(json.loads(line)["id"]) for line in text.splitlines() if line.strip())
    return frozenset(found)


def added_before(record: Record) -> str:
    """The commit before the one that added the record (for a note that names no commit)."""
    path = f"{CORPUS_DIR}/{record.engine}.jsonl"
    commits = _git("log", "--format=%H", "--reverse", "-S", f'"id": "{record.id}"', "--", path).split()
    return f"{commits[0]}~1"


def held_out(corpus: Corpus) -> list[HeldOut]:
    found = []
    for rows in corpus.values():
        for record in rows:
            match = JUDGED.search(str(record.raw.get("note") or ""))
            if match:
                commit = COMMIT.search(match.group(2))
                found.append(HeldOut(record, int(match.group(1)), commit.group(1) if commit else added_before(record)))
    return found


def _before(corpus: Corpus, ids: frozenset[str]) -> Corpus:
    return {engine: [record for record in rows if record.id in ids] for engine, rows in corpus.items()}


def _with_fractions(covered: Extrapolation | None, measured: Extrapolation | None) -> Extrapolation | None:
    """What a corpus covers (`covered`) with the fractions another judgement measured."""
    if covered is None or measured is None:
        return covered
    names = ("gpu_fraction", "version_fraction", "class_fraction", "records", "sources")
    return covered.model_copy(update={name: getattr(measured, name) for name in names})


def _half(judged: Judged) -> float:
    return max(judged.predicted - judged.low, judged.high - judged.predicted) / judged.truth if judged.truth else 0.0


def main() -> int:
    corpus = load_all()
    starts = held_out(corpus)
    ids = {start.commit: ids_at(start.commit) for start in starts}
    first = {}  # each session's earliest corpus: the scale its judgements were made with
    for start in starts:
        if start.session not in first or len(ids[start.commit]) < len(ids[first[start.session]]):
            first[start.session] = start.commit
    scores: dict[int, PlanScores] = {s: plan_scores(_before(corpus, ids[c]), {}) for s, c in first.items()}
    earliest = min(first, key=lambda s: len(ids[first[s]]))
    base = _before(corpus, ids[first[earliest]])
    misses = judge_groups(base, scores[earliest])
    fractions = extrapolations(base, misses)
    print(f"fractions from the corpus at {first[earliest]} ({sum(map(len, base.values()))} records):")
    for engine, found in fractions.items():
        print(f"  {engine}: GPU {found.gpu_fraction:.4f}, release {found.version_fraction:.4f}, "
              f"class {found.class_fraction:.4f} ({found.records} plans, {found.sources} sources)")
    # the fractions the whole corpus gives today (the committed ones): they saw the held-out starts, so the replay with
    # them is not blind, only an upper bound of what the widening can hold
    today = extrapolations(corpus, judge_groups(corpus, plan_scores(corpus, {})))
    rows = []
    fitted: dict[str, dict] = {}
    for start in starts:
        record = start.record
        before = _before(corpus, ids[start.commit])
        if start.commit not in fitted:
            fitted[start.commit] = fit_all(before)
        fits = fitted[start.commit]
        scale = engine_scale(record.engine, scores[start.session])
        covered = extrapolations(before, [])[record.engine] if before.get(record.engine) else None
        ext = _with_fractions(covered, fractions.get(record.engine))
        plain = blind(record, fits, weights_logged=False, scale=scale)
        wide = blind(record, fits, weights_logged=False, scale=scale, extrapolation=ext)
        leaky = blind(record, fits, weights_logged=False, scale=scale,
                      extrapolation=_with_fractions(covered, today.get(record.engine)))  # fmt: skip
        if plain is None or wide is None or leaky is None:
            continue
        rows.append((start, plain, wide, wide.outside, leaky))  # the widening the plan took (the domain's rule)
    print(f"held-out starts judged: {len(rows)} of {len(starts)}")
    for label, index in (("without the widening", 1), ("with the widening", 2),
                         ("with today's fractions (not blind)", 4)):  # fmt: skip
        judged = [row[index] for row in rows]
        held = sum(j.covered for j in judged)
        within = sum(abs(j.error) <= 0.05 for j in judged)
        print(f"  {label}: intervals hold {held}/{len(judged)} ({held / len(judged):.1%}); within 5 % {within}; "
              f"median half-width ± {statistics.median(map(_half, judged)):.1%}")
    outside_rows = [row for row in rows if row[3] is not None]
    for label, index in (("without", 1), ("with", 2), ("with today's fractions", 4)):
        judged = [row[index] for row in outside_rows]
        if judged:
            print(f"  outside the corpus ({len(judged)}), {label}: hold {sum(j.covered for j in judged)}, "
                  f"median half-width ± {statistics.median(map(_half, judged)):.1%}")
    for start, plain, wide, outside, leaky in rows:
        if not plain.covered or not wide.covered or outside is not None:
            print(f"  {start.record.id} [{start.record.engine}, s{start.session}] error {plain.error:+.1%} "
                  f"holds {plain.covered}->{wide.covered}/{leaky.covered} half ± {_half(plain):.1%}->{_half(wide):.1%}"
                  f"/{_half(leaky):.1%} {outside.words if outside else 'inside'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
