"""The model classes an engine's wheel registers, read from its source without importing it.

`python benchmarks/engine_registries/read_registries.py vllm|sglang|trtllm <site-packages>` prints JSON: the engine's
version (from its dist-info), every architecture class it registers, and (vLLM) the classes it says it dropped
with the last release that had them (`_PREVIOUSLY_SUPPORTED_MODELS`). The lists in
kvtop/domain/engines/<engine>/architectures.py were made with it (docs/engines/architectures.md).

- vLLM: the keys of every `_*_MODELS` dict that `_VLLM_MODELS` spreads (vllm/model_executor/models/registry.py).
- LMDeploy (PyTorch engine): the keys of every `MODULE_MAP.update({...})` in lmdeploy/pytorch/models/module_map.py
  (given as a file: `git show vX:lmdeploy/pytorch/models/module_map.py > f`), and `REMOVED_MODEL_MAP`.
- SGLang: each module of sglang/srt/models with an `EntryClass` (one class or a list), by the class's own name,
  as `import_model_classes` registers `cls.__name__` (an alias resolves to the class it names).
- TensorRT-LLM (a wheel's site-packages or a checkout's root): every `@register_auto_model("<class>")` in
  tensorrt_llm/_torch/models/ (the PyTorch backend's registry, `get_registered_model_class`), the keys of
  `MODEL_ARCH_TO_MODULE` in its `_arch_index.py` where the tree has one (2026: kept equal to the decorators by
  its test_lazy_model_zoo.py), and the keys of `MODEL_MAP` in tensorrt_llm/models/__init__.py (the TensorRT
  backend), with `__version__` from tensorrt_llm/version.py.
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path


def _version(site: Path, dist: str) -> str:
    found = sorted(site.glob(f"{dist}-*.dist-info"))
    return found[0].name.removeprefix(f"{dist}-").removesuffix(".dist-info") if found else "?"


def _dict_keys(node: ast.Dict) -> list[str]:
    return [key.value for key in node.keys if isinstance(key, ast.Constant) and isinstance(key.value, str)]


def vllm(site: Path) -> dict[str, object]:
    tree = ast.parse((site / "vllm/model_executor/models/registry.py").read_text())
    dicts: dict[str, ast.Dict] = {}
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
        value = getattr(node, "value", None)
        if isinstance(target, ast.Name) and isinstance(value, ast.Dict):
            dicts[target.id] = value
    spread = [
        v.id
        for k, v in zip(dicts["_VLLM_MODELS"].keys, dicts["_VLLM_MODELS"].values, strict=True)
        if k is None and isinstance(v, ast.Name)
    ]
    registered = sorted({name for table in spread for name in _dict_keys(dicts[table])})
    previous = dicts.get("_PREVIOUSLY_SUPPORTED_MODELS")
    dropped = (
        {k.value: v.value for k, v in zip(previous.keys, previous.values, strict=True)} if previous else {}
    )
    return {
        "engine": "vllm",
        "version": _version(site, "vllm"),
        "tables": spread,
        "registered": registered,
        "previously_supported": dropped,
    }


def _entry_names(tree: ast.Module) -> list[str]:
    aliases: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id != "EntryClass":
                    aliases[target.id] = node.value.id
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.asname:
                    aliases[alias.asname] = alias.name
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "EntryClass" for t in node.targets
        ):
            values = node.value.elts if isinstance(node.value, (ast.List, ast.Tuple)) else [node.value]
            for value in values:
                if isinstance(value, ast.Name):
                    name = value.id
                    while name in aliases and aliases[name] != name:
                        name = aliases[name]
                    names.append(name)
    return names


def sglang(site: Path) -> dict[str, object]:
    models = site / "sglang/srt/models"
    registered: set[str] = set()
    for path in sorted(models.glob("*.py")):
        registered.update(_entry_names(ast.parse(path.read_text(encoding="utf-8-sig"))))
    return {"engine": "sglang", "version": _version(site, "sglang"), "registered": sorted(registered)}


def lmdeploy(module_map: Path) -> dict[str, object]:
    tree = ast.parse(module_map.read_text(encoding="utf-8-sig"))
    registered: set[str] = set()
    removed: dict[str, str] = {}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "update"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "MODULE_MAP"
        ):
            for arg in node.args:
                if isinstance(arg, ast.Dict):
                    registered.update(_dict_keys(arg))
            registered.update(keyword.arg for keyword in node.keywords if keyword.arg)
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
            names = {t.id for t in node.targets if isinstance(t, ast.Name)}
            if "MODULE_MAP" in names:
                registered.update(_dict_keys(node.value))
            if "REMOVED_MODEL_MAP" in names:
                removed = {
                    k.value: v.value
                    for k, v in zip(node.value.keys, node.value.values, strict=True)
                    if isinstance(k, ast.Constant) and isinstance(v, ast.Constant)
                }
    return {"engine": "lmdeploy", "registered": sorted(registered), "removed": removed}


def _decorated(tree: ast.Module, decorator: str) -> list[str]:
    """The first string argument of every `@<decorator>("…")` on a class or function of `tree`."""
    found: list[str] = []
    for node in ast.walk(tree):
        for call in getattr(node, "decorator_list", []):
            func = call.func if isinstance(call, ast.Call) else None
            named = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if named == decorator and call.args and isinstance(call.args[0], ast.Constant):
                found.append(str(call.args[0].value))
    return found


def _assigned_dict_keys(path: Path, name: str) -> list[str]:
    if not path.is_file():
        return []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8-sig"))):
        named = isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        )
        if named and isinstance(node.value, ast.Dict):
            return sorted(_dict_keys(node.value))
    return []


def trtllm(root: Path) -> dict[str, object]:
    package = root / "tensorrt_llm"
    models = package / "_torch/models"
    registered: set[str] = set()
    for path in sorted(models.rglob("*.py")):
        registered.update(_decorated(ast.parse(path.read_text(encoding="utf-8-sig")), "register_auto_model"))
    version = package / "version.py"
    stated = version.read_text().split("__version__ = ")[-1].strip().strip('"') if version.is_file() else "?"
    return {
        "engine": "trtllm",
        "version": stated,
        "registered": sorted(registered),
        "arch_index": _assigned_dict_keys(models / "_arch_index.py", "MODEL_ARCH_TO_MODULE"),
        "model_map": _assigned_dict_keys(package / "models/__init__.py", "MODEL_MAP"),
    }


if __name__ == "__main__":
    engine, site = sys.argv[1], Path(sys.argv[2])
    json.dump(
        {"vllm": vllm, "sglang": sglang, "lmdeploy": lmdeploy, "trtllm": trtllm}[engine](site),
        sys.stdout,
        indent=0,
    )
