"""One stage of one engine-diff run as compared (`StageCheck`), and the readings of a difference's text and of
the run's config that the architecture table's rules share (`arch_readings.py`, `quant_readings.py`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from benchmarks.engine_diff.cases import config_path


@dataclass(frozen=True)
class StageCheck:
    """One stage of one run: the engine's figures and kvtop's, and what differs."""

    engine: str
    version: str
    config: str
    layout: str
    differences: tuple[str, ...]
    towers_bytes: int
    stage: int = 0
    layers: tuple[int, int] = (0, 0)  # kvtop's layers of the stage, [start, stop)
    gpu: str = ""  # the run's GPU generation ("sm90"), where the run says it


def weights_delta(text: str) -> int | None:
    """kvtop's weights minus the engine's, from a weights difference's text."""
    match = re.search(r"weights: kvtop ([\d,]+) B, engine ([\d,]+) B", text)
    return int(match.group(1).replace(",", "")) - int(match.group(2).replace(",", "")) if match else None


def config_value(config: str, key: str) -> Any:
    """A field of the run's config.json, or of its text_config where the top level has none."""
    data = json.loads(config_path(config).read_text())
    return data.get(key, (data.get("text_config") or {}).get(key))


def tp_of(check: StageCheck) -> int:
    """The run's TP, from its layout's name."""
    return int(re.search(r"TP(\d+)", check.layout).group(1))  # type: ignore[union-attr]
