"""No engine list in shared code, for every registered engine (issue 29): a static guard over kvtop's source.

Every module of `kvtop/` is parsed with `ast`. Outside an engine's own packages (`kvtop/domain/engines/<id>/`,
`kvtop/sources/engines/<id>/`) and the catalogue (`kvtop/domain/engines/catalogue.py`, the one line per engine),
no module may
- import an engine's package or one of its modules (absolute, relative, or `from kvtop.domain.engines import
  <id>`), nor name one in a string (`import_module("kvtop.domain.engines.vllm.explain")`);
- hold a string equal to an engine's id, its packages' name or its display name ("vllm", "vLLM"), in any case:
  a key, a branch or a choice (`engine == "vllm"`, `{"sglang": …}`);
- hold a code-like string (no whitespace) that starts with one of those names and ':' or '.': a metric name
  (`"vllm:num_requests_running"`), a process title prefix (`"VLLM::Worker"`), a module path.
An engine's packages may name only their own engine that way. Docstrings and other bare string statements may
name engines as examples (they are never a key or a branch), and so may prose in help text and messages
("SGLang's log says 'GB' for GiB"), which is not a whole-string match. The guard's own tests plant each kind of
violation in a synthetic module and in a synthetic tree, and each must be reported.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from kvtop.domain.engines.catalogue import ENGINE_IDS, display_name, engine_module

ROOT = Path(__file__).resolve().parents[2]
ENGINE_ROOTS = ("kvtop.domain.engines", "kvtop.sources.engines")
CATALOGUE = "kvtop.domain.engines.catalogue"
_BY_PATH = re.compile(r"kvtop\.(?:domain|sources)\.engines\.([A-Za-z_][A-Za-z0-9_]*)")


@dataclass(frozen=True)
class Engine:
    """What shared code could name an engine by: its id, its packages' last name, its display name."""

    id: str
    names: frozenset[str]  # lower-cased


def registered_engines() -> tuple[Engine, ...]:
    """Every engine of the catalogue, with the names it goes by (its package's name read from the module)."""
    engines = []
    for engine in ENGINE_IDS:
        package = engine_module(engine).__name__.rsplit(".", 1)[1]
        engines.append(Engine(engine, frozenset(n.lower() for n in (engine, package, display_name(engine)))))
    return tuple(engines)


def owner(module: str, engines: tuple[Engine, ...]) -> str | None:
    """The engine whose package holds `module` (a dotted name), or None for shared code."""
    for root in ENGINE_ROOTS:
        if module.startswith(root + "."):
            first = module[len(root) + 1 :].split(".", 1)[0]
            return first if first in {e.id for e in engines} else None
    return None


def _imported(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    """The dotted names an import statement reaches: the module, and for `from X import y` also X.y."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        parts = module.split(".") if is_package else module.split(".")[:-1]
        parts = parts[: len(parts) - (node.level - 1)]
        base = ".".join([*parts, *([node.module] if node.module else [])])
    else:
        base = node.module or ""
    return [base, *(f"{base}.{alias.name}" for alias in node.names)]


def _bare_strings(tree: ast.AST) -> set[int]:
    """The string constants that are whole statements: docstrings (module, class, function, attribute)."""
    return {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    }


def _named_by_string(text: str, engines: tuple[Engine, ...]) -> str | None:
    """The engine a string names as code would (a key, a metric, a title prefix, a module path), or None."""
    lowered = text.lower()
    for engine in engines:
        if lowered in engine.names:
            return engine.id
        if not any(c.isspace() for c in text) and any(
            lowered.startswith(name + sep) for name in engine.names for sep in (":", ".")
        ):
            return engine.id
    for match in _BY_PATH.finditer(text):
        if match.group(1) in {e.id for e in engines}:
            return match.group(1)
    return None


def violations(
    source: str, module: str, engines: tuple[Engine, ...], *, is_package: bool = False
) -> list[str]:
    """Where the module (its dotted name, its source) names an engine other than its own, as 'module:line: what'."""
    if module == CATALOGUE:
        return []
    mine = owner(module, engines)
    tree = ast.parse(source)
    docstrings = _bare_strings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            for name in _imported(node, module, is_package):
                theirs = owner(name, engines)
                if theirs is not None and theirs != mine:
                    found.append(f"{module}:{node.lineno}: imports {name}")
                    break
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            theirs = _named_by_string(node.value, engines)
            if theirs is not None and theirs != mine:
                found.append(f"{module}:{node.lineno}: names {theirs} in the string {node.value[:60]!r}")
    return found


def scan(root: Path, engines: tuple[Engine, ...]) -> tuple[int, list[str]]:
    """(how many modules were read, every violation) over the `kvtop` package under `root`."""
    modules = sorted((root / "kvtop").rglob("*.py"))
    found = []
    for path in modules:
        parts = path.relative_to(root).with_suffix("").parts
        is_package = parts[-1] == "__init__"
        module = ".".join(parts[:-1] if is_package else parts)
        found += violations(path.read_text(encoding="utf-8"), module, engines, is_package=is_package)
    return len(modules), found


def test_no_module_outside_an_engines_packages_names_it() -> None:
    engines = registered_engines()
    read, found = scan(ROOT, engines)
    assert read > 200  # the whole package was read, not an empty folder
    assert not found, (
        "shared code names an engine (move the knowledge into the engine's package):\n" + "\n".join(found)
    )


def test_every_engine_goes_by_its_id_its_package_and_its_display_name() -> None:
    """The names the guard looks for are the catalogue's, so a sixth engine is guarded with no edit here."""
    by_id = {e.id: e.names for e in registered_engines()}
    assert set(by_id) == set(ENGINE_IDS)
    assert by_id["vllm"] == {"vllm"} and by_id["trtllm"] == {"trtllm", "tensorrt-llm"}
    assert by_id["llamacpp"] == {"llamacpp", "llama.cpp"}


# The guard itself: each planted violation must be reported, each harmless mention must not.
PLANTED: dict[str, tuple[str, str] | tuple[str, str, bool]] = {
    "an absolute import": ("kvtop.domain.waterfall", "import kvtop.domain.engines.vllm.eras\n"),
    "a from-import of a module": (
        "kvtop.ui.planning",
        "from kvtop.sources.engines.trtllm.endpoint import read_live\n",
    ),
    "a package imported from its parent": ("kvtop.domain.node", "from kvtop.domain.engines import sglang\n"),
    "a relative import": ("kvtop.domain.explain", "from .engines.lmdeploy import RULES\n"),
    "a relative import from a package's __init__": ("kvtop.sources", "from .engines import llamacpp\n", True),
    "a type-checking import": (
        "kvtop.domain.whatif",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from kvtop.domain.engines.vllm import flags\n",
    ),
    "an import by a string": (
        "kvtop.domain.diagnose",
        "from importlib import import_module\nm = import_module('kvtop.domain.engines.lmdeploy.explain')\n",
    ),
    "a branch on an id": ("kvtop.domain.waterfall", "def f(engine):\n    return engine == 'vllm'\n"),
    "a key": ("kvtop.sources.prometheus", "CAP = {'sglang': ('max_total_tokens',)}\n"),
    "a choice in a tuple": ("kvtop.ui.planning", "OK = ('sglang', 'lmdeploy')\n"),
    "a display name": ("kvtop.commands.plan", "def f(name):\n    return name == 'TensorRT-LLM'\n"),
    "an id in another case": ("kvtop.commands.plan", "X = 'VLLM'\n"),
    "a metric name": ("kvtop.sources.prometheus", "USED = 'vllm:gpu_cache_usage_perc'\n"),
    "a process title prefix": ("kvtop.sources.engine_logs", "PREFIX = 'sglang::scheduler'\n"),
    "another engine's id inside an engine package": (
        "kvtop.domain.engines.vllm.budget",
        "LIKE = 'sglang'\n",
    ),
    "another engine's package inside an engine package": (
        "kvtop.sources.engines.sglang.endpoint",
        "from kvtop.domain.engines.vllm.span import metrics_rank\n",
    ),
}
HARMLESS = {
    "a docstring": ("kvtop.domain.waterfall", '"""The cap term, as vLLM and SGLang state it."""\n'),
    "a function's docstring": ("kvtop.domain.kv", 'def f():\n    """llamacpp: K and V apart."""\n'),
    "a comment": ("kvtop.domain.kv", "X = 1  # sglang pages by 1\n"),
    "prose in help text": (
        "kvtop.commands.common",
        "HELP = \"e.g. 78.81GiB (SGLang's log says 'GB' for GiB)\"\n",
    ),
    "another engine's attention backend": ("kvtop.domain.engines.sglang.eras", "B = 'trtllm_mha'\n"),
    "an id built from a value": (
        "kvtop.sources.engines.registry",
        "def p(e):\n    return f'kvtop.sources.engines.{e}'\n",
    ),
    "its own id in its own package": ("kvtop.domain.engines.vllm.span", "PREFIX = 'vllm:'\n"),
    "its own package, relatively": (
        "kvtop.sources.engines.trtllm.endpoint",
        "from . import complete_settings\n",
    ),
    "its sources half importing its domain half": (
        "kvtop.sources.engines.llamacpp.endpoint",
        "from kvtop.domain.engines.llamacpp.span import metrics_rank\n",
    ),
    "the catalogue's lines": (
        "kvtop.domain.engines.catalogue",
        "E = {'vllm': ('vLLM', 'kvtop.domain.engines.vllm')}\n",
    ),
    "the shared modules beside the engines": (
        "kvtop.domain.waterfall",
        "from kvtop.domain.engines import registry\n",
    ),
}


@pytest.mark.parametrize("kind", PLANTED)
def test_the_guard_reports_a_planted_violation(kind: str) -> None:
    module, source, *is_package = PLANTED[kind]
    found = violations(source, module, registered_engines(), is_package=bool(is_package))
    assert found and all(line.startswith(f"{module}:") for line in found), found


@pytest.mark.parametrize("kind", HARMLESS)
def test_the_guard_lets_a_harmless_mention_pass(kind: str) -> None:
    module, source = HARMLESS[kind]
    assert violations(source, module, registered_engines()) == []


def test_the_guard_finds_a_planted_module_in_a_tree(tmp_path: Path) -> None:
    """The walk names modules from their paths: a violation in a package's `__init__` is found by its package."""
    (tmp_path / "kvtop/domain/engines/vllm").mkdir(parents=True)
    (tmp_path / "kvtop/domain/__init__.py").write_text('"""Shared: vLLM named in a docstring only."""\n')
    (tmp_path / "kvtop/domain/engines/vllm/__init__.py").write_text("ID = 'vllm'\n")
    (tmp_path / "kvtop/domain/engines/__init__.py").write_text("from .vllm import ID\n")
    read, found = scan(tmp_path, registered_engines())
    assert read == 3
    assert found == ["kvtop.domain.engines:1: imports kvtop.domain.engines.vllm"]
