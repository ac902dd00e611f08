"""A `KeyedRowsTable` subclass changes its columns through `set_columns`, never by writing the rows the base keeps.

`ClusterTable.show_nodes` once cleared the table and wrote `self._rows = {}` itself (session 67's second reader): the
base's bookkeeping of which cells are drawn lived in two classes. The rows it keeps (`_rows`, `_styles`) are written
in kvtop/ui/widgets/keyed_rows.py alone.
"""

from __future__ import annotations

import ast
from pathlib import Path

import kvtop.ui

PRIVATE = {"_rows", "_styles"}
UI = Path(kvtop.ui.__file__).parent


def _subclass_writes(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    found = []
    for cls in ast.walk(tree):
        if not isinstance(cls, ast.ClassDef) or not any(
            isinstance(base, ast.Name) and base.id == "KeyedRowsTable" for base in cls.bases
        ):
            continue
        for node in ast.walk(cls):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
                node, ast.AnnAssign | ast.AugAssign) else []  # fmt: skip
            for target in targets:
                for part in ast.walk(target):
                    if isinstance(part, ast.Attribute) and part.attr in PRIVATE:
                        found.append(f"{path.name}:{part.lineno} {cls.name}.{part.attr}")
    return found


def test_no_subclass_writes_the_rows_the_base_keeps() -> None:
    subclasses = [p for p in UI.rglob("*.py") if "(KeyedRowsTable)" in p.read_text()]
    assert {p.name for p in subclasses} >= {"cluster_table.py", "engine_table.py"}
    assert [w for p in subclasses for w in _subclass_writes(p)] == []
