"""SGLang's automatic `--mem-fraction-static` for a launch on one H200 (143,771 MiB), context 8,192: the fraction and
the text that says what its reserve holds; the prefill-graph tests compare both with the wheels' arithmetic."""

from __future__ import annotations

import json

from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA

H200 = 143771 << 20


def automatic_fraction(config: str, version: str, flags: list[str]) -> tuple[float, str]:
    """(fraction, its source text) of `config` (a path under tests/data/configs) at `version` with `flags`."""
    path = DATA / "configs" / config
    model = model_from_config(json.loads(path.read_text()), source=path.name)
    settings = parse_flags("sglang", ["--context-length", "8192", *flags]).model_copy(
        update={"engine_version": version}
    )
    engine = predict(model, settings, gpu_total_bytes=H200, gpu_name="H200").engine
    return engine.memory_fraction, engine.memory_fraction_source
