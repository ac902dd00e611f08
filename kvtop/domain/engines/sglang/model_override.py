"""`--json-model-override-args JSON`: SGLang merges the object into the Hugging Face config before it sizes anything.

`ModelConfig.__init__` (srt/configs/model_config.py) `json.loads` the flag (default "{}") and hands it to `get_config`,
which merges it into the loaded config, so every figure SGLang sizes reads the overridden config (layers, widths,
positions: a `--context-length` above the config's positions is checked against the overridden one). The merge by
release (read in the wheels):
- v0.4.0 … v0.5.16: `config.update(model_override_args)` (v0.4.0 hf_transformers_utils.py:80-81, v0.5.9
  utils/hf_transformers_utils.py:392-393, v0.5.16 utils/hf_transformers/config.py:257): PretrainedConfig.update sets
  each key, a dict value over the whole of what was there.
- v0.5.17 on: a dict value for a sub-config (text_config, vision_config …, a PretrainedConfig) is merged into it, any
  other key set (v0.5.17 utils/hf_transformers/config.py:262, v0.5.22 :385).
- v0.5.23: `rope_scaling` / `rope_parameters` dicts merged into the config's too (utils/hf_transformers/config.py:
  405-423, "merge so partial overrides keep rope_theta").
The flag is in every release read (flags_table.RELEASES_READ: v0.4.0 on; v0.5.23 srt/arg_groups/fields/model.py:152).
"""

from __future__ import annotations

from kvtop.domain.config_override import ConfigOverride
from kvtop.domain.deployment_flags import flag_json
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion, era_for
from kvtop.domain.launch import LaunchSettings

FLAG = "--json-model-override-args"
_ROPE = frozenset({"rope_scaling", "rope_parameters"})

# (a dict value merged into a sub-config, the keys whose dict value is merged into the config's dict)
MERGE_ERAS: Eras[tuple[bool, frozenset[str]]] = Eras((
    Era("", (False, frozenset()), "hf_transformers_utils.py get_config: config.update(model_override_args) (v0.4.0 :80, "
                                  "v0.5.16 utils/hf_transformers/config.py:257)"),
    Era("0.5.17", (True, frozenset()), "utils/hf_transformers/config.py get_config: a dict merged into a sub-config "
                                       "(v0.5.17 :262)"),
    Era("0.5.23", (True, _ROPE), "utils/hf_transformers/config.py get_config: sub-configs and rope_scaling / "
                                 "rope_parameters merged (v0.5.23 :405-423)"),
))  # fmt: skip


def config_override(settings: LaunchSettings, version: ResolvedVersion) -> ConfigOverride | None:
    """The launch's `--json-model-override-args`, with its release's merge; None where it gives none or `{}`.

    Raises InputError naming the flag where its value is not a JSON object."""
    values = flag_json(settings, FLAG.removeprefix("--"), '{"max_position_embeddings": 65536}')
    if not values:  # not given, or "{}", the default: `if model_override_args:` merges nothing
        return None
    era = era_for(MERGE_ERAS, version)
    sub_configs, dicts = era.value
    return ConfigOverride(flag=FLAG, values=values, merges_sub_configs=sub_configs, merged_dicts=dicts,
                          source=f"SGLang {version.label} {era.source}")  # fmt: skip
