"""Which engines' packages use each `LaunchSettings` field and each `KvStorage` flag (issue 29's account).

Static, over kvtop's source with `ast`; the numbers are for docs/design.md's plan to move single-engine
fields into the engine's package. For each `LaunchSettings` field:
- `flag`: the engines whose `FLAGS` spell a flag that sets it (read from each package's `FLAGS`, exact);
- `reads`: the engines whose packages read it as an attribute of a launch — `settings.<f>`, `x.settings.<f>`,
  or a name annotated `LaunchSettings` — a lower bound where a launch goes by another name;
- `named`: the other engines whose packages name it in a string only (`cap_fields`, `getattr`, an update
  key, a flag spelling's field), which may be another object's key of the same name;
- `shared`: the shared modules (outside every engine package) that read it the same way.
For each `KvStorage` flag: the engines whose `KvStorage(...)` sets it (or names it as an update key), and the
shared modules that read it (`storage.<flag>`, `kv_storage.<flag>`).

Run: python benchmarks/settings_field_use.py [--json]
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kvtop.domain.engines.registry import ENGINE_IDS, engine_flags  # noqa: E402
from kvtop.domain.kv import KvStorage  # noqa: E402
from kvtop.domain.launch import LaunchSettings  # noqa: E402

FIELDS = tuple(LaunchSettings.model_fields)
FLAGS = tuple(KvStorage.model_fields)
ENGINE_ROOTS = ("kvtop/domain/engines/", "kvtop/sources/engines/")


def _owner(path: str) -> str | None:
    for root in ENGINE_ROOTS:
        if path.startswith(root):
            first = path[len(root) :].split("/", 1)[0]
            return first if first in ENGINE_IDS else None
    return None


def _launch_names(tree: ast.AST) -> set[str]:
    """Parameter and variable names annotated `LaunchSettings` anywhere in the module, 'settings', and 'self'
    where the module defines `LaunchSettings` (a module-wide approximation)."""
    names = {"settings"}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == "LaunchSettings":
            names.add("self")  # its own methods (launch.py): `self.<field>`
        if isinstance(node, ast.arg) and node.annotation is not None:
            if "LaunchSettings" in ast.unparse(node.annotation):
                names.add(node.arg)
        elif (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and "LaunchSettings" in ast.unparse(node.annotation)
        ):
            names.add(node.target.id)
    return names


def _is_launch(receiver: ast.expr, names: set[str]) -> bool:
    if isinstance(receiver, ast.Name):
        return receiver.id in names
    return isinstance(receiver, ast.Attribute) and receiver.attr == "settings"


def _is_storage(receiver: ast.expr) -> bool:
    text = ast.unparse(receiver)
    return text.endswith(("storage", "kv_storage"))


def _docstrings(tree: ast.AST) -> set[int]:
    return {
        id(n.value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
    }


def count() -> dict[str, dict[str, dict[str, list[str]]]]:
    """{"settings": {field: {"flag": [...], "reads": [...], "shared": [...]}}, "storage": {flag: {...}}}."""
    reads: dict[str, set[str]] = defaultdict(set)
    named: dict[str, set[str]] = defaultdict(set)
    shared: dict[str, set[str]] = defaultdict(set)
    sets_flag: dict[str, set[str]] = defaultdict(set)
    reads_flag: dict[str, set[str]] = defaultdict(set)
    for path in sorted((ROOT / "kvtop").rglob("*.py")):
        rel = str(path.relative_to(ROOT))
        tree = ast.parse(path.read_text(encoding="utf-8"))
        engine, names, docs = _owner(rel), _launch_names(tree), _docstrings(tree)
        where = rel.removesuffix(".py").removeprefix("kvtop/")
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in FIELDS and _is_launch(node.value, names):
                (reads[node.attr].add(engine) if engine else shared[node.attr].add(where))
            elif (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in docs
                and engine
            ):
                if node.value in FIELDS:
                    named[node.value].add(engine)
                if node.value in FLAGS:  # an update key: `storage.model_copy(update={"flag": …})`
                    sets_flag[node.value].add(engine)
            if (
                isinstance(node, ast.Attribute)
                and node.attr in FLAGS
                and _is_storage(node.value)
                and not engine
            ):
                reads_flag[node.attr].add(where)
            if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("KvStorage") and engine:
                for keyword in node.keywords:
                    if keyword.arg in FLAGS:
                        sets_flag[keyword.arg].add(engine)
    spelled = {engine: set(engine_flags(engine).spellings.values()) for engine in ENGINE_IDS}
    order = {engine: i for i, engine in enumerate(ENGINE_IDS)}
    return {
        "settings": {
            f: {
                "flag": [e for e in ENGINE_IDS if f in spelled[e]],
                "reads": sorted(reads[f], key=order.__getitem__),
                "named": sorted(named[f] - reads[f], key=order.__getitem__),
                "shared": sorted(shared[f]),
            }
            for f in FIELDS
        },
        "storage": {
            f: {"set_by": sorted(sets_flag[f], key=order.__getitem__), "shared": sorted(reads_flag[f])}
            for f in FLAGS
        },
    }


def _table(counts: dict[str, dict[str, dict[str, list[str]]]]) -> str:
    lines = ["| LaunchSettings field | engines whose flags set it | engines' packages that read it (+ name it) "
             "| shared modules that read it |", "| --- | --- | --- | --- |"]  # fmt: skip
    for field, use in counts["settings"].items():
        named = f" (+ {', '.join(use['named'])})" if use["named"] else ""
        lines.append(
            f"| `{field}` | {', '.join(use['flag']) or '—'} | {len(use['reads'])}: {', '.join(use['reads']) or '—'}"
            f"{named} | {len(use['shared'])} |"
        )
    lines += [
        "",
        "| KvStorage flag | engines that set it | shared modules that read it |",
        "| --- | --- | --- |",
    ]
    for flag, use in counts["storage"].items():
        lines.append(f"| `{flag}` | {', '.join(use['set_by']) or '—'} | {', '.join(use['shared']) or '—'} |")
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="the counts as JSON (else a Markdown table)")
    counts = count()
    print(json.dumps(counts, indent=1) if parser.parse_args().json else _table(counts))
