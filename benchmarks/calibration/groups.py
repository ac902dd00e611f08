"""Leave-one-GROUP-out: the error a blind plan makes where a whole group of the corpus is absent.

Leave-one-source-out (evaluate.py) removes one thread at one release: another source nearly always holds its GPU
model, its release and its kind of model, so it measures interpolation. A plan on a GPU model no record ran, at a
release newer than any record, or of an architecture class no record had extrapolates (#27's held-out misses). Here
each group is absent in turn:

- a GPU model (`gpu_model_key`): every record on it, of every engine, and the CUDA totals printed of it outside a log;
- an architecture class (`extrapolation.architecture_class`): every record of it, of every engine;
- a release band of one engine (`release_band`): that engine's records of the band and of every newer one, so that
  the band is judged by older records alone, as a plan at a release newer than any record is.

Every left-out record is planned fully blind with fits on the rest and its engine's interval scale from the other
sources' leave-one-source-out scores; its miss beyond its interval is the extra half-width, as independent errors
add (√(miss² − side²)), as a share of the plan's figure (`needed_share`). Per engine and kind of group the 90th
percentile (each source as one) is the fraction a plan outside that kind of group takes (`Extrapolation`); an engine
with fewer than `SOURCES_PER_KIND` sources judged in a kind takes the pool of every engine's.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from benchmarks.calibration.corpus import Record
from benchmarks.calibration.evaluate import Corpus, Judged, blind, fit_all
from benchmarks.calibration.judgement import PlanScores, engine_scale
from kvtop.domain.calibration.extrapolation import Extrapolation, architecture_class, release_band
from kvtop.domain.calibration.fit import held_out_quantile
from kvtop.domain.calibration.linear import ERROR_QUANTILE
from kvtop.domain.engines.registry import display_name
from kvtop.domain.gpus import gpu_model_key

KINDS = ("gpu", "version", "class")
SOURCES_PER_KIND = 3  # an engine's own fraction of a kind needs this many sources judged, else the pool's
BANDS_AT_MINOR = 4  # an engine whose records span this many major.minor bands is banded by them, else by micro too


def record_gpu(record: Record) -> str:
    return gpu_model_key(record.gpu) if record.gpu else ""


def record_class(record: Record) -> str:
    return record.memo(("architecture_class", ""), lambda: architecture_class(record.model))


def band_depth(records: Iterable[Record]) -> int:
    """2 (0.11) where the engine's records span `BANDS_AT_MINOR` major.minor bands or more, else 3 (0.5.9)."""
    bands = {release_band(record.version.release, 2) for record in records} - {None}
    return 2 if len(bands) >= BANDS_AT_MINOR else 3


@dataclass(frozen=True)
class GroupMiss:
    """One record planned with its group absent, and the extra half-width its interval needed."""

    kind: str  # "gpu", "version" or "class"
    group: str
    judged: Judged

    @property
    def needed(self) -> float:
        return needed_share(self.judged)


def needed_share(judged: Judged) -> float:
    """The half-width the interval lacked to meet the log's figure, added as an independent error beside its own side
    (√(miss² − side²)), as a share of the plan's figure; 0 where it held."""
    miss = max(abs(judged.truth - judged.predicted) - judged.truth_half, 0.0)
    side = judged.predicted - judged.low if judged.truth < judged.predicted else judged.high - judged.predicted
    if miss <= side or judged.predicted <= 0:
        return 0.0
    return math.sqrt(miss**2 - max(side, 0.0) ** 2) / judged.predicted


Fold = tuple[str, str, Callable[[Record], bool], Callable[[Record], bool], frozenset[str]]  # kind, group, out, judged


def folds(corpus: Corpus) -> list[Fold]:
    """Each group left out: (kind, group, which records leave the fits, which are judged, GPU totals skipped)."""
    records = [record for rows in corpus.values() for record in rows]
    found: list[Fold] = []
    for gpu in sorted({record_gpu(record) for record in records} - {""}):
        def on_gpu(record: Record, gpu: str = gpu) -> bool:
            return record_gpu(record) == gpu
        found.append(("gpu", gpu, on_gpu, on_gpu, frozenset({gpu})))
    for kind in sorted({record_class(record) for record in records} - {""}):
        def of_class(record: Record, kind: str = kind) -> bool:
            return record_class(record) == kind
        found.append(("class", kind, of_class, of_class, frozenset()))
    for engine, rows in corpus.items():
        depth = band_depth(rows)
        bands = sorted({band for record in rows if (band := release_band(record.version.release, depth)) is not None})
        for band in bands[1:]:  # the oldest band has no older records to be judged by
            def newer(record: Record, engine: str = engine, band: tuple[int, ...] = band, depth: int = depth) -> bool:
                own = release_band(record.version.release, depth)
                return record.engine == engine and own is not None and own >= band

            def in_band(record: Record, engine: str = engine, band: tuple[int, ...] = band, depth: int = depth) -> bool:
                return record.engine == engine and release_band(record.version.release, depth) == band
            found.append(("version", f"{engine} {'.'.join(map(str, band))}", newer, in_band, frozenset()))
    return found


def judge_groups(corpus: Corpus, scores: PlanScores) -> list[GroupMiss]:
    """Every record planned fully blind with each of its groups absent in turn (`folds`)."""
    misses: list[GroupMiss] = []
    for kind, group, out, judged_here, skip in folds(corpus):
        rest = {engine: [record for record in rows if not out(record)] for engine, rows in corpus.items()}
        fits = fit_all(rest, skip_gpus=skip)
        for engine, rows in corpus.items():
            for record in rows:
                if not judged_here(record):
                    continue
                scale = engine_scale(engine, scores, leave_out=record.source)
                result = blind(record, fits, weights_logged=False, scale=scale)
                if result is not None:
                    misses.append(GroupMiss(kind, group, result))
    return misses


def _fraction(misses: list[GroupMiss]) -> float:
    if not misses:
        return 0.0
    return round(held_out_quantile([miss.needed for miss in misses], ERROR_QUANTILE,
                                   [miss.judged.record.source for miss in misses]), 4)  # fmt: skip


def kind_fraction(misses: list[GroupMiss], engine: str, kind: str) -> tuple[float, bool]:
    """The engine's fraction for a kind of group, and whether it is the pool of every engine's (too few sources)."""
    mine = [miss for miss in misses if miss.kind == kind and miss.judged.record.engine == engine]
    if len({miss.judged.record.source for miss in mine}) >= SOURCES_PER_KIND:
        return _fraction(mine), False
    return _fraction([miss for miss in misses if miss.kind == kind]), True


def extrapolations(corpus: Corpus, misses: list[GroupMiss]) -> dict[str, Extrapolation]:
    """Each engine's coverage (its records' GPU models, newest release band, architecture classes) and fractions."""
    found: dict[str, Extrapolation] = {}
    for engine, rows in corpus.items():
        depth = band_depth(rows)
        bands = [band for record in rows if (band := release_band(record.version.release, depth)) is not None]
        mine = [miss for miss in misses if miss.judged.record.engine == engine]
        found[engine] = Extrapolation(
            engine=engine, gpus=tuple(sorted({record_gpu(record) for record in rows} - {""})), band_depth=depth,
            newest_band=max(bands) if bands else None,
            classes=tuple(sorted({record_class(record) for record in rows} - {""})),
            gpu_fraction=kind_fraction(misses, engine, "gpu")[0],
            version_fraction=kind_fraction(misses, engine, "version")[0],
            class_fraction=kind_fraction(misses, engine, "class")[0],
            records=len(mine), sources=len({miss.judged.record.source for miss in mine}),
        )  # fmt: skip
    return found


def summary_rows(misses: list[GroupMiss], engines: Iterable[str]) -> list[tuple[str, str, int, int, float, float, float, bool]]:
    """Per engine and kind: (engine, kind, plans, sources, share held without widening, median |error|, fraction,
    pooled)."""
    rows = []
    for engine in engines:
        for kind in KINDS:
            mine = [miss for miss in misses if miss.kind == kind and miss.judged.record.engine == engine]
            if not mine:
                continue
            held = sum(miss.needed == 0 for miss in mine) / len(mine)
            error = statistics.median(abs(miss.judged.error) for miss in mine)
            fraction, pooled = kind_fraction(misses, engine, kind)
            rows.append((engine, kind, len(mine), len({m.judged.record.source for m in mine}), held, error, fraction,
                         pooled))  # fmt: skip
    return rows


def groups_section(corpus: Corpus, misses: list[GroupMiss]) -> str:
    """docs/calibration.md's leave-one-group-out table: per engine and kind of group, the plans judged with their group
    absent, how many held without a widening, and the widening a plan outside such a group takes."""
    kinds = {"gpu": "GPU model", "version": "release band (older records only)", "class": "architecture class"}
    lines = [
        "### Outside the corpus: leave-one-group-out",
        "",
        "Leave-one-source-out keeps every other source, and nearly always another holds the judged start's GPU model,",
        "release and kind of model: it measures interpolation. Here each GPU model and each architecture class is left",
        "out of the corpus whole (every engine's records, and the GPU's printed totals), and each release band of an",
        "engine is judged by the engine's older records alone; every left-out record is planned fully blind with its",
        "engine's interval scale (`benchmarks/calibration/groups.py`). A plan whose launch lies outside what its",
        "engine's records cover (`kvtop/domain/calibration/extrapolation.py`) widens its ends by the 90th percentile",
        "(each source as one) of the extra half-width these plans needed, as a share of the plan's figure, beside",
        "the terms' errors together (the root of squares); the largest of its kinds where it is outside several. An",
        f"engine with fewer than {SOURCES_PER_KIND} sources judged in a kind takes every engine's pool. A plan inside",
        "every group takes none. `benchmarks/calibration/replay.py` replays the starts judged blind before they were",
        "added, each with the corpus as it was then, with and without the widening.",
        "",
        "| engine | left out | plans | sources | held without widening | median \\|error\\| | widening outside |",
        "|---|---|---|---|---|---|---|",
    ]
    for engine, kind, plans, sources, held, error, fraction, pooled in summary_rows(misses, corpus):
        name = display_name(engine)
        lines.append(f"| {name} | {kinds[kind]} | {plans} | {sources} | {held:.1%} | {error:.1%} | "
                     f"± {fraction:.1%}{' (pool)' if pooled else ''} |")  # fmt: skip
    return "\n".join(lines) + "\n"
