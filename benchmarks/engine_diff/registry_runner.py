"""The registry sweep's side in an engine's venv: the engine's runner with a time limit per case, or configs
from transformers' config classes for the classes no real config names.

    python registry_runner.py vllm_runner|sglang_runner SECONDS --cases F --out F   (the runner's own main)
    python registry_runner.py defaults IN OUT   (IN: [[class, model_type or null], …]; OUT: {class: config or error})

Imports the engine's venv only (never kvtop). The runner is the sweep's own (vllm_runner / sglang_runner:
one forked process per case or pipeline rank, isolation.py); only its time limit per case is shortened.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# classes no transformers auto mapping names, with the config class the engine's model reads and its source
CLASS_CONFIGS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "data", "engine_diff",
                             "registry", "class_configs.json")  # fmt: skip


def _config_for(class_name: str, model_type: str | None) -> dict[str, Any]:
    """The default config of the class's model_type (transformers' own class, else the engine's registry of configs
    transformers lacks), in bfloat16 (a config without a dtype would be read as float32), naming the class."""
    from transformers import AutoConfig

    linked = _class_config(class_name)
    if linked is not None and "no_default" in linked:
        raise LookupError(linked["no_default"])
    if linked is not None:
        model_type = linked.get("model_type")
    elif model_type is None or _is_sub_config(model_type):
        model_type = _mapped_model_type(class_name) or model_type
    if linked is not None and "config_class" in linked:  # "module:Class", a class the engine ships unregistered
        import importlib

        module, _, name = linked["config_class"].partition(":")
        config = getattr(importlib.import_module(module), name)()
    elif model_type is None:
        raise LookupError("no model_type for this class in transformers' auto mappings")
    else:
        try:
            config = AutoConfig.for_model(model_type)
        except ValueError:
            config = _engine_config(model_type)
    data: dict[str, Any] = config.to_dict()
    data.update(architectures=[class_name], torch_dtype="bfloat16", dtype="bfloat16")
    for key, value in (linked or {}).get("published", {}).items():  # a field the checkpoints state, the class lacks
        data[key] = {**data[key], **value} if isinstance(value, dict) else value
    return data


def _class_config(class_name: str) -> dict[str, Any] | None:
    """The class's row of class_configs.json (None without one): its config class, the fields its checkpoints
    state that the class leaves out (`published`), or why no default is a model the engine builds (`no_default`).
    A row made in the other engine's venv is refused here, so each class's default is its own engine's config."""
    with open(CLASS_CONFIGS) as fh:
        row: dict[str, Any] | None = json.load(fh)["classes"].get(class_name)
    if row is None or "no_default" in row:
        return row
    here = "vllm" if _has_module("vllm") else "sglang"
    if row["engine"] != here:
        raise LookupError(f"made in {row['engine']}'s venv (registry_sweep.py --defaults --engine {row['engine']})")
    return row


def _has_module(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


def _mapped_model_type(class_name: str) -> str | None:
    """The model_type whose transformers auto mapping names this class."""
    from transformers.models.auto import modeling_auto

    for attr in dir(modeling_auto):
        mapping = getattr(modeling_auto, attr)
        if attr.endswith("_MAPPING_NAMES") and isinstance(mapping, dict):
            found = [k for k, v in mapping.items() if v == class_name or (isinstance(v, tuple) and class_name in v)]
            if found:
                return str(found[0])
    return None


def _is_sub_config(model_type: str) -> bool:
    """A transformers config class that is another's sub-config (`base_config_key`, e.g. Glm4vTextConfig's
    "text_config"): a checkpoint's config.json is its composite's (kvtop's architecture entry may name the
    text part's model_type, the one it plans from)."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    return model_type in CONFIG_MAPPING and bool(getattr(CONFIG_MAPPING[model_type], "base_config_key", ""))


def _engine_config(model_type: str) -> Any:
    """A config class the engine registers itself for a model_type transformers does not know (vLLM:
    transformers_utils/config.py _CONFIG_REGISTRY; SGLang: utils/hf_transformers/common.py _CONFIG_REGISTRY,
    imported behind sglang_standins' absent packages as the runner imports it)."""
    try:
        from vllm.transformers_utils.config import _CONFIG_REGISTRY
    except ImportError:
        from sglang_standins import install_stand_ins

        install_stand_ins("sm90")
        from sglang.srt.utils.hf_transformers.common import _CONFIG_REGISTRY  # type: ignore[no-redef]
    found = _CONFIG_REGISTRY.get(model_type)
    if found is None:
        raise LookupError(f"transformers has no config class for model_type {model_type!r}")
    if isinstance(found, str):
        import importlib

        found = getattr(importlib.import_module("vllm.transformers_utils.configs"), found)
    return found()


def defaults(path_in: str, path_out: str) -> int:
    with open(path_in) as fh:
        wanted = json.load(fh)
    out: dict[str, Any] = {}
    for class_name, model_type in wanted:
        try:
            out[class_name] = _config_for(class_name, model_type)
        except Exception as exc:  # noqa: BLE001 — a class without a config is a result
            out[class_name] = {"error": f"{type(exc).__name__}: {str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ''}"}
    with open(path_out, "w") as fh:
        json.dump(out, fh, default=str)
    return 0


def main() -> int:
    if sys.argv[1] == "defaults":
        return defaults(sys.argv[2], sys.argv[3])
    name, seconds = sys.argv.pop(1), int(sys.argv.pop(1))
    import isolation

    isolation.run_in_children.__defaults__ = (seconds,)
    isolation.run_in_child.__defaults__ = (seconds,)
    runner: Any = __import__(name)
    return int(runner.main() or 0)


if __name__ == "__main__":
    sys.exit(main())
