"""The calibration corpus's records (tests/data/calibration/*.jsonl) by id, and their figures as printed:
the independent source the demo's measured figures are checked against."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from kvtop.domain.wording import GIB
from tests.data_paths import DATA


def _records() -> dict[str, dict[str, Any]]:
    records: dict[str, dict[str, Any]] = {}
    for path in sorted((DATA / "calibration").glob("*.jsonl")):
        for line in path.read_text().splitlines():
            if line.strip():
                record = json.loads(line)
                records[record["id"]] = record
    return records


RECORDS = _records()


def logged_gib(reference: str) -> Decimal:
    """A record's figure as printed ('llmd-v019-…:free_before_load'), from its `logged` figures (gpus.jsonl
    keeps CUDA's total beside its id)."""
    record_id, field = reference.split(":")
    record = RECORDS[record_id]
    return Decimal(record.get("logged", {}).get(field) or record[field])


def logged_bytes(reference: str) -> int:
    """The same figure in bytes (GiB × 2^30, rounded)."""
    return round(logged_gib(reference) * GIB)
