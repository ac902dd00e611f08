"""Configs SGLang 0.5.23 cannot build from what they hold (kvtop.domain.engines.sglang.config_checks, docs/engines/
sglang.md §4.7), each refused against the engine's own recorded answer for the same real config: the registry
sweep's rows (tests/data/engine_diff/registry/sglang-0.5.23.json, SGLang's class built on the meta device by
registry_sweep.py, TP 1 and 2), whose messages name the engine file and the exception it raised."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtop.domain.errors import InputError
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model import ModelSpec
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS
from tests.data_paths import DATA

REGISTRY = DATA / "engine_diff" / "registry"
H100 = 81559 << 20


def engine_rows(config: str) -> list[dict]:
    rows = json.loads((REGISTRY / "sglang-0.5.23.json").read_text())["rows"]
    return [row for row in rows if row["config"] == config]


def plan(model: ModelSpec, version: str = "0.5.23"):
    settings = parse_flags("sglang", ["--engine-version", version])
    return predict(model, settings, gpu_total_bytes=H100, gpu_name="H100")


@pytest.mark.parametrize(
    ("config", "field", "engine_words"),
    [
        # AutoConfig: "has model type `deepseek_ref` but Transformers does not recognize this architecture"
        ("sgl-project--DeepSeek-V4-Flash-FP8", "model_type", "does not recognize this architecture"),
        ("sgl-project--DeepSeek-V4-Pro-FP8", "model_type", "does not recognize this architecture"),
        # models/mimo_v2.py -> layers/rotary_embedding/factory.py get_rope: TypeError unhashable type: 'dict'
        ("XiaomiMiMo--MiMo-V2-Flash", "rope_parameters", "unhashable type: 'dict'"),
        # arg_groups/model_overrides/nemotron_h.py: AttributeError ... no attribute 'quantization_config'
        ("nvidia--NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4", "quantization_config", "quantization_config"),
        # models/mistral.py: AttributeError 'dict' object has no attribute 'pad_image_border'
        ("mlc--ministral3_3b_2512", "model_type", "pad_image_border"),
        # models/transformers.py: AttributeError 'Conv2d' object has no attribute 'num_embeddings'
        ("mlc--llava", "vision_config.model_type", "num_embeddings"),
    ],
)
def test_sglang_refuses_the_configs_its_engine_cannot_build(
    config: str, field: str, engine_words: str
) -> None:
    rows = engine_rows(config)
    assert sorted(row["tp"] for row in rows) == [1, 2]
    assert all(row["status"] == "refused" and engine_words in row["message"] for row in rows)
    model = load_model(str(CONFIGS / "heldout" / f"{config}.json"))
    with pytest.raises(InputError) as refused:
        plan(model)
    assert refused.value.field == field
    plan(model, "0.5.6.post2")  # not read before 0.5.23: planned


def test_the_same_families_the_engine_builds_are_still_planned() -> None:
    """The sweep's SGLang rows build these (status ok at TP 1 and 2): a Llava with a Pixtral tower (not CLIP), and
    the published DeepSeek-V4-Flash (model_type deepseek_v4, which SGLang's config registry holds)."""
    for path in (CONFIGS / "towers" / "mistral-community--pixtral-12b-as-converted.json",
                 CONFIGS / "heldout" / "deepseek-ai--DeepSeek-V4-Flash.json"):  # fmt: skip
        assert {row["status"] for row in engine_rows(path.stem)} == {"ok"}
        plan(load_model(str(path)))


def test_sglang_refuses_cohere2_vision_over_a_dense_text_config() -> None:
    """The class default (transformers 5.19's Cohere2VisionConfig: a dense Cohere2 text config, no num_experts):
    the sweep's SGLang rows are models/cohere2_moe.py's AttributeError at TP 1 and 2."""
    name = "default--Cohere2VisionForConditionalGeneration"
    rows = engine_rows(name)
    assert sorted(row["tp"] for row in rows) == [1, 2]
    assert all(row["status"] == "refused" and "num_experts" in row["message"] for row in rows)
    path = REGISTRY / "configs" / "Cohere2VisionForConditionalGeneration.json"
    assert "num_experts" not in json.loads(path.read_text())["text_config"]
    model = load_model(str(path))
    with pytest.raises(InputError) as refused:
        plan(model)
    assert refused.value.field == "num_experts"


def test_sglang_refuses_a_text_only_gemma4() -> None:
    """The class default of Gemma4ForCausalLM (gemma4_text, a per_layer_config: transformers 5.19 makes the config
    heterogeneous): the sweep's SGLang rows are AmbiguousGlobalPerLayerAttributeError from get_config's parse at
    TP 1 and 2; the multimodal Gemma-4 (google--gemma-4-26B-A4B) is built (rows ok) and planned."""
    name = "default--Gemma4ForCausalLM"
    rows = engine_rows(name)
    assert sorted(row["tp"] for row in rows) == [1, 2]
    assert all(row["status"] == "refused" and "per-layer attribute" in row["message"] for row in rows)
    path = REGISTRY / "configs" / "Gemma4ForCausalLM.json"
    assert "per_layer_config" in json.loads(path.read_text())
    with pytest.raises(InputError) as refused:
        plan(load_model(str(path)))
    assert refused.value.field == "architectures"
    assert {row["status"] for row in engine_rows("google--gemma-4-26B-A4B")} == {"ok"}
    plan(load_model(str(CONFIGS / "heldout" / "google--gemma-4-26B-A4B.json")))


def test_sglang_refuses_a_deepseek_v4_config_with_kv_lora_rank_null() -> None:
    """RedHatAI's DeepSeek-V4-Flash-NVFP4-FP8 states `kv_lora_rank: null`; SGLang 0.5.23 reloads a deepseek_v4 config
    with its _DeepseekV4ConfigAlias (transformers 5.19's DeepseekV3Config, `kv_lora_rank: int`): the sweep's rows are
    StrictDataclassFieldValidationError from get_config's parse at TP 1 and 2. The published DeepSeek-V4-Flash
    (kv_lora_rank absent: the class default) is built and planned."""
    name = "RedHatAI--DeepSeek-V4-Flash-NVFP4-FP8"
    rows = engine_rows(name)
    assert sorted(row["tp"] for row in rows) == [1, 2]
    assert all(row["status"] == "refused" and "'kv_lora_rank' expected int, got NoneType" in row["message"]
               for row in rows)  # fmt: skip
    path = CONFIGS / "heldout" / "wave2" / f"{name}.json"
    assert json.loads(path.read_text())["kv_lora_rank"] is None
    with pytest.raises(InputError) as refused:
        plan(load_model(str(path)))
    assert refused.value.field == "kv_lora_rank"
    published = CONFIGS / "heldout" / "deepseek-ai--DeepSeek-V4-Flash.json"
    assert "kv_lora_rank" not in json.loads(published.read_text())
    assert {row["status"] for row in engine_rows(published.stem)} == {"ok"}
    plan(load_model(str(published)))


@pytest.mark.parametrize(
    ("config", "path", "field", "engine_words"),
    [
        # models/qwen2_moe.py <lambda>: TypeError InternS1ProTextDecoderLayer.__init__() got an unexpected keyword
        # argument 'start_layer' (every InternS1ProForConditionalGeneration build)
        ("internlm--Intern-S1-Pro", CONFIGS / "heldout" / "wave4a" / "internlm--Intern-S1-Pro.json",
         "architectures", "InternS1ProTextDecoderLayer.__init__ takes no start_layer"),
        # models/muse_glimmer.py: AttributeError 'MuseGlimmerTextConfig' object has no attribute 'output_soft_cap_temp'
        ("default--MuseGlimmerForCausalLM", REGISTRY / "configs" / "MuseGlimmerForCausalLM.json",
         "model_type", "MuseGlimmerConfig (configs/muse_glimmer.py: output_soft_cap_temp"),
    ],
)  # fmt: skip
def test_sglang_refuses_the_classes_its_own_code_cannot_build(
    config: str, path: Path, field: str, engine_words: str
) -> None:
    rows = engine_rows(config)
    assert sorted(row["tp"] for row in rows) == [1, 2]
    assert all(row["status"] == "refused" and engine_words in row["message"] for row in rows)
    with pytest.raises(InputError) as refused:
        plan(load_model(str(path)))
    assert refused.value.field == field
def test_the_checkpoints_own_mimo_v2_config_is_planned() -> None:
    """The rope-dict refusal is transformers 5.19's MiMoV2FlashConfig's (model_type mimo_v2_flash: the class default
    the sweep builds as default--MiMoV2ForCausalLM, refused with "unhashable type: 'dict'" at TP 1 and 2). MiMo-V2.5-Pro
    states model_type mimo_v2, the checkpoint's own configuration_mimo_v2.MiMoV2Config (auto_map), which keeps the
    config's rope_scaling (absent): SGLang 0.5.23 builds it with the harness's mimo_v2 stand-in (checkpoint_configs.py),
    its cell 296,960 B a token at TP 1 and 148,480 at TP 2 (the committed rows), which kvtop plans, not refuses."""
    flash = engine_rows("default--MiMoV2ForCausalLM")
    assert flash and all(row["status"] == "refused" and "unhashable type" in row["message"] for row in flash)
    flash_config = json.loads((REGISTRY / "configs" / "MiMoV2ForCausalLM.json").read_text())
    assert flash_config["model_type"] == "mimo_v2_flash"
    pro = engine_rows("XiaomiMiMo--MiMo-V2.5-Pro")
    assert {row["tp"]: (row["status"], row["cell_size"]) for row in pro} == {1: ("ok", 296_960), 2: ("ok", 148_480)}
    model = load_model(str(CONFIGS / "heldout" / "wave5" / "XiaomiMiMo--MiMo-V2.5-Pro.json"))
    assert (model.architecture, model.config_model_type) == ("MiMoV2ForCausalLM", "mimo_v2")
    plan(model)  # planned, not refused; its cell against the engine's: docs/fidelity_registry.md (equal at TP 1 and 2)
