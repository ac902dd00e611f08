"""Every multimodal class of vLLM's and SGLang's registries is named in docs/multimodal.md with what kvtop does
with it (benchmarks/architectures/multimodal_classes.py writes it from kvtop's own verdicts), and a config naming
one kvtop does not model is refused with that reason, not misread."""

from __future__ import annotations

import json

import pytest

from benchmarks.architectures import multimodal_classes
from kvtop.domain.architectures.coverage import verdict
from kvtop.domain.architectures.towers_coverage import tower_verdict
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA

REGISTRIES = json.loads((DATA / "architectures" / "engine_registries.json").read_text())


def test_the_list_is_what_the_verdicts_say_now() -> None:
    assert (DATA.parents[1] / "docs" / "multimodal.md").read_text() == multimodal_classes.render()


def test_every_registered_multimodal_class_is_listed() -> None:
    listed = {name for name, _, _ in multimodal_classes.classes()}
    assert set(REGISTRIES["vllm_multimodal"]) <= listed
    assert multimodal_classes.SGLANG_ONLY.issubset(REGISTRIES["sglang"])  # SGLang's own names, not guesses


@pytest.mark.parametrize("name", [name for name, _, _ in multimodal_classes.classes() if verdict(name)[0] == "not_modelled"])
def test_a_refused_multimodal_class_names_its_reason(name: str) -> None:
    _, why = tower_verdict(name)
    with pytest.raises(UnsupportedModelError, match="is not modelled by kvtop: ") as raised:
        model_from_config({"architectures": [name], "model_type": "no_such_type", "hidden_size": 64})
    assert why in str(raised.value) and "architectures" in str(raised.value)


def test_the_towers_of_this_wave_are_planned() -> None:
    """Kimi-VL, Phi-3.5-vision, llava (over CLIP, SigLIP or Pixtral) and Phi-4-multimodal (its SigLIP and conformer
    audio encoder: tests/domain/test_phi4mm_towers.py; its LoRA adapters are --enable-lora's slots, not built) are
    read with their towers."""
    for name in ("KimiVLForConditionalGeneration", "Phi3VForCausalLM", "LlavaForConditionalGeneration",
                 "Phi4MMForCausalLM"):  # fmt: skip
        assert tower_verdict(name)[0] == "tower", name


@pytest.mark.parametrize(
    "name",
    ["KimiK3ForConditionalGeneration", "Granite4VisionForConditionalGeneration", "Lfm2VlForConditionalGeneration",
     "AriaForConditionalGeneration", "Cohere2VisionForConditionalGeneration", "Ovis", "Blip2ForConditionalGeneration",
     "Cosmos3EdgeForConditionalGeneration", "Exaone4_5_ForConditionalGeneration",
     "LlavaNextVideoForConditionalGeneration", "Moondream3ForCausalLM"],
)  # fmt: skip
def test_the_towers_of_issue_26_are_planned(name: str) -> None:
    """Their towers are read, each equal to the engines' meta builds (tests/domain/test_towers_*.py)."""
    assert tower_verdict(name)[0] == "tower"
