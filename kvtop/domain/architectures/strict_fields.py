"""Config fields transformers 5.x's strict config classes type as float that a published config.json states as an
int: loading the config raises huggingface_hub's StrictDataclassFieldValidationError (the class's `@strict`
validation), so an engine release that pins transformers 5.x cannot read the config at all. Each engine's config
checks refuse it by the field's name on those releases (the engine packages hold the release ranges).
"""

from __future__ import annotations

from typing import Any

# model_type -> dotted config fields typed `float | None` by its transformers 5.x config class
FLOAT_TYPED_FIELDS: dict[str, tuple[str, ...]] = {
    # DbrxFFNConfig.moe_normalize_expert_weights (transformers 5.19.0 / 5.20.2 models/dbrx/configuration_dbrx.py);
    # databricks/dbrx-instruct's config.json states 1 (tests/data/configs/families/databricks--dbrx-instruct.json)
    "dbrx": ("ffn_config.moe_normalize_expert_weights",),
}


def _value(config: dict[str, Any], dotted: str) -> Any:
    section: Any = config
    for key in dotted.split("."):
        section = section.get(key) if isinstance(section, dict) else None
    return section


def float_fields_given_int(model_type: str, config: dict[str, Any]) -> tuple[str, ...]:
    """The float-typed fields of `model_type` that `config` states as an int (a bool is neither)."""
    return tuple(
        name
        for name in FLOAT_TYPED_FIELDS.get(model_type, ())
        if isinstance(value := _value(config, name), int) and not isinstance(value, bool)
    )
