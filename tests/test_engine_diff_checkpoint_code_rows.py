"""Registry-sweep rows (issue #26) where the engine's class needs the checkpoint's own code or files, which a config
folder lacks: each row names why the harness cannot build it, read from the config itself, never a bare error.

- Nanbeige4.2-3B on vLLM 0.33.0: its configuration class (configuration_nanbeige.NanbeigeConfig) is stood in
  (checkpoint_configs.py `nanbeige`, the class SGLang 0.5.23 ships as configs/nanbeige.py), so the config loads; vLLM
  serves NanbeigeForCausalLM with its Transformers backend, whose AutoModel.from_config runs the checkpoint's
  modeling_nanbeige.py: the row names the modeling class (before: "no stand-in for" its configuration class).
- moondream2 (HfMoondream): no stand-in on purpose; vLLM would build Moondream3Config's defaults from its empty
  `config` (a 64-expert Moondream 3, not moondream2).
- POINTS-1.5 (POINTSV15ChatModel): its config.json states no model_type, under which a stand-in would be registered.
- MiMo-V2.5 on SGLang 0.5.23: build_audio_encoder opens <model>/audio_tokenizer/ (config.json, model.safetensors).

Engine rows: tests/data/engine_diff/registry/{vllm-0.33.0,sglang-0.5.23}.json (`registry_sweep.py --set real --only
…`, meta builds).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.engine_diff.registry_configs import real_configs
from benchmarks.engine_diff.registry_sweep import load_rows

VERSIONS = {"vllm": "0.33.0", "sglang": "0.5.23"}


def _rows(engine: str, config: str) -> list[dict[str, Any]]:
    rows = [r for r in load_rows(engine, VERSIONS[engine]) if r["config"] == config]
    assert sorted(r["tp"] for r in rows) == [1, 2], (engine, config)
    return rows


def _config(name: str) -> dict[str, Any]:
    path = {c.name: c.path for c in real_configs()}[name]
    return dict(json.loads(Path(path).read_text()))


def _named(engine: str, config: str, words: str) -> None:
    for row in _rows(engine, config):
        assert row["status"] == "harness-error", (engine, config, row["tp"])
        assert row["message"].startswith(words), row["message"][:200]


def test_nanbeige_loads_its_stand_in_and_vllm_needs_the_modeling_code() -> None:
    config = _config("Nanbeige--Nanbeige4.2-3B")
    assert config["auto_map"]["AutoModelForCausalLM"] == "modeling_nanbeige.NanbeigeForCausalLM"
    _named("vllm", "Nanbeige--Nanbeige4.2-3B", "its modeling class is the checkpoint's own code (auto_map AutoModel "
           "modeling_nanbeige.NanbeigeModel, AutoModelForCausalLM modeling_nanbeige.NanbeigeForCausalLM)")  # fmt: skip


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_moondream2_has_no_stand_in_as_vllm_would_build_moondream3(engine: str) -> None:
    config = _config("vikhyatk--moondream2")
    assert config["config"] == {} and config["model_type"] == "moondream1"
    _named(engine, "vikhyatk--moondream2", "its configuration class is the checkpoint's own code (auto_map AutoConfig "
           "hf_moondream.HfConfig): no stand-in, as it would build another model")  # fmt: skip


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_points_states_no_model_type_to_register_a_stand_in_under(engine: str) -> None:
    config = _config("WePOINTS--POINTS-1-5-Qwen-2-5-7B-Chat")
    assert "model_type" not in config
    _named(engine, "WePOINTS--POINTS-1-5-Qwen-2-5-7B-Chat", "its configuration class is the checkpoint's own code "
           "(auto_map AutoConfig configuration_pointsv15_chat.POINTSV15ChatConfig): no stand-in can be registered")  # fmt: skip


def test_mimo_v2_5_on_sglang_names_the_audio_tokenizer_folder() -> None:
    assert "audio_config" in _config("XiaomiMiMo--MiMo-V2.5")
    _named("sglang", "XiaomiMiMo--MiMo-V2.5", "a checkpoint folder the config folder lacks: build_audio_encoder loads "
           "the checkpoint's audio tokenizer (<model>/audio_tokenizer/config.json")  # fmt: skip
