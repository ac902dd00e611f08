"""Where the tests' real inputs live: `tests/data/` (configs, engine logs, recorded payloads).

The one definition of these paths; conftest, fakes and benchmarks import it (it needs no pytest).
Each folder's SOURCES.md says where every file came from.
"""

from __future__ import annotations

from pathlib import Path

from kvtop.domain.engines.registry import ENGINE_IDS

DATA = Path(__file__).resolve().parent / "data"
CONFIGS = DATA / "configs"  # Hugging Face config.json files, `<org>--<model>.json`
CASES = DATA / "cases"  # `<engine>/<case>/engine.log` + case.json
SAMPLES = DATA / "samples"  # /metrics pages, server-info, DCGM, nvidia-smi, NVML, process tables

#: The engines kvtop has packages for (its registry): the cases of any other engine wait for its package.
READ_ENGINES = ENGINE_IDS


def logged_cases() -> list[Path]:
    """The case folders of READ_ENGINES whose case.json has a `logged` table, sorted.

    The case-wide tests were written for these. The one-figure cases (`logged_token_capacity`,
    `reference`) and the trtllm/lmdeploy folders are kept for the tests that read them.
    """
    return sorted(
        path.parent
        for path in CASES.glob("*/*/case.json")
        if path.parent.parent.name in READ_ENGINES and '"logged":' in path.read_text()
    )
