"""kvtop's side of each registry-sweep row, and the verdict of the row: the engine's cached figures against
kvtop's plan of the same config at the same layout (recomputed here, so the doc follows the kvtop it runs with).

The comparison is the architecture table's (architectures.stage_checks): the language model's parameter bytes
per rank (and kvtop's tower row against the engine's towers where kvtop's book holds one), and (vLLM) each KV
pool's layers and bytes per layer per token from the engine's KV cache specs, and each windowed pool's window (the
spec's sliding_window or attention_chunk_size against kvtop's vLLM `spec_window`); for SGLang, also the cell (KV
bytes per token of the rank, `_cell_size`) against kvtop's cell. A row equal in all that whose engine build
holds towers outside kvtop's book is not equal: TOWER_NOT_MODELLED where kvtop's plan names the tower "not
modelled", else different (the plan's weights per rank are short by the towers either way). A row equal in all that,
its tower row included, whose plan names a part of the tower "not modelled" is PART_NOT_MODELLED (that part is
compared on neither side).

A speculative draft's config (`DRAFT_TARGETS`) that the engine builds as a class is judged as a draft: the
engine's parameter bytes of the class and its cell against kvtop's draft terms (weights per rank, KV per token)
planned beside the draft's target (`kvtop_side.kvtop_draft_plan`); where the engine refuses the class as a
served model, kvtop's refusal of the draft as a served model agrees (both refuse).
"""

from __future__ import annotations

import re
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any
from unittest import mock

from benchmarks.engine_diff import arch_readings, architectures, kvtop_side, stage_check
from benchmarks.engine_diff.arch_readings import arch_reading
from benchmarks.engine_diff.architectures import stage_checks
from benchmarks.engine_diff.cases import budget
from benchmarks.engine_diff.engines import ENGINES
from benchmarks.engine_diff.registry_configs import DRAFT_TARGETS, ConfigFile, default_configs, real_configs
from benchmarks.engine_diff.run import relative_paths

EQUAL, DIFFERENT, KVTOP_REFUSES, ENGINE_REFUSES, NOT_BUILT, BOTH_REFUSE = (
    "equal", "different", "kvtop refuses", "engine refuses", "engine could not build", "both refuse",
)  # fmt: skip
# The language model equal, but the engine's build holds towers (vision encoder, projector, ...) that kvtop's book
# does not and its plan names "not modelled": the plan's weights per rank are short by those bytes, so the row is
# not counted equal (a tower kvtop neither holds nor names is a difference: a silently missing figure).
TOWER_NOT_MODELLED = "equal (language model); tower not modelled"
# Both sides' tower rows equal (kvtop's book holds the tower's counted part, the engine's build the same bytes), but
# kvtop's plan names a part of the tower "not modelled" that neither side's bytes hold (Llama-Nemotron-Nano-VL's
# C-RADIO vision model: the checkpoint's own code, an empty stand-in in the harness; only mlp1 compared): not
# counted equal, since a part is compared on neither side.
PART_NOT_MODELLED = "equal (language model and tower row); a tower part not modelled"
OUT_OF_BOOK = "not in the weights book"  # how a note names a part whose bytes kvtop's book leaves out (a tower's notes)
TOWER_WORDS = ("tower", "vision", "visual", "audio", "image")  # a not-modelled note of kvtop's that names a tower


@dataclass(frozen=True)
class Judged:
    """One row: the engine's answer against kvtop's, and the first difference or reason (one line)."""

    engine: str
    config: str
    architecture: str
    real: bool
    tp: int
    verdict: str
    detail: str = ""
    reconstructed: bool = False  # a config rebuilt from published figures: judged, not in the held-out share


_CONFIGS: dict[str, ConfigFile] = {}


def configs_by_name() -> dict[str, ConfigFile]:
    if not _CONFIGS:
        _CONFIGS.update({c.name: c for c in real_configs() + default_configs()})
    return _CONFIGS


def one_line(text: str, width: int = 160) -> str:
    """`text` on one line, its checkout's paths made relative before the cut (so the cut falls at the same
    place in every checkout), at most `width` characters."""
    line = " ".join(relative_paths(str(text)).split())
    return line if len(line) <= width else line[: width - 1] + "…"


def kvtop_answer(engine: str, version: str, row: dict[str, Any]) -> dict[str, Any]:
    """`kvtop plan --json` of the row's config and layout, as kvtop_side runs it for the main sweep."""
    case = {**{k: row[k] for k in ("config", "tp", "kv_dtype", "gpu", "max_model_len")}, "flags": row.get("flags", []),
            **budget(ENGINES[engine])}  # fmt: skip
    with mock.patch.object(kvtop_side, "config_path", lambda name: configs_by_name()[name].path):
        return kvtop_side.kvtop_plan(engine, version, case)


_POOL = re.compile(r"stage (\d+) KV (full|swa) \(layers, B/layer/token\): kvtop (.+), engine (.+)$")


def _window_pools_paired(differences: list[tuple[Any, str]]) -> tuple[list[tuple[Any, str]], list[str]]:
    """A6 where the config leaves sliding_window to its class default (MLC's Mistral-7B): kvtop's pool named full
    holds what the engine's swa pool holds (the same layers and bytes a token), the other pool absent on each side."""
    pools = {(m.group(1), m.group(2)): (m.group(3), m.group(4)) for _, t in differences if (m := _POOL.match(t))}
    paired = [stage for stage, _ in pools if pools.get((stage, "full"), ("", ""))[1] == "None"
              and pools.get((stage, "swa"), ("", ""))[0] == "None"
              and pools[(stage, "full")][0] == pools[(stage, "swa")][1]]  # fmt: skip
    keep = [(c, t) for c, t in differences if not ((m := _POOL.match(t)) and m.group(1) in paired)]
    return keep, [t for c, t in differences if (c, t) not in keep]


def draft_answer(engine: str, version: str, row: dict[str, Any]) -> dict[str, Any]:
    """kvtop's draft terms for the row's draft config, planned beside its target at the row's layout."""
    target = DRAFT_TARGETS[row["config"]]
    case = {**{k: row[k] for k in ("tp", "kv_dtype", "gpu", "max_model_len")}, "config": target,
            **budget(ENGINES[engine])}  # fmt: skip
    draft = str(configs_by_name()[row["config"]].path)
    with mock.patch.object(kvtop_side, "config_path", lambda name: configs_by_name()[name].path):
        return kvtop_side.kvtop_draft_plan(engine, version, case, draft)


def _judge_draft(engine: str, version: str, row: dict[str, Any]) -> tuple[str, str]:
    """(verdict, detail) of a draft config the engine built as a class: its parameter bytes and cell against
    kvtop's draft weights and draft KV per token."""
    plan = draft_answer(engine, version, row)
    if plan["status"] != "ok":
        return KVTOP_REFUSES, plan["message"]
    built = sum(sum(stage["param_bytes"].values()) for stage in row["stages"])
    differences = []
    if plan["weights_bytes"] != built:
        differences.append(f"draft weights: kvtop {plan['weights_bytes']:,} B, engine {built:,} B "
                           f"({plan['weights_bytes'] - built:+,})")  # fmt: skip
    cell = row.get("cell_size")
    if cell and plan["kv_bytes_per_token"] != cell:
        differences.append(f"draft KV (B/token): kvtop {plan['kv_bytes_per_token']:,}, engine {cell:,}")
    return (DIFFERENT, differences[0]) if differences else (EQUAL, "judged as a draft beside its target")


def _unbooked_towers(row: dict[str, Any], checks: list[Any], plan: dict[str, Any]) -> tuple[str, str]:
    """(verdict, detail) of a row whose language model is equal but whose engine build holds towers outside
    kvtop's book (architectures.stage_checks' towers_bytes): TOWER_NOT_MODELLED where kvtop's plan names a tower
    not modelled, else DIFFERENT (kvtop's weights short by the towers and nothing said)."""
    check = next(c for c in checks if c.towers_bytes)
    param_bytes = row["stages"][check.stage]["param_bytes"]
    children = sorted(k for k in param_bytes if not architectures.is_language_child(k, param_bytes))
    towers = f"stage {check.stage} towers: kvtop 0 B, engine {check.towers_bytes:,} B ({', '.join(children)})"
    named = [note for note in plan.get("not_modelled", ()) if any(w in note.lower() for w in TOWER_WORDS)]
    if named:
        return TOWER_NOT_MODELLED, f"{towers}; kvtop: {named[0]}"
    return DIFFERENT, f"{towers}, kvtop's plan names no tower not modelled"


def _named_part(plan: dict[str, Any]) -> str | None:
    """kvtop's note naming a tower part not modelled where its book holds a tower row (compared, and equal), else
    None: the row is then PART_NOT_MODELLED rather than equal."""
    if not any(int(stage.get("vision_bytes", 0)) for stage in plan.get("stages", ())):
        return None
    return next((note for note in plan.get("not_modelled", ()) if OUT_OF_BOOK in note
                 and any(w in note.lower() for w in TOWER_WORDS)), None)  # fmt: skip


def judge(engine: str, version: str, row: dict[str, Any]) -> Judged:
    config = configs_by_name()[row["config"]]

    def out(verdict: str, detail: str = "") -> Judged:
        return Judged(engine, row["config"], config.architecture, config.real, row["tp"], verdict, one_line(detail),
                      config.reconstructed)

    engine_ok = row["status"] == "ok" and bool(row.get("stages"))
    if row["status"] == "harness-error" or (row["status"] == "ok" and not engine_ok):
        return out(NOT_BUILT, row.get("message", ""))
    if engine_ok and row["config"] in DRAFT_TARGETS:
        return out(*_judge_draft(engine, version, row))
    plan = kvtop_answer(engine, version, row)
    if plan["status"] != "ok":
        if row["status"] == "refused":
            return out(BOTH_REFUSE, f"engine: {row.get('message', '')}; kvtop: {plan['message']}")
        return out(KVTOP_REFUSES, plan["message"])
    if row["status"] == "refused":
        return out(ENGINE_REFUSES, row.get("message", ""))
    result = {**row, "variant": "default"}
    checks = stage_checks(result, engine, version, plan)
    differences = [(check, d) for check in checks for d in check.differences]
    if engine == "sglang" and row.get("cell_size") and row["cell_size"] != plan["cell_bytes"]:
        text = f"cell (KV B/token): kvtop {plan['cell_bytes']:,}, engine {row['cell_size']:,}"
        differences.append((checks[0], text))
    differences, paired = _window_pools_paired(differences)
    read = [(text, "A6", True) for text in paired]
    with ExitStack() as patched:  # every module that finds a config by name finds the sweep's (any folder)
        for module in (architectures, arch_readings, stage_check):
            patched.enter_context(mock.patch.object(module, "config_path", lambda name: configs_by_name()[name].path))
        for check, text in differences:
            rule, reading = arch_reading(config.architecture, check, text).split(" ", 1)
            read.append((text, rule, reading.startswith("harness:")))
    kvtop_side_ones = [(text, rule) for text, rule, harness in read if not harness]
    if not kvtop_side_ones and any(check.towers_bytes for check in checks):
        return out(*_unbooked_towers(row, checks, plan))
    if not kvtop_side_ones and (part := _named_part(plan)) is not None:
        return out(PART_NOT_MODELLED, f"tower row compared; kvtop: {part}")
    if not kvtop_side_ones:  # none, or each a reading of the comparison itself (A6, A7, A11), not of kvtop
        return out(EQUAL, "; ".join(sorted({f"harness reading {rule}" for _, rule, _ in read})))
    text, rule = kvtop_side_ones[0]
    return out(DIFFERENT, text + ("" if rule == "?" else f" — reading {rule}"))
