"""Gemma-4 Unified (Gemma4UnifiedForConditionalGeneration) as SGLang 0.5.23 builds it from a config whose text
config states no per-layer input width.

Expected figures: the engine's class built on the meta device by the registry sweep (the rows of
default--Gemma4UnifiedForConditionalGeneration in tests/data/engine_diff/registry/sglang-0.5.23.json: its
`language_model` bytes, 10,154,355,712 B at TP 1 and 7,747,873,792 B at TP 2, and `_cell_size` 122,880 / 61,440),
and the shapes `registry_sweep.py --engine sglang --params default--Gemma4UnifiedForConditionalGeneration --tps 1`
listed: embed_tokens_per_layer [262144, 7680], per_layer_model_projection [7680, 2304], per_layer_projection_norm
[256], and on each of 30 layers per_layer_input_gate [256, 2304], per_layer_projection [2304, 256],
post_per_layer_input_norm [2304], all bf16 (the width 256 and 262,144 rows: Gemma4TextConfig's defaults, which
SGLang's `_Gemma4UnifiedConfigAlias` reads the config through); the 5 global layers' qkv_proj [8192, 2304] and
o_proj [2304, 4096] (per_layer_config's head_dim 512). Before this, kvtop read the config generically (no entry
for gemma4_unified_text): 4,274,401,792 B short at TP 1.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.engine_diff.registry_judge import kvtop_answer
from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA

CONFIG = "default--Gemma4UnifiedForConditionalGeneration"
PATH = DATA / "engine_diff" / "registry" / "configs" / "Gemma4UnifiedForConditionalGeneration.json"
AT_0_5_23 = ResolvedVersion(text="0.5.23", source=VersionSource.FLAG)
BF16 = 2


def _row(tp: int) -> dict[str, Any]:
    return row_of("sglang", "0.5.23", CONFIG, tp)


@pytest.mark.parametrize(
    ("tp", "engine_bytes", "engine_cell"), [(1, 10_154_355_712, 122_880), (2, 7_747_873_792, 61_440)]
)
def test_weights_and_cell_are_the_meta_builds(tp: int, engine_bytes: int, engine_cell: int) -> None:
    row = _row(tp)
    assert sum(s["param_bytes"]["language_model"] for s in row["stages"]) == engine_bytes
    assert row["cell_size"] == engine_cell
    plan = kvtop_answer("sglang", "0.5.23", row)
    assert plan["status"] == "ok"
    assert [stage["weights_bytes"] for stage in plan["stages"]] == [engine_bytes]
    assert plan["cell_bytes"] == engine_cell


def test_the_default_per_layer_input_is_the_engines_shapes() -> None:
    """The row SGLang's class adds: the listed per-layer shapes, whole on every rank (TP 1 and 2 alike)."""
    table = 262_144 * 7_680 + 7_680 * 2_304 + 256
    per_layer = 30 * (256 * 2_304 + 2_304 * 256 + 2_304)
    model = model_from_config(json.loads(PATH.read_text()), source=CONFIG)
    assert not model.per_layer_input_stated and model.per_layer_input_size == 0
    for tp in (1, 2):
        rows = engine_rules("sglang").weights_built(
            model, ParallelLayout(tp=tp), range(30), "H100", AT_0_5_23
        )
        added = {r.component: r.bytes for r in rows}
        assert added == {"per_layer_embeddings_default": (table + per_layer) * BF16}


def test_a_stated_width_and_releases_not_read_add_nothing() -> None:
    data = json.loads(PATH.read_text())
    data["text_config"]["hidden_size_per_layer_input"] = 0  # stated: `getattr(...) or 0` builds none
    model = model_from_config(data, source=CONFIG)
    rules = engine_rules("sglang")
    assert rules.weights_built(model, ParallelLayout(), range(30), "H100", AT_0_5_23) == ()
    unstated = model_from_config(json.loads(PATH.read_text()), source=CONFIG)
    before = ResolvedVersion(text="0.5.9", source=VersionSource.FLAG)
    assert rules.weights_built(unstated, ParallelLayout(), range(30), "H100", before) == ()
