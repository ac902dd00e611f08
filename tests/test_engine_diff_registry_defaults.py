"""The registry sweep's default configs (tests/data/engine_diff/registry/configs, registry_configs.py): each class
linked to an engine's own config class has its default under that model_type, and the fields a published config
states that the config class leaves out are in the committed files, as the engines read them."""

from __future__ import annotations

import json
from typing import Any

from benchmarks.engine_diff.registry_configs import (
    DEFAULT_CONFIGS,
    ENGINE_CONFIG_TYPES,
    NO_DEFAULT,
    NO_PUBLISHED_CONFIG,
    REGISTRY_DATA,
    WHY_NO_CONFIG,
)


def _default(name: str) -> dict[str, Any]:
    return dict(json.loads((DEFAULT_CONFIGS / f"{name}.json").read_text()))


def test_each_engine_linked_class_has_its_default_under_the_engines_model_type() -> None:
    no_config = json.loads((REGISTRY_DATA / "no_config.json").read_text())
    for name, (_engine, model_type, source) in ENGINE_CONFIG_TYPES.items():
        data = _default(name)
        assert (data["model_type"], data["architectures"]) == (model_type, [name]), source
        assert name not in no_config
    for name, why in NO_DEFAULT.items():  # said in the doc's "no config at hand", not built
        assert not (DEFAULT_CONFIGS / f"{name}.json").exists()
        assert no_config[name].endswith(why) or no_config[name] == NO_PUBLISHED_CONFIG[name]
    for name, why in NO_PUBLISHED_CONFIG.items():  # a class no published config was found for: its reason first
        assert not (DEFAULT_CONFIGS / f"{name}.json").exists()
        assert no_config[name] == why and why.startswith(WHY_NO_CONFIG)


def test_a_composite_is_written_where_kvtop_names_its_text_sub_config() -> None:
    # kvtop's entries name glm4v_text / qwen2_vl_text; a checkpoint's config.json is the composite's
    for name, model_type in (("Glm4vForConditionalGeneration", "glm4v"), ("Qwen2VLForConditionalGeneration", "qwen2_vl"),
                             ("Glm4vMoeForConditionalGeneration", "glm4v_moe")):  # fmt: skip
        data = _default(name)
        assert data["model_type"] == model_type and "text_config" in data and "vision_config" in data


def test_the_published_fields_the_engines_read_are_stated() -> None:
    glm4v = _default("Glm4vForConditionalGeneration")["text_config"]
    assert glm4v["attention_bias"] is True  # vLLM's glm4.py reads an absent one as False, SGLang's as True
    qwen2_vl = _default("Qwen2VLForConditionalGeneration")["vision_config"]
    assert qwen2_vl["in_chans"] == qwen2_vl["in_channels"] == 3  # SGLang's qwen2_vl.py reads in_chans
    lite = _default("Glm4MoeLiteForCausalLM")
    assert lite["mlp_layer_types"][:2] == ["dense", "sparse"] and lite["first_k_dense_replace"] == 1
    glm45v = _default("Glm4vMoeForConditionalGeneration")["text_config"]  # vLLM reads both
    assert (glm45v["head_dim"], glm45v["use_qk_norm"], glm45v["num_attention_heads"]) == (128, False, 96)
    chatglm = _default("ChatGLMForConditionalGeneration")  # THUDM/chatglm3-6b config.json: true, false
    assert (chatglm["original_rope"], chatglm["tie_word_embeddings"]) == (True, False)
    assert "text_config" not in _default("Moondream3ForCausalLM")  # Moondream3Config builds it from `config`


def test_a_defaults_run_merges_no_config_as_the_fixtures_merge() -> None:
    # a run asks only the classes with no config at hand: the committed entries of the classes it did not ask (here
    # InternLM3ForCausalLM, which has a config now, from the committed file) stay; a class it made a default for
    # leaves; a class that failed again takes this run's reason
    from benchmarks.engine_diff.registry_sweep import merge_no_config

    committed = json.loads((REGISTRY_DATA / "no_config.json").read_text())
    asked = {"K2HorizonForCausalLM": "LookupError: again", "NewForCausalLM": "LookupError: new"}
    merged = merge_no_config(committed, asked, made=["H2OVLChatModel"])
    assert merged["InternLM3ForCausalLM"] == committed["InternLM3ForCausalLM"]
    assert "H2OVLChatModel" not in merged and merged["K2HorizonForCausalLM"] == "LookupError: again"
    assert len(merged) == len(committed) - 1 + 1  # one made, one new
