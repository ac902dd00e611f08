"""`kvtop plan --compare`: a Comparison as the stable JSON contract and as a side-by-side table."""

from __future__ import annotations

import shlex
from typing import Any

from kvtop.commands.output import prose
from kvtop.commands.render_launch import engine_config_json, launch_json
from kvtop.commands.render_ledger import flags_not_read_json, gpu_shown
from kvtop.commands.render_notes import config_default_notes, unmodelled_notes
from kvtop.domain.compare import Comparison, EngineRow, NotStarting, SameBudget, SameBudgetMethod
from kvtop.domain.doc_refs import qualified
from kvtop.domain.engines.registry import display_name
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.launch_change import launch_words
from kvtop.domain.launch_notes import unread_measured_flags
from kvtop.domain.model import ModelSpec
from kvtop.units import fmt_both, fmt_both_or_binary, fmt_tokens

_METHOD_NOTES = {
    SameBudgetMethod.ABSOLUTE: "",
    SameBudgetMethod.SHARE: "  (share searched: no absolute setting reaches it)",
    SameBudgetMethod.MOST: "  (falls short: its largest share)",
}


def row_json(row: EngineRow) -> dict[str, Any]:
    return {
        "engine": row.engine,
        "engine_version": row.version.text,
        "version_source": row.version.source.value,
        "memory_fraction_flag": row.memory_fraction_flag,
        "memory_fraction": row.memory_fraction,
        "memory_fraction_source": row.memory_fraction_source,
        "memory_fraction_of": row.memory_fraction_of,
        "capacity_setting": row.capacity_setting,
        "kv_cache_dtype": row.kv_cache_dtype,
        "kv_budget_bytes": row.kv_budget_bytes,
        "kv_bytes_per_token": row.kv_bytes_per_token,
        "token_capacity": row.token_capacity,
        # the plan's interval, as `plan --engine X --json` gives it
        "token_capacity_min": row.token_capacity_min,
        "token_capacity_max": row.token_capacity_max,
        "kv_budget_min_bytes": row.kv_budget_min_bytes,
        "kv_budget_max_bytes": row.kv_budget_max_bytes,
        "interval_kind": row.interval_kind.value if row.interval_kind else None,
        "max_running_requests": row.max_running_requests,
        "fits": row.fits,
        # the launch as `plan --json` writes it (render_launch): the line, the file it names (TensorRT-LLM), the env
        "engine_flags": list(row.launch.line) if row.launch else [],
        "engine_config": engine_config_json(row.launch) if row.launch else None,
        "engine_env": dict(row.launch.env) if row.launch else {},
        "error": row.error,
        # the measured inputs given that this engine's rule does not read (`plan --json`'s `flags_not_read` entries)
        "flags_not_read": [flag.model_dump() for flag in unread_measured_flags(row.inputs_not_read)],
        "notes": list(row.notes),  # `plan --json`'s engine notes and not_modelled, row by row
        "not_modelled": list(row.not_modelled),
    }


def same_budget_json(same: SameBudget) -> dict[str, Any]:
    return {
        "engine": same.engine,
        "method": same.method.value if same.method else None,
        "flags": list(same.flags),
        **launch_json(same.launch),  # engine_flags, engine_config, engine_env: `plan --json`'s, as the engines rows'
        "kv_budget_bytes": same.kv_budget_bytes,
        "token_capacity": same.token_capacity,
        "token_capacity_min": same.token_capacity_min,
        "token_capacity_max": same.token_capacity_max,
        "reached": same.reached,
        "fits": same.fits,
        "shortfall_bytes": same.shortfall_bytes,
        "not_starting": same.not_starting.value if same.not_starting else None,
        "starts_at_context": same.starts_at_context,
        "error": same.error,
    }


def comparison_json(comparison: Comparison, launch: LaunchSettings) -> dict[str, Any]:
    """The comparison, and the flags of the `launch` compared (as typed) that kvtop did not read, as `plan --json`."""
    c = comparison
    return {
        "model": c.model_name,
        "gpu": {"name": c.gpu_name, "total_bytes": c.gpu_total_bytes},
        "layout": c.layout.model_dump(exclude={"dcp_splits_kv_heads", "experts_over_replicas"}) | {"gpus": c.layout.gpus},  # an engine's rule
        "context_length": c.context_length,
        "kv_cache_dtype": c.kv_cache_dtype,
        "reference": c.reference,
        "engines": [row_json(row) for row in c.rows],
        "target_kv_budget_bytes": c.target_kv_budget_bytes,
        "same_budget": [same_budget_json(same) for same in c.same_budget],
        "not_carried": list(c.not_carried),
        "flags_not_read": flags_not_read_json(launch),
    }


def _share(value: float) -> str:
    return f"{round(value, 3):g}"


def _setting(row: EngineRow) -> str:
    """The setting that sized the row's cache: the engine's own words where no share does, else its share."""
    return row.capacity_setting or f"{row.memory_fraction_flag} {_share(row.memory_fraction or 0.0)}"


def _engine_line(row: EngineRow) -> str:
    name = f"{display_name(row.engine)} {row.version.label}"
    if row.error is not None:
        return f"  {name:<21}{row.error}"
    setting = _setting(row)
    per_token = f"{row.kv_bytes_per_token or 0:,} B {row.kv_cache_dtype}"
    return (
        f"  {name:<21}{setting:<42}{fmt_both(row.kv_budget_bytes or 0):>22}  {per_token:<16}"
        f"{fmt_tokens(row.token_capacity or 0):>13}{_interval(row.token_capacity_min, row.token_capacity_max):>25}"
        f"{row.max_running_requests or 0:>10,}  {'yes' if row.fits else 'no'}"
    )


def _interval(low: int | None, high: int | None) -> str:
    """A row's interval per rank, both ends as `plan`'s Interval line gives them."""
    return f"{fmt_tokens(low or 0)} – {fmt_tokens(high or 0)}"


def _same_line(same: SameBudget) -> str:
    name = display_name(same.engine)
    if same.error is not None or same.method is None:
        return f"  {name:<15}{same.error}"
    # the launch as the engine takes it (TensorRT-LLM's YAML keys beside serve's options), never kvtop's own spelling
    flags = launch_words(same.launch) if same.launch is not None else shlex.join(same.flags)
    return (
        f"  {name:<15}{fmt_both(same.kv_budget_bytes):>22}{fmt_tokens(same.token_capacity):>17}"
        f"{_interval(same.token_capacity_min, same.token_capacity_max):>25}  "
        f"{flags}{_METHOD_NOTES[same.method]}{_not_starting(same)}"
    )


def _not_starting(same: SameBudget) -> str:
    """Why a re-solved row holds the budget yet 0 tokens, in the domain's words for it (`SameBudget.not_starting`)."""
    if same.not_starting is None:
        return ""
    short = f"{fmt_both_or_binary(same.shortfall_bytes)} short per rank" if same.shortfall_bytes else ""
    if same.not_starting is NotStarting.CONTEXT:
        starts = f"; a context of {same.starts_at_context:,} or less starts" if same.starts_at_context else ""
        return f"  (does not start at this context{': ' + short if short else ''}{starts})"
    if same.not_starting is NotStarting.WEIGHTS:
        return f"  (does not start: the weights and the runtime leave no KV memory{'; ' + short if short else ''})"
    return f"  (does not start{': ' + short if short else ''})"


def notes_lines(comparison: Comparison, model: ModelSpec) -> list[str]:
    """The plans' 'note: …' lines, each said once: the config's (every row's), then each row's own notes and what
    it leaves out (`EngineRow.notes`, `.not_modelled`), naming the engines that carry one where not every row does."""
    rows = comparison.rows
    carried: dict[str, list[str]] = {}  # a note's words -> the engines whose plans carry it
    for row in rows:
        for note in (*row.notes, *unmodelled_notes(row.not_modelled)):
            carried.setdefault(qualified(note, row.engine), []).append(display_name(row.engine))
    lines = [prose("note: ", note) for note in (*model.reading_notes, *config_default_notes(model))]
    for note, engines in carried.items():
        lines.append(prose(f"note{'' if len(engines) == len(rows) else ' (' + ', '.join(engines) + ')'}: ", note))
    return lines


def comparison_text(comparison: Comparison, model: ModelSpec) -> str:
    c = comparison
    dtype = "auto (each engine's default)" if c.kv_cache_dtype == "auto" else c.kv_cache_dtype
    lines = [
        f"{c.model_name}  ·  {c.layout.describe()} on {c.layout.gpus}× {gpu_shown(c.gpu_name, c.gpu_total_bytes, c.gpu_total_origin)}"
        f"  ·  KV {dtype}  ·  context {c.context_length:,}",
        "",
        f"  {'engine (rules)':<21}{'memory setting (default)':<42}{'KV budget per rank':>22}  {'KV per token':<16}"
        f"{'tokens per rank':>13}{'interval':>25}{'max reqs':>10}  fits",
    ]
    lines += [_engine_line(row) for row in c.rows]
    solved = [row for row in c.rows if row.error is None]
    if solved:
        lines += ["", "What each memory setting is a share of (why one share gives each engine a different cache):"]
        for row in solved:
            lines.append(f"  {display_name(row.engine):<15}{row.memory_fraction_of}")
            lines.append(f"  {'':<15}{_setting(row)}: {row.memory_fraction_source}")
    reference = display_name(c.reference)
    if c.target_kv_budget_bytes is None:
        lines += ["", f"Same KV budget: {reference} holds no KV budget for this launch, so there is none to match"]
    elif c.same_budget:
        lines += [
            "",
            f"Same KV budget per rank as {reference}, {fmt_both(c.target_kv_budget_bytes)}, "
            "re-solved under each engine's rules:",
            f"  {'engine':<15}{'KV memory per rank':>22}{'tokens per rank':>17}{'interval':>25}  flags",
        ]
        lines += [_same_line(same) for same in c.same_budget]
    if c.not_carried:
        lines.append(prose("note: ", f"not carried to the other engines (this launch's own; each other engine is solved at its defaults): {' '.join(c.not_carried)}"))
    notes = notes_lines(c, model)
    return "\n".join([*lines, *([""] if notes and not c.not_carried else []), *notes])
