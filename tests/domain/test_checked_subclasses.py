"""Classes the engines build as subclasses of an entry's class are listed in that entry (#26, session 46 task D4; Keye's two, R-4B's
and OpenCUA's in session 47):
kvtop reads their default configs through the same entry and the same tower as before, the registry sweep found
each equal to the engines' meta builds, and kvtop no longer calls them unchecked.

Each default config is the engine's config class default (tests/data/engine_diff/registry/configs, written by
registry_sweep.py); its rows (tests/data/engine_diff/registry/<engine>-<version>.json) hold the engine's meta build.
"""

from __future__ import annotations

import json

import pytest

from benchmarks.engine_diff.registry_judge import judge
from benchmarks.engine_diff.registry_sweep import load_rows
from kvtop.domain.architectures.coverage import verdict
from kvtop.domain.model_config import model_from_config
from tests.conftest import DATA

DEFAULTS = DATA / "engine_diff" / "registry" / "configs"
# class → (the entry it is read as, the engines whose sweep builds it)
LISTED = {
    "Cosmos3ForConditionalGeneration": ("qwen3_vl_text", ("vllm", "sglang")),  # cosmos3.py: Qwen3VL's subclass
    "Alpamayo2Super": ("qwen3_vl_text", ("vllm",)),  # vLLM 0.33.0 alpamayo2_super.py: Qwen3VL's subclass
    "InternS2PreviewForConditionalGeneration": ("qwen3_5_moe_text", ("vllm", "sglang")),  # Qwen3.5-MoE's subclass
    "IsaacForConditionalGeneration": ("qwen3", ("vllm",)),  # vLLM 0.33.0 isaac.py: a Qwen3ForCausalLM + SigLIP2
    "KeyeForConditionalGeneration": ("qwen3", ("vllm",)),  # vLLM 0.33.0 keye.py: a Qwen3ForCausalLM + SigLIP
    "KeyeVL1_5ForConditionalGeneration": ("qwen3", ("vllm",)),  # keye_vl1_5.py: the same, its own mlp_AR
    "RForConditionalGeneration": ("qwen3", ("vllm",)),  # vLLM 0.33.0 rvl.py: llava-onevision over a Qwen3 text_config
    "OpenCUAForConditionalGeneration": ("qwen2", ("vllm",)),  # opencua.py: Qwen2ForCausalLM + Qwen2.5-VL's ViT
}
VERSIONS = {"vllm": "0.33.0", "sglang": "0.5.23"}


@pytest.mark.parametrize("architecture", sorted(LISTED))
def test_a_listed_subclass_reads_as_before_and_is_checked(architecture: str) -> None:
    entry, _ = LISTED[architecture]
    model = model_from_config(json.loads((DEFAULTS / f"{architecture}.json").read_text()))
    assert verdict(architecture)[0] == "entry"
    assert model.reading.startswith(f"architecture entry {entry} (")
    assert model.unchecked_class is None and model.reading_notes == ()
    assert model.tower is not None and model.not_modelled == ()  # its tower in the weights book, nothing left out


@pytest.mark.parametrize("architecture", sorted(LISTED))
def test_the_sweep_finds_each_equal_to_the_engines_build(architecture: str) -> None:
    # the engine's meta-built parameter bytes per rank (language model and towers) and KV specs against kvtop's plan
    for engine in LISTED[architecture][1]:
        rows = [r for r in load_rows(engine, VERSIONS[engine]) if r["config"] == f"default--{architecture}"]
        assert sorted(r["tp"] for r in rows) == [1, 2]
        for row in rows:
            assert judge(engine, VERSIONS[engine], row).verdict == "equal", (engine, row["tp"])
