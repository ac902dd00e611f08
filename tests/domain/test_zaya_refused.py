"""Zaya (ZayaForCausalLM, SGLang 0.5.23 models/zaya.py): not modelled, refused naming what no entry reads.

Zyphra/ZAYA1-8B-legacy's config.json (tests/data/configs/heldout, its SOURCES.md) is the schema SGLang 0.5.23's
ZayaConfig reads; SGLang's meta build of it (tests/data/engine_diff/registry/sglang-0.5.23.json) is kept for the
entry that reads CCA: 17,680,978,080 B at TP 1, cell 40,960 B (40 CCA layers × K and V × 2 heads × 128 × 2 B).
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.architectures.coverage import verdict
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.model_config import model_from_config
from tests.conftest import CONFIGS
from tests.data_paths import DATA


def test_zaya_8b_legacy_is_refused_naming_cca_and_its_router() -> None:
    data = json.loads((CONFIGS / "heldout" / "Zyphra--ZAYA1-8B-legacy.json").read_text())
    assert verdict("ZayaForCausalLM")[0] == "not_modelled"
    with pytest.raises(UnsupportedModelError, match=r"compressed convolutional attention .* ZayaRouter blocks"):
        model_from_config(data, source="zaya1-8b-legacy")


def test_sglang_builds_it_and_its_cell_is_the_cca_layers_kv() -> None:
    """configs/zaya.py full_attention_layer_ids: the even layers of 80, 40 CCA layers keeping K and V of
    num_query_groups 2 heads × kv_channels 128, bf16: 40 × 2 × 2 × 128 × 2 B = 40,960 B (20,480 at TP 2)."""
    rows = json.loads((DATA / "engine_diff" / "registry" / "sglang-0.5.23.json").read_text())
    rows = rows["rows"] if isinstance(rows, dict) and "rows" in rows else rows
    found = {r["tp"]: r for r in (rows.values() if isinstance(rows, dict) else rows)
             if isinstance(r, dict) and r.get("config") == "Zyphra--ZAYA1-8B-legacy"}  # fmt: skip
    assert {tp: r["status"] for tp, r in found.items()} == {1: "ok", 2: "ok"}
    assert (found[1]["cell_size"], found[2]["cell_size"]) == (40 * 2 * 2 * 128 * 2, 40 * 2 * 1 * 128 * 2)
