"""Prometheus answers typed at the door: instant vectors (labels text, redacted and terminal-safe;
values numbers below 2^63) and the samples that cannot be true named (`typed_answers`).

Every failure is a `PrometheusError` with a named `PrometheusState` (split out of prometheus.py).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from kvtop.domain.cluster import IgnoredSample, PrometheusError, PrometheusState, SampleLie
from kvtop.domain.redact import quoted, redact_mapping, shown_cut
from kvtop.sources.prometheus_gpus import GPU_SUMMARY_QUERIES
from kvtop.sources.prometheus_queries import ENGINE_METRICS

_MAX_SAMPLE = 2.0**63  # bytes, tokens, ages: a sample beyond int64 is an overflow, never a figure


Series = list[tuple[dict[str, str], float]]


def _all_text(labels: dict[Any, Any]) -> bool:
    """Every label value is text: `str.join` refuses any other type (a 1,000-node answer holds 70,000 series)."""
    try:
        "".join(labels.values())
    except TypeError:
        return False
    return True


def _vector(payload: Any, expr: str, *, keep_nan: bool = False) -> Series:
    """The (labels, value) pairs of an instant-vector answer, typed at the door: labels are text, values
    numbers below 2^63 (NaN samples dropped, or kept with `keep_nan` for the caller to name); anything
    else is a BAD_PAYLOAD naming the query."""
    if not isinstance(payload, dict) or "status" not in payload:
        raise PrometheusError(PrometheusState.BAD_PAYLOAD, f"not a Prometheus API answer for {expr!r}")
    if payload["status"] != "success":
        kind, message = shown_cut(str(payload.get("errorType", "error")), 40), str(payload.get("error", "no message"))
        raise PrometheusError(PrometheusState.QUERY_ERROR, f"{kind}: {shown_cut(message, 200)} (query {expr!r})")
    data = payload.get("data")
    result = data.get("result") if isinstance(data, dict) else None
    if not isinstance(data, dict) or data.get("resultType") != "vector" or not isinstance(result, list):
        got = shown_cut(str(data.get("resultType")), 40) if isinstance(data, dict) else type(data).__name__
        raise PrometheusError(PrometheusState.BAD_PAYLOAD, f"expected a vector for {expr!r}, got {got!r}")
    series: Series = []
    for item in result:
        labels = item.get("metric") if isinstance(item, dict) else None
        pair = item.get("value") if isinstance(item, dict) else None
        if not (
            isinstance(labels, dict)
            and _all_text(labels)
            and isinstance(pair, list)
            and len(pair) == 2
            and isinstance(pair[1], str)
        ):
            raise PrometheusError(PrometheusState.BAD_PAYLOAD, f"malformed sample in {expr!r}: {shown_cut(str(item), 80)}")
        try:
            number = float(pair[1])
        except ValueError:
            number = math.inf
        if number != number and not keep_nan:  # NaN samples say nothing
            continue
        if number == number and not abs(number) < _MAX_SAMPLE:
            raise PrometheusError(
                PrometheusState.BAD_PAYLOAD, f"sample {quoted(pair[1])} in {expr!r} is no figure kvtop reads"
            )
        series.append((_shown_labels(labels), number))
    return series


#: a label longer than this (name and value) is redacted every time rather than remembered
_REMEMBERED_LABEL_CHARS = 256


@lru_cache(maxsize=1 << 16)
def _shown_label(name: str, value: str) -> tuple[str, str]:
    """One label as `redact_mapping` shows it (it treats each pair on its own), remembered: a refresh reads
    the same labels again, and a 1,000-node answer holds about 50,000 of them."""
    ((shown_name, shown_value),) = redact_mapping({name: value}).items()
    return shown_name, str(shown_value)


def _shown_labels(labels: dict[str, str]) -> dict[str, str]:
    """Label names and values as kvtop may show them: a value under a secret's name masked, any secret
    of a known shape masked, and each one terminal-safe line (a peer chooses its labels)."""
    shown = {}
    for name, value in labels.items():
        if len(name) + len(value) <= _REMEMBERED_LABEL_CHARS:
            name, value = _shown_label(name, value)
        else:
            name, value = _shown_label.__wrapped__(name, value)
        shown[name] = value
    return shown


def _decoded(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return None


# Queries whose samples are bytes, counts, tokens or ages (never below zero), and fractions (0–1).
_NON_NEGATIVE = ("dcgm", "gpu", "findings", "capacity", *GPU_SUMMARY_QUERIES)
_AGES = ("age", "snapshot_age")


def typed_answers(answers: Mapping[str, Series]) -> tuple[dict[str, Series], tuple[IgnoredSample, ...]]:
    """The answers with every sample that cannot be true taken out (an `up` neither 0 nor 1 is kept:
    its target is INVALID), and each such sample named."""
    kept: dict[str, Series] = {}
    ignored: list[IgnoredSample] = []
    for key, series in answers.items():
        kept[key] = []
        for labels, value in series:
            lie = _lie(key, labels, value)
            if lie is not None:
                ignored.append(IgnoredSample(query=key, instance=labels.get("instance", ""), lie=lie, value=f"{value:g}"))
            if lie is None or lie is SampleLie.NOT_UP_OR_DOWN:
                kept[key].append((labels, value))
    return kept, tuple(ignored)


def _lie(key: str, labels: Mapping[str, str], value: float) -> SampleLie | None:
    if value != value:
        return SampleLie.NOT_A_NUMBER
    if key == "up":
        return None if value in (0.0, 1.0) else SampleLie.NOT_UP_OR_DOWN
    if key in _AGES:
        return SampleLie.FUTURE if value < 0 else None
    if key == "engine" and ENGINE_METRICS.get(labels.get("__name__", ""), ("", True))[1] is False:
        return None if 0.0 <= value <= 1.0 else SampleLie.OUT_OF_RANGE
    if key in _NON_NEGATIVE or key == "engine":
        return SampleLie.NEGATIVE if value < 0 else None
    return None
