"""SGLang 0.5.23 gives a sliding-window pool only to the classes `is_hybrid_swa_model` lists
(configs/model_config.py); other sliding-window or chunked models keep every layer in the one full pool.

Expected cells are the engine's own `_cell_size` (pool_configurator.py) from its meta build of the registry sweep's
default configs (tests/data/engine_diff/registry/sglang-0.5.23.json, TP 1), and the arithmetic of every layer's K
and V in bf16.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_model
from tests.data_paths import DATA

REGISTRY = DATA / "engine_diff" / "registry"
BUDGET = MeasuredInputs(free_before_load_bytes=80 * GIB, free_after_load_bytes=60 * GIB)


def engine_row(config: str) -> dict[str, Any]:
    rows = json.loads((REGISTRY / "sglang-0.5.23.json").read_text())["rows"]
    row: dict[str, Any] = next(r for r in rows if r["config"] == f"default--{config}" and r["tp"] == 1)
    return row


def plan(config: str, version: str) -> Ledger:
    settings = parse_flags("sglang", ["--tp", "1", "--context-length", "8192", "--engine-version", version])
    model = load_model(str(REGISTRY / "configs" / f"{config}.json"))
    return predict(model, settings, gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100", measured=BUDGET)


@pytest.mark.parametrize(
    ("config", "all_layers_cell"),
    [
        # 48 layers × 8 KV heads × 128 × 2 (K, V) × 2 B: the chunked layers too (Llama4ForCausalLM is not listed)
        ("Llama4ForCausalLM", 48 * 8 * 128 * 2 * 2),
        # 40 layers × 64 KV heads × 128 × 2 × 2 B: its sliding layers too
        ("Cohere2ForCausalLM", 40 * 64 * 128 * 2 * 2),
    ],
)
def test_unlisted_sliding_window_classes_keep_one_full_pool(config: str, all_layers_cell: int) -> None:
    assert engine_row(config)["cell_size"] == all_layers_cell
    ledger = plan(config, "0.5.23")
    assert ledger.kv_bytes_per_token == all_layers_cell
    assert ledger.engine.swa_token_capacity is None


@pytest.mark.parametrize("version", ["0.5.4", "0.5.6.post2", "0.5.10rc0", "0.5.18"])
def test_earlier_releases_keep_one_full_pool_too(version: str) -> None:
    """No release splits Cohere2's pool (engines/sglang/hybrid_swa.py, read in the wheels): 0.4.9.post3 … 0.5.6.post2
    only for a class defining get_attention_sliding_window_size (models/commandr.py does not), 0.5.7 on only for
    the classes configs/model_config.py lists, never Cohere2."""
    ledger = plan("Cohere2ForCausalLM", version)
    assert ledger.kv_bytes_per_token == 40 * 64 * 128 * 2 * 2
    assert ledger.engine.swa_token_capacity is None
