"""Every architecture vLLM 0.33.0 and SGLang 0.5.23 register has a stated verdict in kvtop (issue 26): an entry
plans it, a wrapper's text section is read, it is named "not modelled" with its reason, or it is listed as read
generically. The names are the engines' own (tests/data/architectures/engine_registries.json, read from the
wheels); a new name fails here until it is decided.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from kvtop.domain.architectures.coverage import GENERIC, NAMED_NOT_MODELLED, WRAPPERS, verdict
from kvtop.domain.architectures.registry import ARCHITECTURES, BY_CLASS_NAME
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.model_config import model_from_config
from tests.conftest import CONFIGS, DATA

REGISTRIES = json.loads((DATA / "architectures" / "engine_registries.json").read_text())
NAMES = sorted(
    set(REGISTRIES["vllm_text_generation"]) | set(REGISTRIES["vllm_multimodal"]) | set(REGISTRIES["sglang"])
)


def test_the_registries_are_the_engines_lists() -> None:
    """Sizes as the wheels have them: vLLM 124 text-generation and 127 multimodal keys, SGLang 290 entry classes."""
    assert (
        len(REGISTRIES["vllm_text_generation"]),
        len(REGISTRIES["vllm_multimodal"]),
        len(REGISTRIES["sglang"]),
    ) == (
        124,
        127,
        290,
    )


@pytest.mark.parametrize("name", NAMES)
def test_every_registered_architecture_has_a_stated_verdict(name: str) -> None:
    kind, why = verdict(name)
    assert why and not why.startswith("not in the engines' registries"), (name, kind, why)


def test_the_lists_hold_no_stale_or_doubled_names() -> None:
    """Each hand list names only registered classes, and no class is in two of them or also has an entry."""
    registered = set(NAMES)
    named = set(NAMED_NOT_MODELLED)  # the decoders' and the speech classes' tables
    for listed in (WRAPPERS, GENERIC, named):
        assert set(listed) <= registered, sorted(set(listed) - registered)
        assert not set(listed) & set(BY_CLASS_NAME), sorted(set(listed) & set(BY_CLASS_NAME))
    assert not WRAPPERS & GENERIC and not WRAPPERS & named and not GENERIC & named, sorted(GENERIC & named)


def test_most_text_generation_architectures_are_planned_by_an_entry() -> None:
    counts = Counter(verdict(name)[0] for name in REGISTRIES["vllm_text_generation"])
    assert counts["entry"] >= 73, counts  # 28 more are read generically, 23 named not modelled (coverage.py)
    assert len(ARCHITECTURES) >= 80


def test_a_config_of_a_not_modelled_class_is_refused_with_its_reason() -> None:
    """Dory's looped attention-only and MLP-only layers: its layout no entry reads, so it says so rather than
    planning it as another."""
    dory = {"architectures": ["DoryForCausalLM"], "model_type": "dory", "hidden_size": 768,
            "num_hidden_layers": 24, "vocab_size": 50280}  # fmt: skip
    with pytest.raises(UnsupportedModelError, match=r"^architectures: DoryForCausalLM .*n_recurrent_loops"):
        model_from_config(dory, source="dory")
    v4 = json.loads((CONFIGS / "heldout" / "deepseek-ai--DeepSeek-V4-Flash.json").read_text())
    # DeepSeek-V4's multimodal wrapper (vLLM 0.33.0's class) has no entry; its language model's class has one
    wrapped = {**v4, "architectures": ["DeepseekV4ForConditionalGeneration"], "model_type": "deepseek_v4_vl"}
    with pytest.raises(UnsupportedModelError, match=r"DeepSeek-V4's vision wrapper and V4.1 \(bounded-replay windows, engram layers\): no entry reads"):
        model_from_config(wrapped, source="v4")  # vLLM 0.33.0 models/deepseek_v4: MLAAttentionSpec(tokens_per_state=4/128)
    assert set(v4["compress_ratios"]) == {0, 4, 128}  # the ratios vLLM's compressor accepts (0: sliding window only)


def test_intern_s2_mobius_is_refused_naming_its_expert_banks() -> None:
    """SGLang 0.5.23 models/interns2_mobius.py builds model.meta_mlp, num_blocks routed-expert banks beside the
    layers (InternS2MobiusConfig's text default: 4), and reads each layer's kind from text_config.layer_types, which
    its config class's default leaves out (the registry sweep's build of it stopped there: 'InternS2MobiusTextConfig'
    object has no attribute 'layer_types'); no entry reads the banks, so a config naming the class is refused."""
    mobius = {"architectures": ["InternS2MobiusForConditionalGeneration"], "model_type": "interns2_mobius",
              "text_config": {"model_type": "interns2_mobius_text", "hidden_size": 2048, "num_hidden_layers": 48,
                              "num_attention_heads": 16, "num_key_value_heads": 2, "vocab_size": 151936,
                              "num_blocks": 4}}  # fmt: skip
    assert verdict("InternS2MobiusForConditionalGeneration")[0] == "not_modelled"
    with pytest.raises(UnsupportedModelError, match=r"routed-expert banks \(meta_mlp: num_blocks banks"):
        model_from_config(mobius, source="mobius")


@pytest.mark.parametrize(
    ("name", "model_type", "said"),
    [
        # vLLM 0.33.0 models/alice_ai.py: KDA layers by layer_types, attention residuals; remote-code config only
        ("AliceAIForCausalLM", "alice_ai", r"attention residuals, a projection and a norm for each"),
        # vLLM 0.33.0 models/domyn_edge.py: per_layer_config[i].head_dim, window_sizes[i][0], position_layers[i]
        ("DomynEdgeForCausalLM", "domyn_edge", r"per_layer_config, window_sizes, position_layers"),
    ],
)
def test_a_remote_code_class_whose_layout_no_entry_reads_is_refused(name: str, model_type: str, said: str) -> None:
    """Classes no transformers or engine config class sizes (remote code) whose engine model class builds a layout
    a Llama-shaped generic reading would miss: refused by name rather than planned as a plain decoder."""
    config = {"architectures": [name], "model_type": model_type, "hidden_size": 2048, "num_hidden_layers": 4,
              "num_attention_heads": 16, "num_key_value_heads": 4, "intermediate_size": 5120, "vocab_size": 32000,
              "max_position_embeddings": 4096}  # fmt: skip
    assert verdict(name)[0] == "not_modelled"
    with pytest.raises(UnsupportedModelError, match=said):
        model_from_config(config, source=name)
