"""Multimodal wrappers whose language model kvtop reads through a text section and whose tower it counts, found equal
to the engines' meta builds (session 47, #26: the composed configs of the classes with none published, and Ovis's and
Ovis2.5's checkpoints): listed in coverage.WRAPPERS, so the plan no longer says "not checked against the engines'
model code" of them.

Oracle: the registry rows (tests/data/engine_diff/registry/<engine>-<version>.json: the engine's meta-built bytes per
rank and KV specs at TP 1 and 2, by `registry_sweep.py --set classes --only default--<Class>`, or of the checkpoint's
config.json), judged equal to kvtop's plan; the towers' figures by hand in tests/domain/test_towers_points.py, test_towers_onevision2.py and the
Ovis2.5 tower's tests.
"""

from __future__ import annotations

import json

import pytest

from benchmarks.engine_diff.registry_judge import judge
from benchmarks.engine_diff.registry_sweep import load_rows
from kvtop.domain.architectures.coverage import verdict
from kvtop.domain.model_config import model_from_config
from tests.conftest import CONFIGS, DATA

DEFAULTS = DATA / "engine_diff" / "registry" / "configs"
VERSIONS = {"vllm": "0.33.0", "sglang": "0.5.23"}
# class → (the entry its text section is read as, the engines that register it)
CHECKED = {
    "POINTSV15ChatModel": ("qwen2", ("sglang",)),  # SGLang 0.5.23 points_v15_chat.py: Qwen2 over llm_config
    "LlavaOnevision2ForConditionalGeneration": ("qwen3", ("vllm",)),  # vLLM 0.33.0 llava_onevision2.py: text_config
    "Ovis2_6ForCausalLM": ("qwen3", ("vllm",)),  # vLLM 0.33.0 registers it as ovis2_5.py Ovis2_5: llm_config
    "Ovis2_6_MoeForCausalLM": ("qwen3_moe", ("vllm",)),  # the same class over a Qwen3-MoE llm_config
    "Ovis2_5": ("qwen3", ("vllm",)),  # vLLM 0.33.0 ovis2_5.py over AIDC-AI/Ovis2.5-9B's llm_config
    "Ovis": ("qwen2", ("vllm",)),  # vLLM 0.33.0 ovis.py over AIDC-AI/Ovis2-34B's llm_config, its AIMv2 tower
    # SGLang 0.5.23 dots_vlm.py: DeepseekV2ForCausalLM over the top level (nesting.CLASS_TEXT), towers_dots_vlm
    "DotsVLMForCausalLM": ("deepseek_v2", ("sglang",)),
}
# the checkpoints' config.json (held-out; SOURCES.md beside them) where the class has one, else its composed default
CHECKPOINTS = {"Ovis2_5": "heldout/wave4b/AIDC-AI--Ovis2.5-9B", "Ovis": "heldout/wave2/AIDC-AI--Ovis2-34B"}


def _config_name(architecture: str) -> str:
    return CHECKPOINTS[architecture].rpartition("/")[2] if architecture in CHECKPOINTS else f"default--{architecture}"


def _config(architecture: str) -> dict:  # type: ignore[type-arg]
    path = CONFIGS / f"{CHECKPOINTS[architecture]}.json" if architecture in CHECKPOINTS else DEFAULTS / f"{architecture}.json"
    return dict(json.loads(path.read_text()))


@pytest.mark.parametrize("architecture", sorted(CHECKED))
def test_a_checked_wrapper_is_read_through_its_text_section_and_said_checked(architecture: str) -> None:
    entry, _ = CHECKED[architecture]
    model = model_from_config(_config(architecture))
    assert verdict(architecture)[0] == "wrapper"
    assert model.reading.startswith(f"architecture entry {entry} (")
    assert model.unchecked_class is None and model.reading_notes == ()
    assert model.tower is not None and model.not_modelled == ()


@pytest.mark.parametrize("architecture", sorted(CHECKED))
def test_the_sweep_finds_each_equal_to_the_engines_build(architecture: str) -> None:
    for engine in CHECKED[architecture][1]:
        rows = [r for r in load_rows(engine, VERSIONS[engine]) if r["config"] == _config_name(architecture)]
        assert sorted(r["tp"] for r in rows) == [1, 2]
        for row in rows:
            assert judge(engine, VERSIONS[engine], row).verdict == "equal", (engine, row["tp"])
