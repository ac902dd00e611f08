"""Every explainer's `EstimateRun` carries the typed origin of its GPU total (`ExplainRequest.gpu_total_origin`).

A run without one falls back to comparing bytes (`explain_estimate._total_given`): an operator's --gpu-memory
81559MiB on an H100 equals the table's figure and would be read as nvidia-smi's table total, not the operator's.
The trial found three such runs (sglang/explain.py, trtllm/explain.py, vllm/explain.py); this guards every one.
"""

from __future__ import annotations

import ast
from pathlib import Path

ENGINES = Path(__file__).resolve().parents[2] / "kvtop" / "domain" / "engines"


def _runs_without_origin(path: Path) -> list[int]:
    tree = ast.parse(path.read_text())
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "EstimateRun"]
    return [call.lineno for call in calls if "gpu_total_origin" not in {kw.arg for kw in call.keywords}]


def test_every_engine_s_estimate_run_says_where_its_total_came_from() -> None:
    explainers = sorted(ENGINES.glob("*/explain*.py"))
    assert {path.parent.name for path in explainers} >= {"sglang", "trtllm", "vllm", "lmdeploy"}
    missing = {f"{path.parent.name}/{path.name}:{line}" for path in explainers for line in _runs_without_origin(path)}
    assert not missing, missing
