"""The reading of each difference between kvtop and an engine (filled in from the sweep)."""

from __future__ import annotations

from typing import Any


def reading_for(engine: str, version: str, config: str, tp: int, dtype: str, gpus: tuple[str, ...],
                kvtop: Any, engine_side: Any) -> str:  # fmt: skip
    return "unexplained"
