"""Hypothesis strategies that mutate the real configs: wrong types, deletions, overflows, unicode,
truncation, huge values, flipped bytes (the shared atoms of `tests/fuzz/atoms.py`). Shared by the
fuzz test, `benchmarks/fuzz_configs.py` and `benchmarks/fuzz_inputs.py`.

A mutated config is a `Planted`: the bytes of config.json (and of a sibling hf_quant_config.json
where the real model has one), plus the list of mutations for the failure message. Mutations
prefer the fields kvtop reads (the schema's field names) but may touch any key at any depth.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from kvtop.domain.config_schema import OuterConfig, RopeScaling, TextConfig, VisionConfig
from kvtop.domain.quant_schema import CompressedWeights, ModeloptQuant, QuantizationConfig
from tests.data_paths import CONFIGS
from tests.fuzz.atoms import damage_bytes, dumps, mutate_document
from tests.fuzz.runner import Outcome, run_cli
from tests.fuzz.runner import classify as classify_run

CONFIG_FILES = sorted(p for p in CONFIGS.glob("*.json") if "hf_quant_config" not in p.name)
REAL: dict[str, Any] = {p.name: json.loads(p.read_text()) for p in CONFIG_FILES}
REAL_QUANT: dict[str, Any] = {
    p.name: json.loads(p.with_name(p.stem + ".hf_quant_config.json").read_text())
    for p in CONFIG_FILES
    if p.with_name(p.stem + ".hf_quant_config.json").is_file()
}
READ_KEYS = sorted(
    {
        alias
        for model in (OuterConfig, TextConfig, VisionConfig, RopeScaling, QuantizationConfig, ModeloptQuant)
        for name, info in model.model_fields.items()
        for alias in (name, *(getattr(info.validation_alias, "choices", None) or ()))
        if isinstance(alias, str)
    }
    | set(CompressedWeights.model_fields)
    | {"quantization"}
)


@dataclass(frozen=True)
class Planted:
    name: str  # the real config it came from
    config: bytes
    quant: bytes | None
    mutations: tuple[str, ...]

    def write(self, folder: Path) -> Path:
        """config.json (and hf_quant_config.json beside it) in `folder`; the config's path."""
        path = folder / "config.json"
        path.write_bytes(self.config)
        sibling = folder / "hf_quant_config.json"
        if self.quant is not None:
            sibling.write_bytes(self.quant)
        elif sibling.exists():
            sibling.unlink()
        return path


@st.composite
def planted_configs(draw: st.DrawFn, *, max_mutations: int = 4) -> Planted:
    """A real config (and its hf_quant_config) with 1..max_mutations field mutations, sometimes byte-level damage."""
    name = draw(st.sampled_from(sorted(REAL)))
    doc = json.loads(json.dumps(REAL[name]))
    quant = json.loads(json.dumps(REAL_QUANT[name])) if name in REAL_QUANT else None
    done: list[str] = []
    for _ in range(draw(st.integers(1, max_mutations))):
        if quant is not None and draw(st.integers(0, 3)) == 0:
            quant, what = draw(mutate_document(quant, READ_KEYS))
            done.append(f"hf_quant_config: {what}")
        else:
            doc, what = draw(mutate_document(doc, READ_KEYS))
            done.append(what)
    raw = dumps(doc)
    if draw(st.integers(0, 4)) == 0:
        raw, what = draw(damage_bytes(raw))
        done.append(what)
    return Planted(name, raw, dumps(quant) if quant is not None else None, tuple(done))


def plan_in_process(path: Path, *, watchdog_s: int = 10) -> tuple[Outcome, str]:
    """`kvtop plan --model PATH --json` through the CLI's own `main`, in this process (fast), under a
    SIGALRM watchdog: a run still going after `watchdog_s` is a hang (main thread only)."""
    return run_cli(["plan", "--model", str(path), "--json"], watchdog_s=watchdog_s, json_key="token_capacity")


def classify(code: int, stdout: str, stderr: str) -> tuple[Outcome, str]:
    """The outcome of one `kvtop plan --json` run from its exit code and output."""
    return classify_run(code, stdout, stderr, json_key="token_capacity")
