"""Registered classes with no config at hand and too few published figures to rebuild one (registry_configs
NO_PUBLISHED_CONFIG, session 44): the registry's no_config.json carries each reason as it is (docs/fidelity_registry.md's
"no config at hand" names it), no config at hand names the class, and a defaults run writes the reason, not the
harness's LookupError."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from unittest import mock

from benchmarks.engine_diff import registry_sweep
from benchmarks.engine_diff.registry_configs import (
    NO_PUBLISHED_CONFIG,
    REGISTRY_DATA,
    WHY_NO_CONFIG,
    config_for_class,
    default_configs,
    real_configs,
)


def test_each_class_without_a_published_config_says_so() -> None:
    no_config = json.loads((REGISTRY_DATA / "no_config.json").read_text())
    have = config_for_class(real_configs() + default_configs())
    for name, why in NO_PUBLISHED_CONFIG.items():
        assert why.startswith(WHY_NO_CONFIG)
        assert no_config[name] == why
        assert name not in have


def test_a_defaults_run_writes_the_reason_not_the_lookup_error(tmp_path: Path) -> None:
    # a class of the registry with no config at hand (the table is empty since session 47 composed the last ones:
    # the class is taken as having none)
    name = "Llama_Nemotron_Nano_VL"
    why = "no published config: its checkpoint's config.json is not in the corpora"
    (tmp_path / "no_config.json").write_text("{}")

    def answers(_engine: str, pairs: list[list[str | None]]) -> dict[str, Any]:
        return {pair[0]: {"error": "LookupError: no model_type"} for pair in pairs if pair[0] == name}

    with (mock.patch.object(registry_sweep, "_engine_defaults", answers),
          mock.patch.dict(registry_sweep.NO_PUBLISHED_CONFIG, {name: why}),
          mock.patch.object(registry_sweep, "config_for_class", lambda _configs: {}),
          mock.patch.object(registry_sweep, "REGISTRY_DATA", tmp_path),
          mock.patch.object(registry_sweep, "DEFAULT_CONFIGS", tmp_path / "configs")):  # fmt: skip
        registry_sweep.write_defaults("vllm")
    assert json.loads((tmp_path / "no_config.json").read_text()) == {name: why}
