"""The order check: two cases in both orders through one runner process give the same figures.

    python benchmarks/engine_diff/run.py --order-check      # every pinned engine version

The pair is the one issue 33 found leaking: Qwen3-VL-8B-Instruct and Qwen2.5-VL-7B-Instruct (TP 1,
KV auto, sm90, default flags). Each engine version's runner runs A then B in one process, and B then
A in another, as the sweep runs them (imported once, one forked process per case): A's figures (and
B's) must be the same in both orders. The control runs the same two orders with each case in the
runner's own process (`--in-process`, the issue-20 harness's way), where state one case writes
reaches the next: it shows what the check catches. The answers are committed in
tests/data/engine_diff/checks/order-check.json and read by tests/test_engine_diff_harness.py.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from benchmarks.engine_diff.cases import cases
from benchmarks.engine_diff.engines import EngineSpec
from benchmarks.engine_diff.venvs import CACHE, REPO, ensure_venv

PAIR = ("Qwen--Qwen3-VL-8B-Instruct", "Qwen--Qwen2.5-VL-7B-Instruct")
# Where an engine version cannot load the first (SGLang 0.5.6's Qwen3-VL reads `rope_scaling`, which the
# config's transformers 5 layout no longer has: not run), another multimodal model takes its place.
PAIRS = {"sglang-0.5.6.post2": ("google--gemma-3-27b-it", "Qwen--Qwen2.5-VL-7B-Instruct")}
RESULT = REPO / "tests" / "data" / "engine_diff" / "checks" / "order-check.json"
FIGURES = {
    "vllm": ("status", "tokens_logged", "num_blocks", "bytes_per_block", "block_size", "groups", "stages"),
    "sglang": ("status", "max_total_num_tokens", "cell_size", "page_size", "max_running_requests", "stages"),
}


def pair_for(engine: str, version: str) -> tuple[str, str]:
    return PAIRS.get(f"{engine}-{version}", PAIR)


def _pair_cases(spec: EngineSpec, version: str) -> list[dict[str, Any]]:
    pair = pair_for(spec.name, version)
    chosen = cases(spec, ("sm90",), list(pair), ("default",), (1,), (spec.kv_dtypes[0],))
    by_config = {c["config"]: c for c in chosen}
    return [by_config[name] for name in pair]


def _run(python: Path, spec: EngineSpec, todo: list[dict[str, Any]], work: Path, *extra: str) -> list[dict[str, Any]]:
    from benchmarks.engine_diff.run import HERE, _env

    (work / "order.cases.json").write_text(json.dumps(todo))
    out = work / "order.jsonl"
    out.unlink(missing_ok=True)
    cmd = ["nice", "-n", "10", str(python), str(HERE / spec.runner), "--cases", str(work / "order.cases.json"),
           "--out", str(out), *extra]  # fmt: skip
    with (work / "order.log").open("a") as log:
        subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, env=_env(spec), cwd=work)
    return [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []


def _figures(engine: str, result: dict[str, Any]) -> dict[str, Any]:
    return {key: result.get(key) for key in FIGURES[engine]}


def _both_orders(python: Path, spec: EngineSpec, pair: list[dict[str, Any]], work: Path, *extra: str) -> dict[str, Any]:
    """A then B in one runner process, B then A in another: each case's figures in both orders."""
    first = [_figures(spec.name, r) for r in _run(python, spec, pair, work, *extra)]
    second = [_figures(spec.name, r) for r in _run(python, spec, pair[::-1], work, *extra)]
    if len(first) != 2 or len(second) != 2:
        return {"same_in_both_orders": False, "a_then_b": first, "b_then_a": second, "why": "a case did not answer"}
    same = first == second[::-1] and all(f["status"] == "ok" for f in first)
    return {"same_in_both_orders": same, "a_then_b": first, "b_then_a": second}


def order_check(spec: EngineSpec, version: str) -> dict[str, Any]:
    python = ensure_venv(spec, version)
    work = CACHE / "runs" / f"{spec.name}-{version}"
    work.mkdir(parents=True, exist_ok=True)
    pair = _pair_cases(spec, version)
    return {
        "cases": [c["config"] for c in pair],
        "forked": _both_orders(python, spec, pair, work),
        "in_process_control": _both_orders(python, spec, pair, work, "--in-process"),
    }


def write_order_checks(checks: dict[str, dict[str, Any]]) -> Path:
    RESULT.parent.mkdir(parents=True, exist_ok=True)
    old = json.loads(RESULT.read_text()) if RESULT.exists() else {}
    RESULT.write_text(json.dumps({**old, **checks}, indent=1, sort_keys=True) + "\n")
    return RESULT
