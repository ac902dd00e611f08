"""A launch flag that rewrites the model's config before the engine sizes anything (SGLang's `--json-model-override-args`).

The engine merges the flag's JSON object into the Hugging Face config it loads, so every figure it sizes (layers, widths,
positions, rope) reads the overridden config. kvtop does the same at the one door it reads a config through
(`model_config.model_from_config`), by the merge the engine's release does (`ConfigOverride.apply`), and says so in the
plan (`said`, one of the model's `read_from` notes). The engine package states the merge and its source.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict


class ConfigOverride(BaseModel):
    """One launch's override of the model's config: the flag, its JSON object, and how the release merges it."""

    model_config = ConfigDict(frozen=True)

    flag: str  # as the engine spells it
    values: dict[str, Any]  # the flag's JSON object, as json.loads reads it (deployment_flags.flag_json)
    # a dict value for a key whose config value is a sub-config (`…_config`, not quantization_config) is merged into it,
    # not set over it (transformers' sub-configs are PretrainedConfig objects there)
    merges_sub_configs: bool
    merged_dicts: frozenset[str] = frozenset()  # keys whose dict value is merged into the config's dict (rope_scaling)
    source: str  # the engine's code that merges it, by release

    def apply(self, config: Mapping[str, Any]) -> dict[str, Any]:
        """The config with the override merged in, as the engine merges it; the given config is left as it was."""
        merged = dict(config)
        for key, value in self.values.items():
            current = merged.get(key)
            if isinstance(value, dict) and isinstance(current, dict) and self._merges(key):
                merged[key] = {**current, **value}
            else:
                merged[key] = value
        return merged

    def _merges(self, key: str) -> bool:
        sub_config = key.endswith("_config") and key != "quantization_config"
        return key in self.merged_dicts or (self.merges_sub_configs and sub_config)

    @property
    def said(self) -> str:
        """The plan's note: which keys the launch overrides, and where the engine merges them."""
        keys = ", ".join(self.values) or "no key"
        return f"config overridden by {self.flag}: {keys} ({self.source})"
