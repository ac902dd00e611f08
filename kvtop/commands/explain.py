"""`kvtop explain LOG`: reproduce the capacity an engine logged, step by step, and judge the match."""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kvtop.commands import SUMMARIES
from kvtop.commands.common import (
    add_calibration_store,
    add_hub_timeout,
    add_model_arguments,
    cmd_settings,
    engine_flags_help,
    gpu_from_args,
    hub_deadline,
    measured_from_args,
    total_origin_from_args,
)
from kvtop.commands.output import print_error, print_json, print_text, prose
from kvtop.commands.render_ledger import step_lines, unchecked_json
from kvtop.domain.capacity_assumption import assumption_words
from kvtop.domain.doc_refs import qualified
from kvtop.domain.engines.budget_step import BudgetStep
from kvtop.domain.engines.registry import display_name, display_names, engine_rules
from kvtop.domain.engines.stated_release import stated_release
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.explain import Explanation, explain, explain_unsolved
from kvtop.domain.explain_request import ExplainRequest
from kvtop.domain.explanation import (
    EstimatedInput,
    PoolPart,
    capacity_gap,
    findings_beside_verdict,
    step_source,
)
from kvtop.domain.launch import LOG_ONLY_FIELDS, LaunchSettings, check_parallel, parse_flags
from kvtop.domain.launch_line import parse_launch_command
from kvtop.domain.wording import with_the
from kvtop.sources.engines.registry import complete_settings
from kvtop.units import fmt_both, fmt_both_or_binary, fmt_bytes, fmt_gib, fmt_tokens


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "explain", help=SUMMARIES["explain"],
        epilog_fn=engine_flags_help, formatter_class=argparse.RawDescriptionHelpFormatter, allow_abbrev=False,
    )  # fmt: skip
    parser.add_argument(
        "log",
        help=f"an engine's startup log ({display_names()}; prefixes, ranks and colours do not matter), or - to "
        "read it from standard input (e.g. docker logs ENGINE 2>&1 | kvtop explain - --model M); the first 64 MiB are read",
    )
    add_model_arguments(parser, model_required=False)
    add_hub_timeout(parser)
    parser.add_argument("--json", action="store_true", help="print the stable JSON contract (one line)")
    add_calibration_store(parser)
    parser.set_defaults(handler=run, accepts_engine_flags=True)


def _args_as_flags(args: Mapping[str, Any]) -> list[str]:
    """A log's server_args / non-default args as engine flags (unknown keys are kept, not fatal)."""
    tokens: list[str] = []
    for key, value in args.items():
        if value is None or value is False or isinstance(value, (dict, list)):
            continue
        flag = "--" + key.replace("_", "-")
        tokens += [flag] if value is True else [flag, str(value)]
    return tokens


def _decisions(decisions: Sequence[str]) -> dict[str, Any]:
    """The sizing decisions the engine printed (`page_size=64`), as printed arguments."""
    out: dict[str, Any] = {}
    for decision in decisions:
        field, _, value = decision.partition("=")
        out[field] = True if value == "True" else value
    return out


def settings_typed_for_log(
    log_args: Mapping[str, Any],
    engine: str,
    extra: Sequence[str],
    model_ref: str | None,
    launch_command: str | None = None,
    cmd: str | None = None,
) -> tuple[LaunchSettings, frozenset[str]]:
    """The settings the engine ran with: a launch command pasted into the log, overridden by `--cmd` (the same kind
    of layer), overridden by the arguments the engine printed (what it resolved), overridden by the flags given
    here; and the fields those flags set (read once: explain refuses a typed layout the model cannot run,
    `_check_typed_layout`)."""
    launched = _launched(launch_command, engine)
    given_cmd = _cmd_settings(cmd, engine)
    if given_cmd is not None:
        launched = given_cmd if launched is None else launched.model_copy(
            update={**{f: getattr(given_cmd, f) for f in given_cmd.model_fields_set - {"flags"}},
                    "flags": {**launched.flags, **given_cmd.flags}}
        )  # fmt: skip
    from_log = parse_flags(engine, _args_as_flags(log_args))
    direct = parse_flags(engine, list(extra), strict=True)
    merged: dict[str, Any] = {
        "engine": engine,
        "flags": {**(launched.flags if launched else {}), **from_log.flags, **direct.flags},
    }
    for layer in (launched, from_log, direct):
        for field in (layer.model_fields_set if layer else set()) - {"engine", "flags"}:
            merged[field] = getattr(layer, field)
    if model_ref:
        merged["model"] = model_ref
    settings = complete_settings(LaunchSettings.model_validate(merged), Path.cwd())
    check_parallel(settings)
    return settings, frozenset(direct.model_fields_set)


def _launched(launch_command: str | None, engine: str) -> LaunchSettings | None:
    """The launch command's settings, if it is this engine's and its flags read cleanly."""
    if not launch_command:
        return None
    try:
        launched = parse_launch_command(launch_command)
    except (InputError, ValueError):  # a pasted line kvtop cannot read: the printed arguments still count
        return None
    return launched if launched is not None and launched.engine == engine else None


def _cmd_settings(cmd: str | None, engine: str) -> LaunchSettings | None:
    """`--cmd`: the operator's launch command (or its flags alone); unreadable, empty or another engine's is an
    error."""
    if cmd is None:
        return None
    launched = cmd_settings(cmd, engine)
    if launched.engine != engine:
        raise InputError(f"a {launched.engine} launch command, but the log is {engine}'s", field="--cmd")
    return launched


def _check_log_not_a_flag_value(log: str, extra: Sequence[str]) -> None:
    """An engine flag given before the log (`explain --engine-version 0.9 LOG`): argparse does not know the engine's
    flags, so the flag's value is read as the log and the log lands among the engine's flags; said as such, not as
    'no such file: 0.9'."""
    if log == "-" or Path(log).exists():
        return
    for index, token in enumerate(extra):
        if not token.startswith("-") and index and extra[index - 1].startswith("--") and "=" not in extra[index - 1]:
            if Path(token).is_file():
                flag = extra[index - 1]
                raise InputError(
                    f"{log!r} is no file: kvtop read {flag}'s value as the log (an engine's flags go after the "
                    f"log): kvtop explain {token} {flag} {log}, or write {flag}={log}",
                    field="log",
                )
            return


def run(args: argparse.Namespace, extra: Sequence[str]) -> int:
    from kvtop.sources.engine_logs import read_engine_log
    from kvtop.sources.hub import load_model

    _check_log_not_a_flag_value(args.log, extra)
    log = read_engine_log(args.log)
    engine = log.engine_for(args.engine)
    # the figures given are checked before the model is looked for: a bad --gpu or size is said first, not after
    measured = measured_from_args(args)
    gpu_total, gpu_name = gpu_from_args(args, measured) if (args.gpu is not None or args.gpu_memory is not None) else (None, None)
    decided = _decisions(log.decisions)
    measured_settings = {key: decided.pop(key) for key in LOG_ONLY_FIELDS if key in decided}  # the log's alone
    log_args = {**log.server_args, **log.engine_config, **decided}
    settings, typed = settings_typed_for_log(
        log_args, engine, extra, args.model or log.model_path, log.launch_command, args.cmd
    )
    settings = settings.model_copy(update=measured_settings)
    read_off_log = settings.engine_version is None  # no --engine-version and no version in the log's arguments
    if settings.engine_version is not None:
        version = stated_release(settings)
    else:
        version = engine_rules(engine).resolve_version(log)
        settings = settings.model_copy(update={"engine_version": version.text})
    if not settings.model:
        raise InputError(
            "the log names no model (no model path in its lines): pass --model PATH|PRESET|HUB_ID", field="--model"
        )
    given = measured.model_copy(update={"gpu_total_bytes": None})  # the GPU goes in as gpu_total
    # what the total is (the engine's, a larger memory variant's nvidia-smi total, the table's): as plan reads it
    origin = total_origin_from_args(args, gpu_name, gpu_total) if gpu_total is not None else None
    try:
        override = engine_rules(engine).config_override(settings, version)  # SGLang's --json-model-override-args
        model = load_model(settings.model, family=args.model_family, deadline_s=hub_deadline(args), override=override)
    except UnsupportedModelError as err:  # the log is still read: its figures and a refused start
        result = explain_unsolved(log, settings, str(err), version)
    except InputError as err:
        if args.model or settings.model != log.model_path or err.field != "--model":
            raise
        raise _log_model_unreadable(settings.model, err, args.log) from None
    else:
        _check_typed_layout(typed, model, settings)
        if read_off_log:  # the model may narrow a release the log's lines left open (`version_with_model`)
            version = engine_rules(engine).version_with_model(log, model, settings, version)
            settings = settings.model_copy(update={"engine_version": version.text})
        request = ExplainRequest(
            log=log, model=model, settings=settings, gpu_total_bytes=gpu_total, gpu_name=gpu_name, given=given,
            load_mtp=args.load_mtp, version=version, gpu_total_origin=origin,
        )  # fmt: skip
        result = explain(request)
    findings, result = _findings(result)
    if args.json:
        print_json(explanation_json(result, findings), indent=None, compact=True)
    else:
        print_text(explanation_text(result, findings, args.log))
    _remember_start(args, result, log.first_date)
    return 0


def _check_typed_layout(typed: frozenset[str], model: Any, settings: LaunchSettings) -> None:
    """A --tp typed here that the model cannot run on (`--tp 3` over 64 heads) is the operator's bad input, refused in
    one line as `plan` refuses it (`layout.validate_layout`), not a verdict that the log cannot be rebuilt (exit 0).
    Only where --tp is typed: the log's own TP may still come from its rank prefixes (explain's _with_prefix_tp)."""
    from kvtop.domain.layout import validate_layout
    from kvtop.domain.ledger import layout_from_settings

    if "tp" in typed:  # the fields the flags given here set (`settings_typed_for_log`)
        validate_layout(model, layout_from_settings(settings, model))


def _log_model_unreadable(model_ref: str, err: InputError, log_path: str) -> InputError:
    """The model the log names cannot be read here (a path of the engine's host, a hub out of reach): said as
    the log's, with how to pass --model, never as a --model the operator did not give."""
    from kvtop.sources.hub import CONFIG_NOT_FOUND, nearest_preset

    if err.detail == CONFIG_NOT_FOUND:
        preset = nearest_preset(model_ref)
        other = f"a preset ({preset}: that family and size)" if preset else "a preset"
        return InputError(  # the log's path first: "… or its hub id in LOG" read as a hub id inside the log
            f"{log_path} names the model {model_ref}, which is not on this machine: pass --model with its folder or "
            f"config.json here, {other}, or its hub id",
            field="log",
        )
    return InputError(f"{log_path} names the model {model_ref}: {err.detail}", field="log")


#: What explain says when the log measured no term a plan of the launch estimates (the store is left as it was).
NOTHING_KEPT = "calibration store: nothing kept from this start (its log singles out none of the terms a plan estimates)"


def _remember_start(args: argparse.Namespace, result: Explanation, log_date: str | None) -> None:
    """Keep what this start measured in the local calibration store (docs/calibration.md), unless it is off;
    a store that cannot be written says so on stderr in one line."""
    import datetime

    from kvtop.domain.calibration.node import measure_of_explanation
    from kvtop.sources.calibration_store import append_measure, store_disabled

    if store_disabled(args.no_calibration_store):
        return
    measure = measure_of_explanation(result, date=log_date or datetime.date.today().isoformat())
    notice = append_measure(measure) if measure is not None else NOTHING_KEPT
    for line in (notice, measure.note() if measure is not None else None):
        if line:
            print_error(line, prefix="note: ")


def _findings(result: Explanation) -> tuple[list[Any], Explanation]:
    """The findings the log alone supports (rules that need no live node), and the explanation with one note per
    finding left out because the verdict's cause already makes its change (so a reader sees where it went)."""
    if result.ledger is None:
        return [], result
    try:
        from kvtop.domain.capacity import CapacitySource
        from kvtop.domain.diagnose import diagnose_ledger
        from kvtop.domain.diagnose_findings import beside_engine_figure
    except ImportError:
        return [], result
    # a change the plan prices says so beside the capacity the log printed (`beside_engine_figure`)
    logged = result.logged.token_capacity
    every = [beside_engine_figure(f, logged, CapacitySource.LOGGED) for f in diagnose_ledger(result.ledger)]
    kept = findings_beside_verdict(result, every)
    folded = [
        f"finding “{finding.title}” ({finding.fix}) folded into the verdict: its change is one the cause names as "
        "rebuilding the logged figures"
        for finding in every
        if finding not in kept
    ]
    return list(kept), result.model_copy(update={"notes": (*result.notes, *folded)}) if folded else result


def explanation_json(result: Explanation, findings: Sequence[Any] = ()) -> dict[str, Any]:
    out: dict[str, Any] = {
        "engine": result.engine,
        "engine_version": result.engine_version.text,
        "version_source": result.engine_version.source.value,
        "version_detail": result.engine_version.detail,
        "logged": result.logged.model_dump(),
        "predicted": {
            "token_capacity": result.token_capacity, "token_capacity_min": result.token_capacity_min,
            "token_capacity_max": result.token_capacity_max, "kv_bytes_per_token": result.kv_bytes_per_token,
        },
        "verdict": result.verdict, "gap_tokens": result.gap_tokens, "gap_bytes": result.gap_bytes,
        "gap": gap.as_json() if (gap := capacity_gap(result)) is not None else None,
        "pool_gap_bytes": result.pool_gap_bytes,
        "cause": result.cause, "missing": list(result.missing), "startup_error": result.startup_error,
        "pool_checks": [c.model_dump() for c in result.pool_checks], "notes": list(result.notes),
        "log_cut_at_bytes": result.log_cut_at_bytes,
        "capacity_verdict": result.capacity_verdict, "unsolved": result.unsolved,
        "estimated": result.estimated.model_dump() if result.estimated else None,
        "steps": [s.model_dump() for s in result.ledger.engine.steps] if result.ledger else [],
        "config_format": (result.ledger.model.config_format or None) if result.ledger else None,
        "read_from": list(result.ledger.model.read_from) if result.ledger else [],
        "unchecked_class": unchecked_json(result.ledger.model.unchecked_class) if result.ledger else None,
        "not_modelled": list(result.ledger.not_modelled) if result.ledger else [],
    }  # fmt: skip
    if findings:
        out["findings"] = [f.model_dump(mode="json", exclude={"fix_settings"}) for f in findings]
    return out


def explanation_text(result: Explanation, findings: Sequence[Any], source: str) -> str:
    lines = [f"{source}: {display_name(result.engine)} log · rules of {result.engine_version.label} ({result.engine_version.detail})"]
    if result.startup_error is not None:
        lines.append(f"  the engine refused to start: {result.startup_error}")
    logged = result.logged
    if logged.token_capacity is not None:
        lines.append(f"  logged capacity      {fmt_tokens(logged.token_capacity)} tokens")
        if logged.capacity_assumption is not None:
            lines.append(f"  {'':<20} ({assumption_words(logged.capacity_assumption)})")
    draft = logged.draft_weights_bytes is not None  # a draft's load is its own step: free after load is after both
    for label, value in (("free before load", logged.free_before_load_bytes), (logged.weights_label, logged.weights_bytes),
                         ("free after target", logged.free_after_target_load_bytes), ("draft weights", logged.draft_weights_bytes),
                         ("free after all loads" if draft else "free after load", logged.free_after_load_bytes),
                         ("available KV memory", logged.available_kv_bytes)):  # fmt: skip
        if value is not None:
            lines.append(f"  {label:<20} {fmt_both(value)}")
    if logged.available_kv_bytes is not None and logged.ranks_seen > 1:
        lines.append(f"  {'':<20} (the least over {logged.ranks_seen} ranks, {logged.available_kv_rank}: "
                     "the engine sizes every rank's pool from the tightest)")  # fmt: skip
    if result.log_cut_at_bytes is not None:
        lines.append(prose("  note: ", f"the log is longer than kvtop reads: only its first {fmt_bytes(result.log_cut_at_bytes)} "
                           "were parsed (a restart after that is not in this explanation: cut the log to the start you want)"))  # fmt: skip
    read = result.ledger.model.reading_notes if result.ledger is not None else ()
    unmodelled = result.ledger.not_modelled if result.ledger is not None else ()  # `plan`'s words, one list
    for note in (*read, *result.notes, *(f"not modelled: {n}" for n in unmodelled)):
        lines.append(prose("  note: ", note))
    if result.ledger is not None:
        lines.append("Recomputed with the engine's rules (central values):")
        lines += _steps_text(result.ledger.engine.steps)
        source = (
            f"from the estimated {result.estimated.label}'s {result.estimated.source} range"
            + "".join(f" and the error of {with_the(other.label)} ({other.error_said} {other.source})"
                      for other in result.estimated.others)
            if result.estimated is not None
            else "from the log's 2-decimal rounding"
        )
        lines.append(f"  predicted            {fmt_tokens(result.token_capacity or 0)} tokens "
                     f"(interval {fmt_tokens(result.token_capacity_min or 0)}–{fmt_tokens(result.token_capacity_max or 0)} "
                     f"{source})")  # fmt: skip
    for check in result.pool_checks:
        mark = "ok" if check.within_rounding else "DIFFERS"
        if check.unit != "GiB":  # a block as the engine prints it (LMDeploy's TurboMind: MiB)
            lines.append(f"  {check.name} size: logged {check.logged_text} {check.unit}, predicted {check.rows:,} tokens × "
                         f"{check.predicted_bytes_per_token:,} B = {check.predicted_bytes:,} B  {mark}")  # fmt: skip
            continue
        lines.append(f"  {check.name} size: logged {check.logged_text} GiB, predicted (#tokens {check.tokens:,} + page) × bytes "
                     f"= {fmt_gib(check.predicted_bytes, 3)}  {mark}")  # fmt: skip
    lines.append(verdict_line(result))
    for finding in findings:
        lines.append(f"finding [{finding.severity}] {finding.title}: {finding.fix}")
    return qualified("\n".join(lines), result.engine)  # a "§N" names the engine's doc


def _steps_text(steps: Sequence[BudgetStep]) -> list[str]:
    """Each budget step: its label, figure and where the figure came from (measured, calibrated, assumed; a
    default or stand-in in its label; `step_lines`), then its note (the log line it was read from, the term's basis) indented
    beneath, wrapped to 100 columns."""
    lines: list[str] = []
    for step in steps:  # the figures in one column: a long label wraps within its own (`step_lines`)
        lines += step_lines(step, step_source(step))
        if step.note:
            lines += textwrap.wrap(step.note, 100, initial_indent="      ↳ ", subsequent_indent="        ")
    return lines


def verdict_line(result: Explanation) -> str:
    """The one-line verdict: what kvtop concludes, and what it rests on (an estimate, a refusal)."""
    estimated = result.estimated
    with_estimate = " with an estimated input" if estimated is not None else ""
    if result.verdict == "match":
        line = f"verdict: MATCH{with_estimate} — the logged capacity lies inside the predicted interval"
        return line + (f": {_implied(estimated)}" if estimated is not None else "")
    if (outside := capacity_gap(result)) is not None:
        # the figure is the distance to the interval's nearer end, said so with the plan's centre beside it
        # (`CapacityGap.words`); the bytes are the tokens at kvtop's own cell (`Explanation.gap_bytes`), which a
        # geometry mismatch says is wrong: named, so a gap of 94.92 GiB on a 16 GiB card reads as what it is
        at = f"{fmt_both(result.gap_bytes or 0)} at kvtop's {result.kv_bytes_per_token or 0:,} B per token"
        return f"verdict: MISMATCH{with_estimate} by {outside.words()}; that gap is {at}: {result.cause}"
    if result.verdict == "mismatch":
        gap = result.pool_gap_bytes or 0
        agree = " (the token counts agree, which proves nothing here)" if result.gap_tokens == 0 else ""
        if not gap and result.cause:  # the printed sizes agree: the cause (another model's layers) is the finding
            return f"verdict: MISMATCH{agree} — {result.cause}"
        printed = "block" if any(check.name is PoolPart.BLOCK for check in result.pool_checks) else "KV pool"
        # a block's gap is MiB: in GB and GiB at 2 decimals it read '0.00 GB (0.00 GiB) larger'
        return (f"verdict: MISMATCH{agree} — the logged {printed} is {fmt_both_or_binary(abs(gap))} "
                f"{'smaller' if gap < 0 else 'larger'} than predicted. {result.cause}")  # fmt: skip
    if result.verdict == "failed_start":
        return "verdict: FAILED START — " + _refusal_said(result)
    if result.unsolved is not None:
        return f"verdict: INSUFFICIENT — kvtop cannot rebuild this log: {result.unsolved}"
    return "verdict: INSUFFICIENT — the log lacks: " + "; ".join(result.missing)


def _implied(estimated: EstimatedInput) -> str:
    """'free memory before the weights load ≈ 23.25 GiB implied (kvtop's estimate 22.99 GiB: …)'."""
    implied = (
        f"≈ {fmt_gib(estimated.implied_bytes)} implied" if estimated.implied_bytes is not None else "not implied"
    )
    return (f"{estimated.label} {implied} (kvtop's estimate {fmt_gib(estimated.value_bytes)}: "
            f"{estimated.basis})")  # fmt: skip


def _refusal_said(result: Explanation) -> str:
    """A refused start, and how the capacity the engine printed before it rebuilds."""
    tokens = result.logged.token_capacity
    if not tokens or result.capacity_verdict is None:
        if tokens == 0:
            return "the engine sized a KV pool of 0 tokens, with which it cannot start"
        if tokens is None and result.token_capacity is not None:  # its KV memory logged, no capacity printed
            rebuilt = ("kvtop's rules refuse too (0 tokens: one request does not fit)" if result.token_capacity == 0
                       else f"kvtop's rules give {fmt_tokens(result.token_capacity)} tokens")  # fmt: skip
            return f"the engine refused to start after logging its KV memory, with no capacity printed; from it {rebuilt}"
        return "the engine refused to start, so it printed no KV capacity to rebuild"
    rebuilt = {
        "match": "kvtop rebuilds it (inside the predicted interval)",
        "mismatch": f"kvtop does not rebuild it ({result.cause})" if result.cause else "kvtop does not rebuild it",
        "insufficient": f"kvtop cannot rebuild it: {result.unsolved}" if result.unsolved
        else "kvtop cannot rebuild it (the note says what that needs)",
    }[result.capacity_verdict]
    return f"the engine refused to start after sizing its KV pool at {fmt_tokens(tokens)} tokens; {rebuilt}"
