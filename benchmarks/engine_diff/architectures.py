"""The architecture table of docs/fidelity.md: the engines' own model classes against kvtop's books.

For every forked row that built the model (each pipeline stage's TP rank 0, on the meta device),
two comparisons per stage:
  weights   the parameter bytes of the engine's model, language part (the top-level children that
            are not a vision/audio tower or projector), against kvtop's weights book for that rank;
  KV        (vLLM) each layer's KV cache spec — its kind and the bytes one token costs in it (page
            bytes ÷ block size; a Mamba layer's state bytes per request) — against kvtop's KV pools
            for that rank (full, sliding-window, DSA index, state), layer counts and bytes per layer.
An architecture (a config's `architectures[0]`) is equal where every compared row is; different
(with the first difference and its reading) where one is not; not modelled where kvtop refuses it.
Towers are reported beside (kvtop's weights book does not hold them: its `not_modelled`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from benchmarks.engine_diff.cases import config_path
from benchmarks.engine_diff.kvtop_side import kvtop_plan
from benchmarks.engine_diff.table import Row, load_fixtures

# Top-level children of an engine's model that hold the language model (the rest: towers, projectors).
LANGUAGE_CHILDREN = ("model", "lm_head", "language_model", "transformer", "backbone", "embed_tokens", "layers", "norm")
KV_KIND = {  # vLLM spec class -> kvtop pool
    "FullAttentionSpec": "full", "MLAAttentionSpec": "full", "SinkFullAttentionSpec": "full",
    "SlidingWindowSpec": "swa", "ChunkedLocalAttentionSpec": "swa", "SlidingWindowMLASpec": "swa",
    "MambaSpec": "state", "IndexerSpec": "dsa_index",
}  # fmt: skip
ARCH_READINGS: dict[str, str] = {}  # architecture -> a reading of a known difference (filled as they are read)


@dataclass(frozen=True)
class StageCheck:
    """One stage of one run: the engine's figures and kvtop's, and what differs."""

    engine: str
    version: str
    config: str
    layout: str
    differences: tuple[str, ...]
    towers_bytes: int


def architecture(config: str) -> str:
    data = json.loads(config_path(config).read_text())
    names = data.get("architectures") or [data.get("model_type", "?")]
    return str(names[0])


def _language_bytes(param_bytes: dict[str, int]) -> tuple[int, int]:
    language = sum(b for child, b in param_bytes.items() if child in LANGUAGE_CHILDREN or "language" in child)
    return language, sum(param_bytes.values()) - language


def _engine_kv(layer_specs: list[dict[str, Any]]) -> dict[str, tuple[int, float]]:
    """kvtop pool name -> (layers, bytes per layer per token; per request for state)."""
    out: dict[str, tuple[int, float]] = {}
    for spec in layer_specs:
        kind = KV_KIND.get(spec["kind"].split("[")[0], spec["kind"])
        per = spec["page_size_bytes"] if kind == "state" else spec["page_size_bytes"] / spec["block_size"]
        layers, seen = out.get(kind, (0, per))
        out[kind] = (layers + spec["layers"], seen if seen == per else -1.0)  # -1: layers of one kind differ
    return out


def _kvtop_kv(pools: list[dict[str, Any]]) -> dict[str, tuple[int, float]]:
    out: dict[str, tuple[int, float]] = {}
    for pool in pools:
        if pool["name"] == "state":
            out["state"] = (pool["layers"], pool["bytes_per_request"] / max(pool["layers"], 1))
        else:
            out[pool["name"]] = (pool["layers"], pool["bytes_per_layer_token"])
    return out


def stage_checks(result: dict[str, Any], engine: str, version: str, plan: dict[str, Any]) -> list[StageCheck]:
    """Each stage of one engine run against kvtop's rank of the same stage."""
    layout = f"TP{result['tp']}" + (f"×PP{result.get('pp', 1)}" if result.get("pp", 1) > 1 else "")
    if result.get("variant", "default") == "ep":
        layout += "+EP"
    checks = []
    for index, stage in enumerate(result.get("stages") or []):
        ours = next((s for s in plan["stages"] if s["pp_rank"] == index), None)
        language, towers = _language_bytes(stage["param_bytes"])
        differences: list[str] = []
        if ours is None:
            differences.append(f"stage {index}: kvtop has no rank for it")
        else:
            if ours["weights_bytes"] != language:
                differences.append(
                    f"stage {index} weights: kvtop {ours['weights_bytes']:,} B, engine {language:,} B "
                    f"({ours['weights_bytes'] - language:+,})"
                )
            if "layer_specs" in stage:
                theirs, mine = _engine_kv(stage["layer_specs"]), _kvtop_kv(ours["kv_pools"])
                for kind in sorted(set(theirs) | set(mine)):
                    if theirs.get(kind) != mine.get(kind):
                        differences.append(
                            f"stage {index} KV {kind} (layers, B/layer/token): kvtop {mine.get(kind)}, engine {theirs.get(kind)}"
                        )
        checks.append(StageCheck(engine, version, result["config"], layout, tuple(differences), towers))
    return checks


def architecture_rows(table: list[Row]) -> dict[str, dict[str, Any]]:
    """architecture -> {configs, layouts, equal, different (first differences), not modelled, towers}."""
    out: dict[str, dict[str, Any]] = {}
    for fixture in load_fixtures():
        engine, version = fixture["engine"], fixture["version"]
        for result in fixture["results"]:
            if result.get("kv_dtype") not in ("auto",) or result.get("variant", "default") not in ("default", "pp2", "pp4", "ep"):
                continue
            if result.get("gpu") != "sm90":
                continue
            entry = out.setdefault(
                architecture(result["config"]),
                {"configs": set(), "layouts": set(), "equal": 0, "different": [], "refused": [], "towers": 0,
                 "engines": set(), "not_run": 0},
            )  # fmt: skip
            entry["configs"].add(result["config"])
            if result["status"] != "ok" or "stages" not in result:
                entry["not_run" if result["status"] == "harness-error" or result["status"] == "ok" else "refused"] += (
                    0 if result["status"] == "ok" else 0
                )
                continue
            plan = kvtop_plan(engine, version, result)
            if plan["status"] != "ok":
                entry["refused"].append(plan["message"])
                continue
            for check in stage_checks(result, engine, version, plan):
                entry["layouts"].add(check.layout)
                entry["engines"].add(f"{engine} {version}")
                entry["towers"] = max(entry["towers"], check.towers_bytes)
                if check.differences:
                    entry["different"].append(check)
                else:
                    entry["equal"] += 1
    return out


def render_architectures(table: list[Row]) -> list[str]:
    lines = [
        "",
        "## Architectures: the engines' own model classes against kvtop's books",
        "",
        "Each stage of each run built on meta (sm90, KV auto, the default grid's TP sizes and the PP/EP flag sets):",
        "the language model's parameter bytes per rank against kvtop's weights book, and (vLLM) each layer's KV",
        "cache spec against kvtop's KV pools. Towers: the largest vision/audio tower and projector bytes of one",
        "rank, which kvtop's weights book does not hold (its `not_modelled`).",
        "",
        "| architecture | configs | engines | layouts | stages equal | stages different | verdict | first difference / reading |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for arch, entry in sorted(architecture_rows(table).items()):
        different: list[StageCheck] = entry["different"]
        if entry["equal"] == 0 and not different:
            verdict = "not modelled" if entry["refused"] else "not run"
            detail = entry["refused"][0] if entry["refused"] else "no engine run built it"
        else:
            verdict = "different" if different else "equal"
            detail = ""
            if different:
                first = different[0]
                detail = f"{first.engine} {first.version} {first.config} {first.layout}: {first.differences[0]}"
            if arch in ARCH_READINGS:
                detail = (detail + " — " if detail else "") + ARCH_READINGS[arch]
        if entry["towers"]:
            detail = (detail + "; " if detail else "") + f"towers {entry['towers']:,} B not in kvtop's book"
        lines.append(
            f"| {arch} | {', '.join(sorted(entry['configs']))} | {', '.join(sorted(entry['engines'])) or '–'} | "
            f"{', '.join(sorted(entry['layouts'])) or '–'} | {entry['equal']} | {len(different)} | {verdict} | "
            f"{detail.replace('|', '/')[:400]} |"
        )
    return lines
