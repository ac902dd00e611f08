"""checkpoint-config stand-ins (both runners), the classes: each model type in checkpoint_configs.py's table built
as a transformers config class and registered with AutoConfig (in the parent, before the cases fork), and the
one-line reason a row gives where transformers still refuses a config folder as custom code.

Imported inside the engine's venv (standard library and transformers only).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from checkpoint_configs import (
    ATTRIBUTE_MAPS,
    CHECKPOINT_CONFIGS,
    DERIVED_DEFAULTS,
    ENGINE_COPIES,
    NO_STAND_IN,
    OBJECT_FIELDS,
    SUB_CONFIG_DEFAULTS,
    SUB_CONFIGS,
)


def _sub_config(value: Any) -> Any:
    import transformers
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    if not isinstance(value, dict):
        return value
    model_type = value.get("model_type", "")
    if model_type in CONFIG_MAPPING:
        return transformers.AutoConfig.for_model(**value)
    defaults = SUB_CONFIG_DEFAULTS.get(model_type, {})
    return _stand_in(model_type or "sub_config", "PretrainedConfig", "a published sub-config", defaults)(**value)


def _as_object(value: Any, name: str) -> Any:
    """A JSON object as a dataclass instance holding its keys (nested objects too); lists item by item."""
    if isinstance(value, list):
        return [_as_object(item, name) for item in value]
    if not isinstance(value, dict):
        return value
    cls = dataclasses.make_dataclass(name, list(value))
    return cls(**{key: _as_object(item, key) for key, item in value.items()})


def _stand_in(model_type: str, base_name: str, source: str, defaults: dict[str, Any]) -> type:
    import transformers

    base: type = getattr(transformers, base_name)

    object_fields = OBJECT_FIELDS.get(model_type, ())

    def __init__(self: Any, **kwargs: Any) -> None:
        fields = {**defaults, **kwargs}
        derived = DERIVED_DEFAULTS.get(model_type, lambda _: {})(fields)
        fields.update({name: value for name, value in derived.items() if fields.get(name) is None})
        fields.update({name: _as_object(fields[name], name) for name in object_fields if name in fields})
        fields.update(
            {name: _sub_config(fields[name]) for name in SUB_CONFIGS.get(model_type, ()) if name in fields}
        )
        if base is transformers.PretrainedConfig:  # the published class sets its fields, then calls the base
            for name, value in fields.items():
                setattr(self, name, value)
        base.__init__(self, **fields)

    def to_dict(self: Any) -> dict[str, Any]:
        out = base.to_dict(self)
        for name in object_fields:
            if isinstance(out.get(name), list):
                out[name] = [
                    dataclasses.asdict(item) if dataclasses.is_dataclass(item) else item for item in out[name]
                ]
        return dict(out)

    doc = f"checkpoint-config stand-in for `{model_type}` ({source})"
    return type(f"CheckpointConfig_{model_type.replace('-', '_')}", (base,),
                {"model_type": model_type, "__init__": __init__, "to_dict": to_dict, "__doc__": doc,
                 "attribute_map": ATTRIBUTE_MAPS.get(model_type, {})})  # fmt: skip


CUSTOM_CODE = "contains custom code"  # transformers' refusal of a config whose class is the checkpoint's own code


def custom_code_reason(exc: BaseException, config_dir: str | None) -> str | None:
    """The one-line reason for transformers' "contains custom code" refusal of a config folder: its configuration
    class is the checkpoint's own Python code (auto_map AutoConfig), which neither transformers nor the engine ships
    and which has no stand-in in checkpoint_configs.py, or (a stand-in there loaded the configuration) its modeling
    class, which an engine's Transformers backend builds with AutoModel; None for any other failure."""
    if CUSTOM_CODE not in str(exc) or not config_dir:
        return None
    import json
    import os

    try:
        with open(os.path.join(config_dir, "config.json")) as file:
            data = json.load(file)
    except (OSError, ValueError):
        return None
    auto_map = data.get("auto_map") or {}
    if data.get("model_type") in CHECKPOINT_CONFIGS:  # the configuration stands in: the model class is what is missing
        models = ", ".join(f"{key} {value}" for key, value in auto_map.items() if key != "AutoConfig") or "?"
        return (f"its modeling class is the checkpoint's own code (auto_map {models}), which the engine's Transformers "
                f"backend runs and a config folder lacks (its configuration class has checkpoint_configs.py's stand-in)")  # fmt: skip
    own = auto_map.get("AutoConfig", "?")
    if own in NO_STAND_IN:
        return f"its configuration class is the checkpoint's own code (auto_map AutoConfig {own}): {NO_STAND_IN[own]}"
    return (f"its configuration class is the checkpoint's own code (auto_map AutoConfig {own}, model_type "
            f"{data.get('model_type')!r}), which a config folder lacks and checkpoint_configs.py has no stand-in for")  # fmt: skip


def _engine_copy(engine_configs: Any, name: str) -> Any:
    """The engine's copy of a configuration class: an attribute of its configs package, or `module.Class` of a module
    in it that the package does not export (SGLang 0.5.23 configs/points_v15_chat.py); None where it has none."""
    if engine_configs is None:
        return None
    module_name, _, class_name = name.rpartition(".")
    if not module_name:
        return getattr(engine_configs, name, None)
    import importlib

    try:
        module = importlib.import_module(f"{engine_configs.__name__}.{module_name}")
    except ImportError:
        return None
    return getattr(module, class_name, None)


def install_checkpoint_configs(
    engine_known: frozenset[str] = frozenset(), engine_configs: Any = None
) -> list[str]:
    """Registers a stand-in for each model type in checkpoint_configs.py that transformers and the engine
    (`engine_known`, its own config registry) do not know; returns the model types registered. Where the engine
    ships a copy of the checkpoint's class in its configs package (`engine_configs`, ENGINE_COPIES) that copy is
    registered."""
    import transformers
    from transformers import AutoConfig
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    done = []
    for model_type, class_name in ENGINE_COPIES.items():
        copy = _engine_copy(engine_configs, class_name)
        if copy is None or model_type in CONFIG_MAPPING or model_type in engine_known:
            continue
        AutoConfig.register(model_type, copy)
        done.append(model_type)
    for model_type, (base_name, source, defaults) in CHECKPOINT_CONFIGS.items():
        if model_type in CONFIG_MAPPING or model_type in engine_known:
            continue
        if not hasattr(transformers, base_name):  # an older transformers lacks the published class's base
            continue  # (Qwen3_5MoeConfig in 4.57): no stand-in, the row stays transformers' own refusal
        AutoConfig.register(model_type, _stand_in(model_type, base_name, source, defaults))
        done.append(model_type)
    return done
