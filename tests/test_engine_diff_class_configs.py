"""The classes no transformers auto mapping names (tests/data/engine_diff/registry/class_configs.json): each row
names the engine whose venv makes its default and where that engine links the class to its config class, and the
committed default is that config class's, under its model_type, naming the class."""

from __future__ import annotations

import json
from typing import Any

from benchmarks.engine_diff.registry_configs import DEFAULT_CONFIGS, REGISTRY_DATA


def _rows() -> dict[str, dict[str, Any]]:
    return dict(json.loads((REGISTRY_DATA / "class_configs.json").read_text())["classes"])


def test_each_linked_class_has_its_default_under_the_engines_config_class() -> None:
    no_config = json.loads((REGISTRY_DATA / "no_config.json").read_text())
    assert _rows()
    for name, row in _rows().items():
        assert row["engine"] in ("vllm", "sglang") and row["source"], name
        data = json.loads((DEFAULT_CONFIGS / f"{name}.json").read_text())
        assert (data["model_type"], data["architectures"]) == (row["model_type"], [name])
        assert name not in no_config


def test_cosmos3_default_is_transformers_cosmos3_omni_a_qwen3_vl_schema() -> None:
    # vLLM 0.33.0 cosmos3.py reads Cosmos3OmniConfig; SGLang 0.5.23's Cosmos3Config subclasses Qwen3VLConfig:
    # both read text_config / vision_config
    data = json.loads((DEFAULT_CONFIGS / "Cosmos3ForConditionalGeneration.json").read_text())
    assert data["text_config"]["num_hidden_layers"] == 32 and "depth" in data["vision_config"]


def test_intern_s2_preview_states_the_layer_schedule_a_qwen3_5_moe_checkpoint_states() -> None:
    # SGLang 0.5.23 configs/qwen3_next.py layers_block_type: layer l is full attention where (l + 1) % interval == 0;
    # Qwen/Qwen3.6-35B-A3B's text_config (tests/data/configs/heldout/wave3) states interval 4 with the same list
    text = json.loads((DEFAULT_CONFIGS / "InternS2PreviewForConditionalGeneration.json").read_text())[
        "text_config"
    ]
    interval, kinds = text["full_attention_interval"], text["layer_types"]
    assert len(kinds) == text["num_hidden_layers"] == 48
    assert kinds == ["full_attention" if (i + 1) % interval == 0 else "linear_attention" for i in range(48)]
    assert text["rope_parameters"]["mrope_section"] == [11, 11, 10]  # 64 rotary dims = 256 × 0.25, halved


def test_intern_s2_preview_states_the_output_gate_vllm_reads() -> None:
    # vLLM 0.33.0 qwen_gdn_linear_attn.py: getattr(config, "output_gate_type", "silu") must be silu/swish/sigmoid;
    # SGLang's Qwen3NextConfig writes None, the Qwen3.x configs that state it say "swish"
    # (tests/data/configs/heldout/nvidia--Qwen3.6-27B-NVFP4.json)
    text = json.loads((DEFAULT_CONFIGS / "InternS2PreviewForConditionalGeneration.json").read_text())[
        "text_config"
    ]
    stated = json.loads(
        (REGISTRY_DATA.parents[1] / "configs" / "heldout" / "nvidia--Qwen3.6-27B-NVFP4.json").read_text()
    )
    assert text["output_gate_type"] == stated["text_config"]["output_gate_type"] == "swish"
