"""A config whose class kvtop has no entry for, read through its model_type's or its text section's entry, is said
so (#26 item 5): `ModelSpec.unchecked_class`, from the config reader; a class an entry lists, a wrapper read through
its text section, a generic reading (its own note) and a forced family stay without it.

Qwen3-VL-8B-Instruct's config (tests/data/configs/heldout, Qwen/Qwen3-VL-8B-Instruct's config.json) with its class
renamed HyperCLOVAXForCausalLM and model_type hyperclovax (a class both engines register, which no entry lists;
coverage.GENERIC; Keye-VL-1.5's until session 47 gave it the qwen3 entry): transformers has no hyperclovax config, so its text_config's model_type qwen3_vl_text chose the
entry.
"""

from __future__ import annotations

import json
from typing import Any

from benchmarks.engine_diff.registry_configs import real_configs
from kvtop.domain.architectures.coverage import verdict
from kvtop.domain.errors import KvtopError
from kvtop.domain.model_config import model_from_config
from kvtop.domain.unchecked_class import ChosenBy
from tests.conftest import CONFIGS

QWEN3_VL = CONFIGS / "heldout" / "Qwen--Qwen3-VL-8B-Instruct.json"


def unchecked_config() -> dict[str, Any]:
    config = json.loads(QWEN3_VL.read_text())
    return config | {"architectures": ["HyperCLOVAXForCausalLM"], "model_type": "hyperclovax"}


def test_a_class_without_an_entry_read_by_its_text_section_is_named() -> None:
    found = model_from_config(unchecked_config()).unchecked_class
    assert found is not None
    assert (found.architecture, found.read_as, found.config_class) == (
        "HyperCLOVAXForCausalLM", "qwen3_vl_text", "Qwen3VLTextConfig",
    )  # fmt: skip
    # a field and a value, typed: the config's text_config.model_type holds 'qwen3_vl_text' (QWEN3_VL's config.json)
    assert found.chosen_by == ChosenBy(by="text_section", field="text_config.model_type", value="qwen3_vl_text")
    assert found.said == (
        "class HyperCLOVAXForCausalLM has no architecture entry of its own: read as qwen3_vl_text "
        "(Qwen3VLTextConfig) by its text_config.model_type 'qwen3_vl_text'; not checked against the engines' model code"
    )
    assert model_from_config(unchecked_config()).reading_notes == (found.said,)


def test_a_class_read_by_its_own_model_type_is_named() -> None:
    config = json.loads((CONFIGS / "meta-llama--Llama-3.1-8B.json").read_text())
    found = model_from_config(config | {"architectures": ["FooForCausalLM"]}).unchecked_class
    assert found is not None and found.read_as == "llama"
    assert found.chosen_by == ChosenBy(by="model_type", field="model_type", value="llama")


def test_checked_classes_generic_readings_and_forced_families_carry_none() -> None:
    llama = json.loads((CONFIGS / "meta-llama--Llama-3.1-8B.json").read_text())
    assert model_from_config(json.loads(QWEN3_VL.read_text())).unchecked_class is None  # an entry's class
    assert model_from_config(llama).unchecked_class is None  # LlamaForCausalLM: the llama entry's class
    # a class no entry lists (Plamo3, the example until session 47, has an entry now): its generic reading says so
    unknown = llama | {"architectures": ["QuuxForCausalLM"], "model_type": "quux"}
    generic = model_from_config(unknown)
    assert generic.unchecked_class is None
    assert any(n.startswith("generic reading: no architecture entry for 'quux'") for n in generic.not_modelled)
    forced = llama | {"architectures": ["FooForCausalLM"], "model_type": "foo"}
    assert model_from_config(forced, family="llama").unchecked_class is None  # --model-family: said as forced


# Every real config under tests/data that gains the note (the engine_diff sweep's set, deduplicated by content): each
# a class coverage.py lists as read generically (docs/fidelity_registry.md's kvtop column "generic: read as …"). MiMoV2ASRForCausalLM
# (model_type qwen2), which coverage.SPEECH_NOT_MODELLED names not modelled, is refused with its reason (session 46, D4).
# Ovis2-34B's and Ovis2.5-9B's classes, equal to vLLM 0.33.0's meta builds with their towers, are wrappers since
# session 47 (tests/domain/test_checked_wrappers.py)
FLAGGED = {
    "inclusionAI--Ming-Lite-Omni-Preview": ("BailingMMNativeForConditionalGeneration", "bailing_moe"),
    "liuhaotian--llava-v1.6-vicuna-7b": ("LlavaLlamaForCausalLM", "llama"),
    "recon--lmms-lab--LLaVA-NeXT-Video-7B": ("LlavaVidForCausalLM", "llama"),
}


def test_no_checked_real_config_gains_the_note() -> None:
    flagged, read = {}, 0
    for config in real_configs():
        if config.path.name == "params.json":  # Mistral's format: its class is kvtop's own mapping to an entry's
            continue
        quant = config.quant_file()
        try:
            model = model_from_config(json.loads(config.path.read_text()), source=str(config.path),
                                      hf_quant_config=json.loads(quant.read_text()) if quant else None)  # fmt: skip
        except KvtopError:  # refused: never planned
            continue
        read += 1
        if model.unchecked_class is not None:
            flagged[config.name] = (model.unchecked_class.architecture, model.unchecked_class.read_as)
    assert read >= 300, read  # 301 read, 6 refused, 6 params.json (session 46)
    assert flagged == FLAGGED
    kinds = {verdict(architecture)[0] for architecture, _ in FLAGGED.values()}
    assert kinds == {"generic"}


def test_a_wrappers_model_type_is_worded_with_the_text_section_it_gives() -> None:
    # the field and value stay data; the wording adds the rule (a fixed or a default text section)
    fixed = ChosenBy(by="text_section", field="model_type", value="foo_vl", section_rule="always", section_type="qwen2")
    assert fixed.words() == "model_type 'foo_vl', whose text section is always qwen2"
    auto = fixed.model_copy(update={"section_rule": "defaults_to"})
    assert auto.words() == "model_type 'foo_vl', whose text section defaults to qwen2"
