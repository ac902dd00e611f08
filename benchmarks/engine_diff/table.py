"""docs/fidelity.md: kvtop against the engines' own sizing code, from the committed fixtures.

Each fixture row (one engine run) is paired with kvtop's answer for the same inputs, recomputed
here; the verdict compares tokens, bytes per block (vLLM: all layer slots of one block; SGLang:
the cell, bytes per token), block/page size and num_blocks (vLLM) or max running requests
(SGLang). Rows whose three GPU generations read the same on both sides are shown once.
Every difference carries a reading from readings.py; one without is "unexplained".
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from benchmarks.engine_diff.cases import DEFAULT, FLAG_SETS, IN_PROCESS, case_key
from benchmarks.engine_diff.kvtop_side import kvtop_plan
from benchmarks.engine_diff.readings import Case, reading_for
from benchmarks.engine_diff.venvs import REPO

FIXTURES = REPO / "tests" / "data" / "engine_diff"
DOC = REPO / "docs" / "fidelity.md"
GPU_ORDER = ("sm80", "sm90", "sm100")
VARIANT_ORDER = {flags.name: i for i, flags in enumerate(FLAG_SETS)}



@dataclass(frozen=True)
class Side:
    status: str  # ok | refused
    tokens: int | None = None
    bytes_per_block: int | None = None
    block_size: int | None = None
    extra: int | None = None  # vLLM: num_blocks; SGLang: max running requests
    message: str = ""

    def cells(self) -> tuple[str, str, str, str]:
        if self.status == "harness-error":
            return ("not run", "", "", "")
        if self.status != "ok":
            return ("refuses", "", "", "")
        return (_num(self.tokens), _num(self.bytes_per_block), _num(self.block_size), _num(self.extra))


def _num(value: int | None) -> str:
    return "–" if value is None else f"{value:,}"


def _same_columns(kvtop: Side, engine: Side) -> Side:
    """kvtop's side without the columns the engine run could not report (older SGLang keeps the
    cell in a local and derives max running requests after the pools exist)."""
    if kvtop.status != "ok" or engine.status != "ok":
        return kvtop
    if engine.bytes_per_block is None:
        kvtop = replace(kvtop, bytes_per_block=None)
    if engine.extra is None:
        kvtop = replace(kvtop, extra=None)
    return kvtop


@dataclass(frozen=True)
class Row:
    engine: str
    version: str
    config: str
    variant: str  # "default" or a flag set of cases.FLAG_SETS
    tp: int
    pp: int
    kv_dtype: str
    gpus: tuple[str, ...]
    kvtop: Side
    engine_side: Side
    verdict: str  # equal | different | kvtop refuses | engine refuses | both refuse | not run
    reading: tuple[str, str, str] | None  # (id, title, text) from readings.py
    harness: str  # which harness produced the engine's figures (HARNESSES)


def engine_side(engine: str, result: dict[str, Any]) -> Side:
    if result["status"] == "harness-error":
        return Side("harness-error", message=result.get("message", ""))
    if result["status"] != "ok":
        return Side("refused", message=result.get("message", ""))
    if engine == "vllm":
        return Side(
            "ok",
            tokens=result["tokens_logged"],
            bytes_per_block=result["bytes_per_block"],
            block_size=result["block_size"],
            extra=result["num_blocks"],
        )
    return Side(
        "ok",
        tokens=result["max_total_num_tokens"],
        bytes_per_block=result.get("cell_size"),
        block_size=result["page_size"],
        extra=result.get("max_running_requests"),
    )


def kvtop_side(engine: str, version: str, result: dict[str, Any]) -> Side:
    plan = kvtop_plan(engine, version, result)
    if plan["status"] != "ok":
        return Side("refused", message=plan["message"])
    if engine == "vllm":
        per_block = plan["kv_pool_bytes"] // plan["num_blocks"] if plan["num_blocks"] else 0
        return Side("ok", plan["tokens"], per_block, plan["block_size"], plan["num_blocks"])
    return Side("ok", plan["tokens"], _sglang_cell(result, plan), plan["block_size"], plan["max_running_requests"])


def _sglang_cell(result: dict[str, Any], plan: dict[str, Any]) -> int:
    """The cell SGLang's row reports: under PP, stage 0's (the runner reads the KVCacheConfigurator of
    stage 0's process; each stage sizes its own layers' cell and the MIN of the token counts is taken
    over the stages), so kvtop's stage 0 rank's bytes per token, where kvtop's own cell step is its
    tightest rank's (94 layers over PP 4: 23, 23, 24, 24 — stage 0's cell is the smaller). A hybrid-SWA
    cell (full + ratio × SWA) is not a rank's bytes per token: its cell step counts the stage's own layers
    already (engines/sglang/budget.py), and is kept."""
    stages = {s["pp_rank"]: s for s in plan["stages"]}
    if result.get("pp", 1) > 1 and 0 in stages and not any(p["name"] == "swa" for p in stages[0]["kv_pools"]):
        return int(stages[0]["kv_bytes_per_token"])
    return int(plan["cell_bytes"])


def verdict(kvtop: Side, engine: Side) -> str:
    if engine.status == "harness-error":
        return "not run"
    if kvtop.status != "ok" and engine.status != "ok":
        return "both refuse"
    if kvtop.status != "ok":
        return "kvtop refuses"
    if engine.status != "ok":
        return "engine refuses"
    return "equal" if kvtop == engine else "different"


def fixture_paths(engine: str, version: str) -> tuple[Path, Path]:
    """An engine version's answers: the default grid's rows, and the flag sets' (a file apart, so that
    code reading the default grid by config, TP, KV dtype and GPU finds one row for each)."""
    return FIXTURES / f"{engine}-{version}.json", FIXTURES / f"{engine}-{version}.flags.json"


def by_harness(value: Any) -> dict[str, Any]:
    """A fixture head's stand-ins or packages keyed by harness (a file of the in-process harness
    alone holds them bare: a list of stand-ins, a {package: version} map)."""
    if not value:
        return {}
    if isinstance(value, list) or not isinstance(next(iter(value.values())), (dict, list)):
        return {IN_PROCESS: value}
    return dict(value)


def read_fixture(engine: str, version: str) -> dict[str, Any]:
    """Both files of an engine version as one fixture: the results of both, the stand-ins and
    packages of each harness that produced some."""
    fixture: dict[str, Any] = {"engine": engine, "version": version, "results": [], "stand_ins": {}, "packages": {}}
    for path in fixture_paths(engine, version):
        if not path.exists():
            continue
        part = json.loads(path.read_text())
        fixture["results"] += part["results"]
        for key in ("stand_ins", "packages"):
            fixture[key] = {**fixture[key], **by_harness(part.get(key))}
    return fixture


def load_fixtures() -> list[dict[str, Any]]:
    versions = {
        tuple(p.name[: -len(".json")].removesuffix(".flags").split("-", 1))
        for p in FIXTURES.glob("*.json")
    }
    fixtures = [read_fixture(engine, version) for engine, version in versions]
    return sorted(
        fixtures, key=lambda f: (f["engine"], [-int(x) for x in f["version"].split(".")[:3] if x.isdigit()])
    )


def rows() -> list[Row]:
    out: list[Row] = []
    for fixture in load_fixtures():
        engine, version = fixture["engine"], fixture["version"]
        grouped: dict[tuple[str, str, int, int, str], list[tuple[str, Side, Side]]] = {}
        raw: dict[tuple[str, str, int, int, str, str], dict[str, Any]] = {}
        for result in sorted(fixture["results"], key=case_key):  # config by config: kvtop's memos serve each
            key = case_key(result)
            raw[key] = result
            theirs = engine_side(engine, result)
            grouped.setdefault(key[:5], []).append(
                (result["gpu"], _same_columns(kvtop_side(engine, version, result), theirs), theirs)
            )
        for (config, variant, tp, pp, dtype), by_gpu in sorted(grouped.items(), key=lambda kv: _row_order(kv[0])):
            by_gpu.sort(key=lambda g: GPU_ORDER.index(g[0]))
            merged: list[tuple[tuple[str, ...], Side, Side]] = []
            for gpu, kv, en in by_gpu:
                if merged and merged[-1][1] == kv and merged[-1][2] == en:
                    merged[-1] = (merged[-1][0] + (gpu,), kv, en)
                else:
                    merged.append(((gpu,), kv, en))
            for gpus, kv, en in merged:
                v = verdict(kv, en)
                result = raw[(config, variant, tp, pp, dtype, gpus[0])]
                case = Case(engine, version, config, variant, tp, pp, dtype, gpus, kv, en, result)
                reading = None if v in ("equal", "both refuse", "not run") else reading_for(case)
                harness = str(result.get("harness", IN_PROCESS))
                out.append(Row(engine, version, config, variant, tp, pp, dtype, gpus, kv, en, v, reading, harness))
    return out


def _row_order(key: tuple[str, str, int, int, str]) -> tuple[Any, ...]:
    config, variant, tp, pp, dtype = key
    return (variant != DEFAULT, VARIANT_ORDER.get(variant, 99), config, tp, pp, dtype)


def write_table(path: Path = DOC) -> Path:
    from benchmarks.engine_diff.render import render

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(rows()))
    return path
