"""'kvtop export' is spelled once (`exported_prediction.EXPORTER`) and read by every module that says it.

Session 67's second reader found `cluster_findings` and `prometheus_node` spelling the name themselves while
`EXPORTER` claimed to be every view's words. The rule here: no string a person reads in those modules holds the
literal; the docstrings (for developers) may, and so may the noun "kvtop exporter". The words they print are unchanged (their own tests pin them).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from kvtop.domain import cluster_findings
from kvtop.domain.cluster_findings import ExportedCounts
from kvtop.domain.exported_prediction import EXPORTER
from kvtop.sources import prometheus_node

MODULES = [cluster_findings, prometheus_node]


def _said_strings(module: object) -> list[str]:
    tree = ast.parse(Path(module.__file__).read_text())  # type: ignore[attr-defined]
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef)
        and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)
    }  # fmt: skip
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_no_module_spells_the_exporter_itself(module: object) -> None:
    assert EXPORTER == "kvtop export"
    # "kvtop exporter" (the program, a noun: "no kvtop exporter on this node") is another word, not the name
    assert [s for s in _said_strings(module) if re.search(r"kvtop export(?!er)", s)] == []


def test_the_findings_still_say_kvtop_export() -> None:
    counts = ExportedCounts("h100-f", (("critical", 1),), 3)
    assert counts.forms()[1] == "kvtop export on h100-f counts 1 critical finding and 3 advice"
