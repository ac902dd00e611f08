"""`ModelSpec.multimodal` (and the `vision` sizes SGLang's VLM fraction reads) follow the tower the engine builds: a
vision-language class read from a config without its `vision_config` still builds the tower its config class fills
in (towers_absent.py books it), so the engines serve it as multimodal. Before: `multimodal` False and `vision` None
there, so SGLang's multimodal reserve and VLM fraction factor were left out while the tower's bytes were booked.

Expected values: the registry default's own `vision_config` (tests/data/engine_diff/registry/configs/
Glm4vForConditionalGeneration.json, transformers 5.20.2's Glm4vVisionConfig defaults as `to_dict` wrote them), and
SGLang 0.5.23's reserve for a multimodal model: SGLANG_VLM_CACHE_SIZE_MB 100 MiB (arg_groups/memory_hook.py
mm_runtime_reservation_gb, no feature transport), as for the config that states its section."""

from __future__ import annotations

import json
from typing import Any

from kvtop.domain.engines.sglang.multimodal import multimodal_reserve_bytes, vlm_factor_vision
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model_config import model_from_config
from tests.data_paths import DATA

GLM4V = DATA / "engine_diff" / "registry" / "configs" / "Glm4vForConditionalGeneration.json"
V0523 = ResolvedVersion(text="0.5.23", source=VersionSource.FLAG)


def _configs() -> tuple[dict[str, Any], dict[str, Any]]:
    full: dict[str, Any] = json.loads(GLM4V.read_text())
    less = {key: value for key, value in full.items() if key != "vision_config"}
    return full, less


def test_glm4v_without_vision_config_is_multimodal_as_the_tower_it_books() -> None:
    full, less = _configs()
    stated = full["vision_config"]
    assert (stated["depth"], stated["hidden_size"]) == (24, 1536)  # Glm4vVisionConfig's defaults, as written
    with_section, without = model_from_config(full), model_from_config(less)
    assert without.tower is not None and with_section.tower is not None
    assert (without.tower.params, without.tower.tp_split_params) == (
        with_section.tower.params,
        with_section.tower.tp_split_params,
    )
    assert without.multimodal and with_section.multimodal
    assert without.vision is not None and (without.vision.num_layers, without.vision.hidden_size) == (
        24,
        1536,
    )
    assert with_section.vision is not None
    assert (without.vision.num_layers, without.vision.hidden_size) == (
        with_section.vision.num_layers,
        with_section.vision.hidden_size,
    )
    # SGLang's factor reads the filled-in Glm4vVisionConfig as the stated one: no num_hidden_layers (depth), 24 × 1536
    assert vlm_factor_vision(without, V0523) == vlm_factor_vision(with_section, V0523)


def test_sglang_keeps_the_multimodal_reserve_for_glm4v_without_vision_config() -> None:
    full, less = _configs()
    settings = LaunchSettings(engine="sglang", model="glm4v")
    reserves = [multimodal_reserve_bytes(model_from_config(c), settings, V0523) for c in (full, less)]
    assert reserves == [100 * 1024 * 1024] * 2  # before: [104,857,600, 0]


def test_a_text_only_config_stays_text_only() -> None:
    """A class with no tower (the GLM-4 text model) gains neither flag nor sizes."""
    full, less = _configs()
    text = {**less, "architectures": ["Glm4ForCausalLM"], **less["text_config"], "model_type": "glm4"}
    text.pop("text_config")
    model = model_from_config(text)
    assert not model.multimodal and model.vision is None and model.tower is None
