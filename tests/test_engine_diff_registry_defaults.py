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
    config_for_class,
    default_configs,
    planned_classes,
    real_configs,
)


def _default(name: str) -> dict[str, Any]:
    return dict(json.loads((DEFAULT_CONFIGS / f"{name}.json").read_text()))


def test_each_engine_linked_class_has_its_default_under_the_engines_model_type() -> None:
    no_config = json.loads((REGISTRY_DATA / "no_config.json").read_text())
    for name, (_engine, model_type, source) in ENGINE_CONFIG_TYPES.items():
        data = _default(name)
        assert (data["model_type"], data["architectures"]) == (model_type, [name]), source
        assert name not in no_config
    have = config_for_class(real_configs() + default_configs())
    for name, why in NO_DEFAULT.items():  # never built from the config class; said in "no config at hand" if none
        assert not (DEFAULT_CONFIGS / f"{name}.json").exists()
        if name not in have:
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


def test_a_defaults_run_keeps_only_the_classes_still_without_a_config() -> None:
    # a run wants the classes kvtop plans that no config names: one it made a default for leaves, one that failed
    # takes this run's reason, one it no longer wants (a config committed since: H2OVLChatModel's recon, session 47's
    # stale entry) leaves; one wanted but not answered keeps the reason it had
    from benchmarks.engine_diff.registry_sweep import merge_no_config

    previous = {"H2OVLChatModel": "LookupError: old", "K2HorizonForCausalLM": "LookupError: old",
                "OldForCausalLM": "no published config: searched"}  # fmt: skip
    failed = {"K2HorizonForCausalLM": "LookupError: again", "NewForCausalLM": "LookupError: new"}
    wanted = ["K2HorizonForCausalLM", "NewForCausalLM", "OldForCausalLM", "MadeForCausalLM"]
    merged = merge_no_config(previous, failed, wanted, made=["MadeForCausalLM"])
    assert merged == {"K2HorizonForCausalLM": "LookupError: again", "NewForCausalLM": "LookupError: new",
                      "OldForCausalLM": "no published config: searched"}  # fmt: skip


def test_no_config_json_lists_exactly_the_planned_classes_without_a_config() -> None:
    # the committed file against the code now: a class in it has no config at hand and is planned (not "not
    # modelled"), and every such class is in it with a reason (docs/fidelity_registry.md's "no config at hand")
    no_config = json.loads((REGISTRY_DATA / "no_config.json").read_text())
    have = config_for_class(real_configs() + default_configs())
    kinds = {name: kind for engine in ("vllm", "sglang") for name, kind, _ in planned_classes(engine)}
    without = {name for name, kind in kinds.items() if kind != "not_modelled" and name not in have}
    assert set(no_config) == without
    assert all(no_config[name] for name in without)
