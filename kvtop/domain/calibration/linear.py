"""A fitted term: bytes = Σ coefficient × feature, fitted without negative parts on the corpus.

Features and targets are in GiB so that the committed coefficients read as figures a person can
check ("0.13 GiB + 0.54 GiB per extra TP rank"). The term keeps the held-out error that the corpus
measured for it: the 90th percentile of |prediction − measurement| over fits that left the row's whole
source out (each source weighing as one, `held_out_quantile`), which is the half-width of the interval it
adds to a plan (scaled with the others by the engine's coverage fit, `coverage.py`). It keeps its support
too, the GPU models its rows came from, and the error of the rows whose GPU model no other source held
(`novel_error_bytes`),
and how many sources' rows carried each feature (`feature_sources`) with the error of the rows that carried a feature
no other source's did (`unseen_error_bytes`: each judged by a fit that never saw the feature): a plan outside the
support takes that wider error, and says so (`estimate.beyond_support`, `support.py`).
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from kvtop.domain.calibration.fit import held_out_quantile, leave_group_out, non_negative_least_squares
from kvtop.domain.wording import GIB

ERROR_QUANTILE = 0.9  # the share of held-out records a term's error covers


class LinearTerm(BaseModel):
    """One fitted term of an engine's pre-load memory."""

    model_config = ConfigDict(frozen=True)

    key: str  # e.g. "vllm.activation.v1": the engine, the term and the era it holds for
    features: tuple[str, ...]  # what each coefficient multiplies, in words (GiB)
    coefficients: tuple[float, ...]
    error_bytes: int  # 90th percentile of the leave-one-source-out |error| (the interval's half-width)
    records: int  # how many corpus records it was fitted on
    sources: int = 0  # how many sources (threads, repositories, files) those records came from; 0: not counted
    gpus: tuple[str, ...] = ()  # the GPU models of its records (gpu_model_key); () where not tracked
    novel_error_bytes: int = 0  # the held-out error of rows whose GPU model no other source held
    # per feature, how many sources' rows had it non-zero (() where not tracked): 0 or 1 leaves its coefficient unmeasured
    feature_sources: tuple[int, ...] = ()
    unseen_error_bytes: int = 0  # the held-out error of rows carrying a feature no other source's row carried; 0: none
    # the held-out error of each feature group (rows with the same features non-zero, `feature_group`) that held rows of
    # GROUP_SOURCES sources or more: a plan in that group carries its group's error, not the pool's (`error_for`)
    group_errors: tuple[tuple[str, int], ...] = ()
    # (lowest, highest) of each row's measure less the figure a fit without the row's source gives it, bytes: the
    # held-out misses' spread, kept for a term whose interval is two-sided by its class's misses rather than the 90th
    # percentile of their size (`fit_term`'s `span`: the engine's `SPAN_FITS`, vLLM's hybrid first FULL capture). Each
    # row lies inside the figure its fold gives it plus this span (session 72, review R2: the rows' in-sample spread
    # left 2 of the class's 4 sources outside their fold's) — by the span's making, not a held-out test of it: the span
    # is the min / max over every row, the row's own miss included, so the extreme sources set its ends and sit on
    # them; and a row whose source could not be left out whole (`min_rows`) is held out one at a time, not by source.
    # None: not kept, or no row could be held out (a fit of one row)
    span_bytes: tuple[int, int] | None = None

    def predict_gib(self, values: Sequence[float]) -> float:
        return sum(c * v for c, v in zip(self.coefficients, values, strict=True))

    def predict(self, values: Sequence[float]) -> int:
        """Bytes for these feature values (GiB each)."""
        return round(self.predict_gib(values) * GIB)

    def error_for(self, values: Sequence[float]) -> int:
        """The held-out error of the feature group these values fall in (`group_errors`) where it is wider than the
        pool's, else the pool's: a group of 3–5 sources measures its misses too loosely to claim a narrower one
        (SGLang's TP 1 and PCIe groups, narrowed so, left a 4 × RTX 4090 and an H200 start outside their intervals)."""
        group = feature_group(self.features, values)
        return max(next((error for name, error in self.group_errors if name == group), 0), self.error_bytes)


FitRow = tuple[tuple[float, ...], float]  # (feature values in GiB, measured GiB)
GROUP_SOURCES = 3  # a feature group's own held-out error needs this many sources, or its 90th percentile is one miss


def feature_group(names: Sequence[str], values: Sequence[float]) -> str:
    """The features a row carries (non-zero), by name: rows alike in that are planned alike ('100 SMs + log2(TP) on
    NVLink GPUs')."""
    return " + ".join(name for name, value in zip(names, values, strict=True) if value)


def group_errors(names: Sequence[str], found: Sequence[tuple[float, FitRow, str]]) -> tuple[tuple[str, int], ...]:
    """Each feature group's held-out error (bytes; its 90th percentile, each source as one) over the (|error| GiB, row,
    source) of the held-out rows, for the groups with rows of `GROUP_SOURCES` sources or more."""
    by_group: dict[str, list[tuple[float, str]]] = {}
    for error, row, source in found:
        by_group.setdefault(feature_group(names, row[0]), []).append((error, source))
    return tuple(
        (group, round(held_out_quantile([e for e, _ in rows], ERROR_QUANTILE, [s for _, s in rows]) * GIB))
        for group, rows in sorted(by_group.items()) if len({s for _, s in rows}) >= GROUP_SOURCES
    )  # fmt: skip


class RowOrigin(BaseModel):
    """Where a fit's row came from: its source (rows of one source are left out together) and GPU model."""

    model_config = ConfigDict(frozen=True)

    source: str
    gpu: str = ""


def fit_term(
    key: str,
    features: tuple[str, ...],
    rows: Sequence[FitRow],
    error_gib: float | None = None,
    origins: Sequence[RowOrigin] | None = None,
    min_rows: int = 1,
    span: bool = False,
) -> LinearTerm:
    """The term fitted on `rows`, with its error measured by leaving each row's source out in turn (`origins`;
    without them each row is its own source), or `error_gib`, measured elsewhere (a term of one source has no
    held-out error of its own). A source whose leaving out leaves fewer than `min_rows` rows, or the only source,
    cannot be left out whole (without it the term would not be fitted at all): its rows are left out one at a time.
    That is kinder to them than leaving their source out, but not judging them would be kinder still: the error
    would then rest on the few rows of the other sources (a sweep of 20 starts at one release, the rest 3). `span`: keep
    the held-out misses' spread (`LinearTerm.span_bytes`), signed, from the same held-out figures as the error."""
    coefficients = tuple(non_negative_least_squares([row[0] for row in rows], [row[1] for row in rows]))
    origins = list(origins) if origins is not None else [RowOrigin(source=str(index)) for index in range(len(rows))]

    def refit(others: Sequence[FitRow]) -> list[float]:
        return non_negative_least_squares([row[0] for row in others], [row[1] for row in others])

    def predict(fitted: list[float], row: FitRow) -> float:
        return float(sum(c * v for c, v in zip(fitted, row[0], strict=True)))

    sources = [origin.source for origin in origins]
    held_out = leave_group_out(rows, sources, refit, predict, min_rows)
    if len(rows) > 1 and any(p is None for p in held_out):
        # a source that cannot be left out whole (the others too few to fit the term, or it is the only one): its
        # rows are judged one at a time instead, not dropped, so the error does not rest on the small sources alone
        one_by_one = leave_group_out(rows, [f"{s}/{i}" for i, s in enumerate(sources)], refit, predict)
        held_out = [whole if whole is not None else row for whole, row in zip(held_out, one_by_one, strict=True)]
    found = [(abs(p - row[1]), origin) for p, row, origin in zip(held_out, rows, origins, strict=True) if p is not None]
    judged = [(abs(p - row[1]), row, origin.source) for p, row, origin in zip(held_out, rows, origins, strict=True)
              if p is not None]  # fmt: skip
    # a row carrying a feature no other source's row carries is judged by a fit that never saw that feature: its miss
    # is what a plan using that feature may miss by (`unseen_error_bytes`), not the error of plans whose features the
    # fit has seen, which it would otherwise set alone where the sources are few (vLLM v0.6.4's non-torch fit: its one
    # TP 8 source's 3.84 GiB all-reduce part, missed whole when left out, made every TP 1 plan's error ± 3.84 GiB)
    lone_sources = {source for source, single in zip(sources, alone([row[0] for row in rows], sources), strict=True)
                    if single}  # fmt: skip
    seen = [(error, origin) for error, origin in found if origin.source not in lone_sources] or found
    errors, kept = [error for error, _ in seen], [origin.source for _, origin in seen]
    novel = [(error, origin.source) for error, origin in found if _novel(origin, origins)]
    error = held_out_quantile(errors, ERROR_QUANTILE, kept) if error_gib is None else error_gib
    wider = held_out_quantile([e for e, _ in novel], ERROR_QUANTILE, [s for _, s in novel]) if novel else max(errors, default=error)
    carriers = feature_carriers(rows, sources)
    unseen = unseen_error(rows, sources, alone([row[0] for row in rows], sources))
    return LinearTerm(
        key=key,
        features=features,
        coefficients=tuple(round(c, 6) for c in coefficients),
        error_bytes=round(error * GIB),
        records=len(rows),
        sources=len({origin.source for origin in origins}),
        gpus=tuple(sorted({origin.gpu for origin in origins if origin.gpu})),
        novel_error_bytes=round(max(wider, error) * GIB),
        feature_sources=tuple(len(carrier) for carrier in carriers),
        unseen_error_bytes=round(unseen * GIB),
        group_errors=group_errors(features, judged) if error_gib is None else (),
        span_bytes=held_out_span(held_out, rows) if span else None,
    )


def held_out_span(held_out: Sequence[float | None], rows: Sequence[FitRow]) -> tuple[int, int] | None:
    """(lowest, highest) of each row's measure less its held-out figure (`held_out`, None: not held out), bytes; None
    where no row was held out."""
    misses = [row[1] - p for p, row in zip(held_out, rows, strict=True) if p is not None]
    return (round(min(misses) * GIB), round(max(misses) * GIB)) if misses else None


def feature_carriers(rows: Sequence[FitRow], sources: Sequence[str]) -> list[set[str]]:
    """Per feature, the sources whose rows have it non-zero: a coefficient only they measured."""
    width = len(rows[0][0]) if rows else 0
    return [{source for row, source in zip(rows, sources, strict=True) if row[0][i]} for i in range(width)]


def alone(values: Sequence[tuple[float, ...]], sources: Sequence[str]) -> list[bool]:
    """Per row (its feature values), whether it carries a feature (non-zero) no other source's row carries."""
    carriers = feature_carriers([(row, 0.0) for row in values], sources)
    return [any(value and carriers[i] == {source} for i, value in enumerate(row)) for row, source in zip(values, sources, strict=True)]


def unseen_error(rows: Sequence[FitRow], sources: Sequence[str], lone: Sequence[bool]) -> float:
    """The 90th percentile (each source as one) of the misses of the rows `lone` marks (`alone`), each judged by a fit on
    the other sources' rows, which never saw its feature (whatever `min_rows` allowed the held-out error): what a plan
    using a feature one source measured may miss by. 0.0 where no row is so alone."""
    misses: list[tuple[float, str]] = []
    fitted: dict[str, list[float]] = {}
    for row, source, single in zip(rows, sources, lone, strict=True):
        others = [other for other, owner in zip(rows, sources, strict=True) if owner != source]
        if single and others:
            if source not in fitted:
                fitted[source] = non_negative_least_squares([o[0] for o in others], [o[1] for o in others])
            predicted = sum(c * v for c, v in zip(fitted[source], row[0], strict=True))
            misses.append((abs(predicted - row[1]), source))
    return held_out_quantile([m for m, _ in misses], ERROR_QUANTILE, [s for _, s in misses]) if misses else 0.0


def _novel(origin: RowOrigin, origins: Sequence[RowOrigin]) -> bool:
    """Whether no other source's row shares this row's GPU model (a plan there extrapolates). Releases are not
    compared: the fits are made per era already, and nearly every new source runs a release no record ran."""
    return bool(origin.gpu) and not any(other.gpu == origin.gpu for other in origins if other.source != origin.source)
