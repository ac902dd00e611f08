"""transformers 5.x stores Qwen3-MoE's expert count as `num_local_experts` (Qwen3MoeConfig.attribute_map
{"num_experts": "num_local_experts"}, transformers 5.20.2 models/qwen3_moe/configuration_qwen3_moe.py:51-52), so a
config.json it writes (`to_dict()`, `save_pretrained`) states `num_local_experts` and no `num_experts`; the engines read
`config.num_experts` through that map (vLLM 0.33.0 qwen3_moe.py, SGLang 0.5.23 qwen3_moe.py). kvtop reads the stated
count, never Qwen3MoeConfig's default 128 beside it.

Config: the composed Ovis2_6_MoeForCausalLM.json (tests/data/engine_diff/registry/configs, SOURCES.md: its llm_config is
transformers 5.20.2 `Qwen3MoeConfig().to_dict()`, which writes num_local_experts 128)."""

from __future__ import annotations

import json

from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA

CONFIG = DATA / "engine_diff" / "registry" / "configs" / "Ovis2_6_MoeForCausalLM.json"


def test_a_transformers_5_qwen3_moe_config_reads_its_stated_expert_count() -> None:
    config = json.loads(CONFIG.read_text())
    assert config["llm_config"]["num_local_experts"] == 128 and "num_experts" not in config["llm_config"]
    model = model_from_config(config)
    assert model.moe is not None and model.moe.num_routed_experts == 128
    assert not any(d.field == "num_experts" for d in model.defaults_used)  # stated, under transformers 5's name
    config["llm_config"]["num_local_experts"] = 64
    model = model_from_config(config)
    assert model.moe is not None and model.moe.num_routed_experts == 64

