"""Default configs that state the layer pattern a published config.json carries beside layer_types (published_fields.py
DERIVED_FIELDS): SGLang 0.5.23 refused them without it and now builds them (issue #26).

- Exaone4ForCausalLM: `sliding_window_pattern` "LLLG" (LGAI-EXAONE/EXAONE-4.0-32B config.json), exaone4.py len().
- ExaoneMoE / ExaoneMoe: `is_moe_layer` (LGAI-EXAONE/K-EXAONE-236B-A23B config.json: [False] + [True] * 47).
- Qwen3.5 / Qwen3.5-MoE / MiniCPM-V 4.6 and 4.7 (text_config): `full_attention_interval` 4 (Qwen/Qwen3.5-27B
  config.json's text_config, tests/data/configs/heldout), read by SGLang's qwen3_next.py layers_block_type.
- MiMoV2ForCausalLM: hybrid_layer_pattern, moe_layer_freq, the swa_* heads and dims, the sink flags,
  layernorm_epsilon and sliding_window_size as XiaomiMiMo/MiMo-V2-Flash's config.json states them (heldout): vLLM
  0.33.0 builds it (it was "could not build"); SGLang 0.5.23 then refuses it as it refuses the real MiMo-V2-Flash
  (get_rope cannot hash the per-layer-type rope dict), and kvtop refuses both classes there.

Engine figures: tests/data/engine_diff/registry/sglang-0.5.23.json, written by `registry_sweep.py --engine sglang
--set classes --only default--Exaone4ForCausalLM,…` (SGLang's `_cell_size` of each rank); the cells below from the
configs' own arithmetic (layers holding K and V × KV heads a rank × head_dim × bf16).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.engine_diff.registry_configs import DATA, DEFAULT_CONFIGS
from benchmarks.engine_diff.registry_judge import BOTH_REFUSE, EQUAL, judge
from benchmarks.engine_diff.registry_sweep import row_of

BF16 = 2


def _default(name: str) -> dict[str, Any]:
    return dict(json.loads((DEFAULT_CONFIGS / f"{name}.json").read_text()))


def _row(config: str, tp: int, engine: str = "sglang", version: str = "0.5.23") -> dict[str, Any]:
    return row_of(engine, version, config, tp)


def test_the_defaults_state_the_published_patterns() -> None:
    assert _default("Exaone4ForCausalLM")["sliding_window_pattern"] == "LLLG"
    for name in ("ExaoneMoEForCausalLM", "ExaoneMoeForCausalLM"):
        data = _default(name)
        assert data["is_moe_layer"] == [False] + [True] * (data["num_hidden_layers"] - 1)
    for name in ("Qwen3_5ForCausalLM", "Qwen3_5MoeForCausalLM"):
        assert _default(name)["full_attention_interval"] == 4
    for name in ("MiniCPMV4_6ForConditionalGeneration", "MiniCPMV4_7ForConditionalGeneration"):
        assert _default(name)["text_config"]["full_attention_interval"] == 4


# class -> (layers holding KV, KV heads, head_dim): EXAONE's 32 layers (SGLang pools sliding ones whole) of 32 KV
# heads × 4,096 // 32; Qwen3.5's full-attention layers only (every 4th of 32 / 40), 4 / 2 KV heads × 256
CELLS = {
    "Exaone4ForCausalLM": (32, 32, 128),
    "ExaoneMoEForCausalLM": (32, 32, 128),
    "ExaoneMoeForCausalLM": (32, 32, 128),
    "Qwen3_5ForCausalLM": (32 // 4, 4, 256),
    "Qwen3_5MoeForCausalLM": (40 // 4, 2, 256),
}


@pytest.mark.parametrize("name", sorted(CELLS))
@pytest.mark.parametrize("tp", [1, 2])
def test_sglang_builds_them_and_kvtop_plans_them_equal(name: str, tp: int) -> None:
    row = _row(f"default--{name}", tp)
    assert row["status"] == "ok"
    layers, kv_heads, head_dim = CELLS[name]
    assert row["cell_size"] == layers * 2 * (kv_heads // tp) * head_dim * BF16
    assert judge("sglang", "0.5.23", row).verdict == EQUAL


@pytest.mark.parametrize("tp", [1, 2])
def test_mimo_v2_with_its_published_fields_builds_on_vllm_and_both_refuse_on_sglang(tp: int) -> None:
    config = _default("MiMoV2ForCausalLM")
    published = json.loads((DATA / "configs" / "heldout" / "XiaomiMiMo--MiMo-V2-Flash.json").read_text())
    for name in ("hybrid_layer_pattern", "moe_layer_freq", "swa_num_key_value_heads", "swa_head_dim",
                 "sliding_window_size", "add_swa_attention_sink_bias"):  # fmt: skip
        assert config[name] == published[name], name
    row = _row("default--MiMoV2ForCausalLM", tp, "vllm", "0.33.0")
    assert row["status"] == "ok"
    pages = {
        (spec.get("sliding_window"), spec["page_size_bytes"]) for spec in row["stages"][0]["layer_specs"]
    }
    # 16 tokens a page × KV heads a rank × (K 192 + V 128) × bf16: full layers 4 KV heads, sliding ones 8 (window 128)
    assert pages == {(None, 16 * (4 // tp) * 320 * BF16), (128, 16 * (8 // tp) * 320 * BF16)}
    assert judge("vllm", "0.33.0", row).verdict == EQUAL
    refused = _row("default--MiMoV2ForCausalLM", tp)
    assert refused["status"] == "refused" and "get_rope" in refused["message"]
    assert judge("sglang", "0.5.23", refused).verdict == BOTH_REFUSE
