"""docs/fidelity.md: kvtop against the engines' own sizing code, from the committed fixtures.

Each fixture row (one engine run) is paired with kvtop's answer for the same inputs, recomputed
here; the verdict compares tokens, bytes per block (vLLM: all layer slots of one block; SGLang:
the cell, bytes per token), block/page size and num_blocks (vLLM) or max running requests
(SGLang). Rows whose three GPU generations read the same on both sides are shown once.
Every difference carries a reading from readings.py; one without is "unexplained".
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from benchmarks.engine_diff.kvtop_side import kvtop_plan
from benchmarks.engine_diff.readings import Case, reading_for
from benchmarks.engine_diff.venvs import REPO

FIXTURES = REPO / "tests" / "data" / "engine_diff"
DOC = REPO / "docs" / "fidelity.md"
GPU_ORDER = ("sm80", "sm90", "sm100")


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
    tp: int
    kv_dtype: str
    gpus: tuple[str, ...]
    kvtop: Side
    engine_side: Side
    verdict: str  # equal | different | kvtop refuses | engine refuses | both refuse | not run
    reading: tuple[str, str, str] | None  # (id, title, text) from readings.py


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
    return Side("ok", plan["tokens"], plan["cell_bytes"], plan["block_size"], plan["max_running_requests"])


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


def load_fixtures() -> list[dict[str, Any]]:
    fixtures = [json.loads(p.read_text()) for p in sorted(FIXTURES.glob("*.json"))]
    return sorted(
        fixtures, key=lambda f: (f["engine"], [-int(x) for x in f["version"].split(".")[:3] if x.isdigit()])
    )


def rows() -> list[Row]:
    out: list[Row] = []
    for fixture in load_fixtures():
        engine, version = fixture["engine"], fixture["version"]
        grouped: dict[tuple[str, int, str], list[tuple[str, Side, Side]]] = {}
        raw: dict[tuple[str, int, str, str], dict[str, Any]] = {}
        ordered = sorted(fixture["results"], key=lambda r: (r["config"], r["tp"], r["kv_dtype"], r["gpu"]))
        for result in ordered:  # config by config: kvtop's weights memo then serves each TP's variants
            key = (result["config"], result["tp"], result["kv_dtype"])
            raw[(*key, result["gpu"])] = result
            theirs = engine_side(engine, result)
            grouped.setdefault(key, []).append(
                (result["gpu"], _same_columns(kvtop_side(engine, version, result), theirs), theirs)
            )
        for (config, tp, dtype), by_gpu in sorted(grouped.items()):
            by_gpu.sort(key=lambda g: GPU_ORDER.index(g[0]))
            merged: list[tuple[tuple[str, ...], Side, Side]] = []
            for gpu, kv, en in by_gpu:
                if merged and merged[-1][1] == kv and merged[-1][2] == en:
                    merged[-1] = (merged[-1][0] + (gpu,), kv, en)
                else:
                    merged.append(((gpu,), kv, en))
            for gpus, kv, en in merged:
                v = verdict(kv, en)
                case = Case(
                    engine, version, config, tp, dtype, gpus, kv, en, raw[(config, tp, dtype, gpus[0])]
                )
                reading = None if v in ("equal", "both refuse", "not run") else reading_for(case)
                out.append(Row(engine, version, config, tp, dtype, gpus, kv, en, v, reading))
    return out


def _counts(table: list[Row]) -> dict[tuple[str, str], Counter[str]]:
    counts: dict[tuple[str, str], Counter[str]] = {}
    for row in table:
        weight = len(row.gpus)  # one count per engine run
        counts.setdefault((row.engine, row.version), Counter())[row.verdict] += weight
    return counts


HEADER = """# Fidelity: kvtop against the engines' own sizing code

Generated by `python benchmarks/engine_diff/run.py` (see benchmarks/README.md) from the engines'
figures in `tests/data/engine_diff/`; kvtop's side is recomputed from the same inputs, and
`tests/test_fidelity_table.py` fails when this file no longer matches the kvtop it runs with.
Do not edit by hand: rerun `python benchmarks/engine_diff/run.py --table-only`.

Engines: vLLM 0.33.0 and 0.13.0 (December 2025), SGLang 0.5.23 and 0.5.6.post2 (December 2025),
each run from its own wheel on a CPU machine (no GPU) with named stand-ins; kvtop is given the same
version (`--engine-version`), so its version rules are what is checked.

Inputs of every run: the config (with its `hf_quant_config.json` where it has one), TP 1/2/4/8,
KV dtype auto (bf16) and fp8 (e4m3), GPU generation sm80 (A100-80GB), sm90 (H100), sm100 (B200),
context 32,768 tokens (or the model's `max_position_embeddings` where smaller).
Budgets — vLLM: 40 GiB of KV memory (`--kv-cache-memory-bytes 42949672960`; the run had no GPU, so
kvtop is told the memory is there, `--free-memory 1PiB`, rather than refuse a pool the weights leave
no room for); SGLang: free memory 80 GiB before and 60 GiB after weight load,
`--mem-fraction-static 0.75` (rest memory 40 GiB).

Columns: tokens (vLLM: the `GPU KV cache size` figure; SGLang: `max_total_num_tokens`);
bytes (vLLM: bytes of one block over all its layer slots; SGLang: the cell, bytes per token per
rank, for hybrid SWA full + ratio × SWA); block (vLLM block size / SGLang page size); last (vLLM:
num_blocks; SGLang: max running requests). kvtop's figure first, the engine's second where they
differ; – where that engine version does not report the figure (SGLang before the
KVCacheConfigurator keeps the cell in a local and derives max running requests after allocating
the pools, which the harness does not do). Verdicts: equal (all four agree), different, kvtop refuses / engine refuses (one side
answers), both refuse, not run (the harness could not give the engine what it needs; not a result).
Readings: `kvtop:` a rule kvtop gets wrong (a fix request naming the engine code that decides it),
`stand-in:` the harness changed what the engine did, `harness:` an input the harness lacks.
The stand-ins are listed in each runner's docstring (benchmarks/engine_diff/*_runner.py) and in
each fixture; GPU generations whose figures are the same on both sides share one row.
"""


def _fmt_pair(a: str, b: str) -> str:
    return a if a == b else f"{a} / {b}"


def render(table: list[Row]) -> str:
    lines = [
        HEADER,
        "## Counts (one per engine run)",
        "",
        "| engine | version | equal | different | kvtop refuses | engine refuses | both refuse | not run |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for (engine, version), c in _counts(table).items():
        lines.append(
            f"| {engine} | {version} | {c['equal']} | {c['different']} | {c['kvtop refuses']} | "
            f"{c['engine refuses']} | {c['both refuse']} | {c['not run']} |"
        )
    readings: Counter[tuple[str, str, str]] = Counter()
    for r in table:
        if r.reading:
            readings[r.reading] += len(r.gpus)
    lines += [
        "",
        "## Readings of the differences (runs per reading)",
        "",
        "| id | runs | reading |",
        "|---|---|---|",
    ]
    for (rule_id, title, text), n in sorted(readings.items(), key=lambda kv: _rule_order(kv[0][0])):
        lines.append(f"| {rule_id} | {n} | **{title}** — {text} |")
    current = None
    for row in table:
        if (row.engine, row.version) != current:
            current = (row.engine, row.version)
            last = "num_blocks" if row.engine == "vllm" else "max running reqs"
            lines += [
                "",
                f"## {row.engine} {row.version}",
                "",
                f"| config | TP | KV | GPU | tokens kvtop / engine | bytes | block | {last} | verdict | reading |",
                "|---|---|---|---|---|---|---|---|---|---|",
            ]
        k, e = row.kvtop.cells(), row.engine_side.cells()
        if row.kvtop.status != "ok" or row.engine_side.status != "ok":
            msg = row.kvtop.message if row.kvtop.status != "ok" else row.engine_side.message
            who = "kvtop" if row.kvtop.status != "ok" else "engine"
            if row.verdict == "not run":
                who, msg = "harness", row.engine_side.message
            if row.verdict == "both refuse":
                who, msg = "both", f"kvtop: {row.kvtop.message} — engine: {row.engine_side.message}"
            cells = [f"{k[0]} / {e[0]}", _fmt_pair(k[1], e[1]), _fmt_pair(k[2], e[2]), _fmt_pair(k[3], e[3])]
            reading = (_short(row.reading) + " — " if row.reading else "") + f"{who}: {_clip(msg)}"
        else:
            cells = [
                _fmt_pair(k[0], e[0]),
                _fmt_pair(k[1], e[1]),
                _fmt_pair(k[2], e[2]),
                _fmt_pair(k[3], e[3]),
            ]
            reading = _short(row.reading) if row.reading else ""
        lines.append(
            f"| {row.config} | {row.tp} | {row.kv_dtype} | {'/'.join(row.gpus)} | "
            + " | ".join(cells)
            + f" | {row.verdict} | {reading} |"
        )
    return "\n".join(lines) + "\n"


def _short(reading: tuple[str, str, str]) -> str:
    return f"{reading[0]} {reading[1]}"


def _rule_order(rule_id: str) -> tuple[str, int]:
    digits = "".join(ch for ch in rule_id if ch.isdigit())
    return (rule_id.rstrip("0123456789"), int(digits) if digits else 999)


def _clip(message: str) -> str:
    """One table cell: no pipes or newlines, paths inside this checkout relative to it (the table must not
    depend on where the checkout lives), at most 200 characters."""
    text = message.replace(f"{REPO}/", "").replace("|", "/").replace("\n", " ")
    return text if len(text) <= 200 else text[:197] + "…"


def write_table(path: Path = DOC) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(rows()))
    return path
