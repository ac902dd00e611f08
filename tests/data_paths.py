"""Where the tests' real inputs live: `tests/data/` (configs, engine logs, recorded payloads).

The one definition of these paths; conftest, fakes and benchmarks import it (it needs no pytest).
Each folder's SOURCES.md says where every file came from.
"""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
CONFIGS = DATA / "configs"  # Hugging Face config.json files, `<org>--<model>.json`
CASES = DATA / "cases"  # `<engine>/<case>/engine.log` + case.json
SAMPLES = DATA / "samples"  # /metrics pages, server-info, DCGM, nvidia-smi, NVML, process tables
