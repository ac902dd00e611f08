"""Step-1 (Step1ForCausalLM) on vLLM 0.33.0: its attention takes ALiBi with a square root, which only TRITON_ATTN
serves (kvtop.domain.engines.vllm.backends.ALIBI_SQRT_ERAS, refusals._one_backend (its ONE_BACKEND_FEATURES row)).

Oracle: vLLM 0.33.0's meta build of the registry sweep's default config
(tests/data/engine_diff/registry/configs/Step1ForCausalLM.json) at TP 1 and 2 on sm90 with no flag refuses it:
"use_alibi_sqrt is not supported by backend FLASH_ATTN." (tests/data/engine_diff/registry/vllm-0.33.0.json, the
rows' message; models/step1.py builds Attention(use_alibi_sqrt=True), layers/attention/attention.py raises where
the backend's supports_alibi_sqrt() is False, and only v1/attention/backends/triton_attn.py returns True). With
`--attention-backend TRITON_ATTN` it builds.
"""

from __future__ import annotations

import json

import pytest

from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.launch_check import launch_refusals
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.model_config import model_from_config
from kvtop.domain.wording import GIB
from tests.data_paths import DATA

NAME = "Step1ForCausalLM"
CONFIG = DATA / "engine_diff" / "registry" / "configs" / f"{NAME}.json"
BUDGET = MeasuredInputs(free_before_load_bytes=80 * GIB, free_after_load_bytes=60 * GIB)


def ledger(*extra: str, version: str = "0.33.0", gpu: str = "H100") -> Ledger:
    model = model_from_config(json.loads(CONFIG.read_text()))
    flags = ["--tensor-parallel-size", "1", "--max-model-len", "8192", "--engine-version", version, *extra]
    settings = parse_flags("vllm", flags)
    return predict(model, settings, gpu_total_bytes=gpu_total_bytes(gpu), gpu_name=gpu, measured=BUDGET)


def test_the_engine_refuses_the_default_backend() -> None:
    for tp in (1, 2):
        row = row_of("vllm", "0.33.0", f"default--{NAME}", tp)
        assert row["status"] == "refused" and "use_alibi_sqrt is not supported by backend FLASH_ATTN" in row["message"]


@pytest.mark.parametrize(
    ("extra", "gpu", "backend"),
    [((), "H100", "FLASH_ATTN"), (("--attention-backend", "auto"), "H100", "FLASH_ATTN"),
     ((), "B200", "FLASHINFER"), (("--attention-backend", "flashinfer"), "H100", "FLASHINFER")],
)  # fmt: skip
def test_kvtop_refuses_it_with_the_engines_words(extra: tuple[str, ...], gpu: str, backend: str) -> None:
    (refusal,) = [r for r in launch_refusals(ledger(*extra, gpu=gpu)) if r.field == "--attention-backend"]
    assert f"'use_alibi_sqrt is not supported by backend {backend}.'" in refusal.message
    assert "add --attention-backend TRITON_ATTN" in refusal.message and "step1.py" in refusal.source


@pytest.mark.parametrize("spelling", [("--attention-backend", "TRITON_ATTN"), ("--attention-backend=triton_attn",)])
def test_triton_attn_starts_it(spelling: tuple[str, ...]) -> None:
    assert not launch_refusals(ledger(*spelling))


@pytest.mark.parametrize(("version", "refused"), [("0.13.0", False), ("0.15.1", False), ("0.16.0", True)])
def test_from_the_release_that_added_step1(version: str, refused: bool) -> None:
    """vLLM sdists: models/step1.py is absent from v0.13.0 and v0.15.1, first in v0.16.0 (step1.py:146
    `use_alibi_sqrt=True`; attention.py:279-281 raises on a backend whose supports_alibi_sqrt() is False)."""
    found = [r for r in launch_refusals(ledger(version=version)) if r.field == "--attention-backend"]
    assert bool(found) is refused
