"""A Ledger as the stable JSON contract and as a human table (units formatted here, at the edge)."""

from __future__ import annotations

from typing import Any

from kvtop.commands.columns import column_rows
from kvtop.commands.output import prose
from kvtop.commands.render_deployment import deployment_json, deployment_lines, term_json
from kvtop.commands.render_launch import (
    LAUNCH_HEADS,
    engine_config_json,
    engine_launch_json,
    engine_launch_lines,
    launch_said,
)
from kvtop.commands.render_notes import plan_notes
from kvtop.domain.calibration.estimate import CapacityPlan, IntervalKind
from kvtop.domain.calibration.terms import TermEstimate
from kvtop.domain.doc_refs import qualified
from kvtop.domain.engines.budget_step import BudgetStep
from kvtop.domain.engines.measured_reads import MeasuredNotRead
from kvtop.domain.engines.registry import display_name
from kvtop.domain.fit import FittingLayout
from kvtop.domain.gpu_total_origin import GpuTotalOrigin, memory_variant_note, total_said
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.launch_change import set_words, setting_names
from kvtop.domain.launch_check import architecture_check
from kvtop.domain.launch_notes import ignored_flags, unread_measured_flags
from kvtop.domain.ledger import Ledger, RankLedger
from kvtop.domain.ledger_words import component_words
from kvtop.domain.neutral_flags import memory_neutral_flags
from kvtop.domain.request_capacity import RequestCapacity, RequestInterval
from kvtop.domain.unchecked_class import UncheckedClass
from kvtop.domain.weights import WeightRow
from kvtop.domain.wording import number
from kvtop.units import (
    MIB,
    fmt_both,
    fmt_both_or_binary,
    fmt_both_or_exact,
    fmt_bytes,
    fmt_gib,
    fmt_spread,
    fmt_tokens,
)

#: Unused budget below this is page rounding, not worth a word in the summary (JSON gives it exactly).
UNUSED_SHOWN = 256 * MIB


def pool_token(name: str) -> str:
    """What one token of a token pool is: a cross pool's rows follow the encoder's tokens (kv.py `KvPool.name`)."""
    return "encoder token" if name == "cross" else "token"


def rank_json(rank: RankLedger) -> dict[str, Any]:
    return {
        "rank": rank.rank, "gpu_index": rank.gpu_index, "dp_rank": rank.dp_rank, "pp_rank": rank.pp_rank,
        "tp_rank": rank.tp_rank, "layers": list(rank.layers), "weights_bytes": rank.weights_bytes,
        "kv_bytes_per_token": rank.kv_bytes_per_token, "kv_cell": rank.kv_cell.model_dump() if rank.kv_cell else None,
        "kv_pool_bytes": rank.kv_pool_bytes, "state_pool_bytes": rank.state_pool_bytes, "req_to_token_bytes": rank.req_to_token_bytes,
        "reserve_bytes": rank.reserve_bytes, "context_bytes": rank.context_bytes, "context_source": rank.context_source,
        "context_error_bytes": rank.context_error_bytes, "driver_reserved_bytes": rank.driver_reserved_bytes,
        "token_capacity": rank.token_capacity,
        "weights": [row.model_dump() for row in rank.weights.rows],
        "kv_pools": [pool.model_dump(exclude={"row_shape", "tensors_per_layer", "torch_dtype"})
                     | {"bytes_per": "request" if pool.per_request else pool_token(pool.name)} for pool in rank.kv.pools],
        "resident_terms_bytes": rank.resident_terms_bytes, "terms": [term_json(term) for term in rank.terms],
    }  # fmt: skip


def ledger_json(ledger: Ledger) -> dict[str, Any]:
    e = ledger.engine
    return {
        "engine": e.engine, "engine_version": ledger.version.text, "version_source": ledger.version.source.value,
        "version_detail": ledger.version.detail, "model": ledger.model.name, "model_source": ledger.model.source,
        "layout": ledger.layout.model_dump() | {"gpus": ledger.layout.gpus, "attn_tp": ledger.layout.attn_tp}
        | ({"world": ledger.layout.world} if ledger.layout.world is not None else {}),
        "gpu": {"name": ledger.gpu_name, "total_bytes": ledger.gpu_total_bytes, "total_is": total_is(ledger),
                "memory_variant": memory_variant_note(ledger.gpu_name, ledger.shown_total_origin),
                "engine_total_bytes": ledger.engine_total_bytes, "engine_total_source": ledger.engine_total_source},
        "kv_cache_dtype": ledger.kv_format, "context_length": ledger.context_length, "page_size": e.page_size,
        "token_capacity": e.token_capacity, "swa_token_capacity": e.swa_token_capacity,
        "kv_bytes_per_token": ledger.kv_bytes_per_token, "kv_bytes_per_token_exact": ledger.kv_bytes_per_token_exact,
        "kv_cell": ledger.kv_cell.model_dump() if ledger.kv_cell else None, "weights_bytes": ledger.weights_bytes,
        "max_running_requests": e.max_running_requests, "max_concurrency": e.max_concurrency,
        "requests_at_context_length": ledger.requests_at_context_length,
        "num_blocks": e.num_blocks, "kv_budget_bytes": e.kv_budget_bytes, "kv_pool_bytes": e.kv_pool_bytes,
        "reserve_bytes": e.reserve_bytes, "unused_budget_bytes": e.unused_budget_bytes, "reserve_needed_bytes": e.reserve_needed_bytes,
        "reserve_short_bytes": e.reserve_short_bytes,
        "memory_fraction": {"value": e.memory_fraction, "source": e.memory_fraction_source},
        "fits": e.fits, "shortfall_bytes": e.shortfall_bytes, "tokens_per_gib": ledger.tokens_per_gib,
        "steps": [step.model_dump() for step in e.steps], "notes": list(ledger.notes),
        "not_modelled": list(ledger.not_modelled), "checkpoint_bytes": ledger.model.checkpoint_bytes,
        "config_defaults_used": [d.said for d in (*ledger.model.defaults_used, *ledger.model.assumed_defaults)],
        "config_nominal_defaults": [d.said for d in ledger.model.nominal_defaults],
        "config_format": ledger.model.config_format or None, "read_from": list(ledger.model.read_from),
        "unchecked_class": unchecked_json(ledger.model.unchecked_class),
        # the launch as the engine takes it: its own options (TensorRT-LLM: trtllm-serve's), where those are not the
        # whole of it the config file the line names and the build's flags (`engine_config`, null for the others), and
        # the environment it set that a rule read (`engine_env`, set before the server's command)
        **engine_launch_json(ledger.settings),
        # the launch's flags kvtop did not read (a script sees what the stderr note says)
        "flags_not_read": flags_not_read_json(ledger.settings, e.inputs_not_read),
        "deployment": deployment_json(ledger),
        "request_capacity": _request_json(ledger.request_capacity),
        "ranks": [rank_json(rank) for rank in ledger.ranks],
    }  # fmt: skip


def flags_not_read_json(settings: LaunchSettings, unread: tuple[MeasuredNotRead, ...] = ()) -> list[dict[str, Any]]:
    """The launch's flags kvtop did not read (`launch_notes.ignored_flags`, what the stderr note says), then the
    measured figures given that the engine's rule does not read (`unread`, said in the notes too): `plan --json`,
    `--compare --json` and `--layouts --json` all carry it, so a script sees them whichever it ran."""
    flags = (*ignored_flags(settings), *unread_measured_flags(unread))
    return [flag.model_dump(exclude=None if flag.rule else {"rule"}) for flag in flags]  # `rule`: a rule's unread only


def unchecked_json(found: UncheckedClass | None) -> dict[str, Any] | None:
    """The config's class read through an entry that does not list it (`UncheckedClass`, with its note); null
    where the class is checked or read generically (a generic reading says so in `not_modelled`)."""
    return None if found is None else found.model_dump() | {"note": found.said}


def _request_json(capacity: RequestCapacity | None) -> dict[str, Any] | None:
    """An attention-free model's capacity in requests (`token_capacity` is then the engine's token pool, bounded by
    no memory: `tokens`); None for a model that plans KV tokens."""
    return None if capacity is None else capacity.model_dump(mode="json")


def _distinct_ranks(ledger: Ledger) -> list[tuple[str, RankLedger]]:
    """One representative per pipeline stage: TP ranks of a stage hold the same books."""
    seen: dict[int, list[int]] = {}
    for rank in ledger.ranks:
        seen.setdefault(rank.pp_rank, []).append(rank.rank)
    out = []
    for pp_rank, members in seen.items():
        rank = ledger.ranks[members[0]]
        label = f"ranks {members[0]}–{members[-1]}" if len(members) > 1 else f"rank {members[0]}"
        out.append((label + (f" (PP stage {pp_rank})" if ledger.layout.pp > 1 else ""), rank))
    return out


def _kv_heading(label: str, rank: RankLedger) -> list[str]:
    """The rank's bytes per token as the capacity divides by them; where the engine solves with its own cell,
    that cell and its fixed state, and the book's pools below it named for what they are (raw rows per layer)."""
    cell = rank.kv_cell
    if cell is None:
        return [f"KV per token per rank — {label}: {rank.kv_bytes_per_token:,} B ({fmt_bytes(rank.kv_bytes_per_token)})"]
    if cell.request_pages:  # the engine counts requests of pages, not bytes a token: said in whole figures
        lines = [
            f"KV per max-length request per rank — {label}: {cell.request_pages:,} blocks × {cell.page_bytes:,} B = "
            f"{cell.request_bytes:,} B ({fmt_bytes(cell.request_bytes)}) for {cell.request_tokens:,} tokens ({cell.counts}); "
            f"tokens = int(blocks ÷ {cell.request_pages:,} × {cell.request_tokens:,})"
        ]
    else:
        lines = [f"KV {cell.unit} per rank — {label}: {cell.bytes_per_token:,.2f} B ({cell.counts})"]
    if cell.fixed_bytes:
        lines.append(f"  + {fmt_both(cell.fixed_bytes)} fixed before any token: {cell.fixed_what}")
    lines.append("  the book's raw rows per layer-token (the cell above folds them):")
    return lines


def step_lines(step: BudgetStep, tail: str) -> list[str]:
    """A budget step's row (`column_rows`): its figure in one column, then `tail` (where it came from)."""
    return column_rows(step.label, f"{step_figure(step):>30}  {tail}")


def step_figure(step: BudgetStep) -> str:
    """A budget step's figure as `plan` and `explain` print it: '17.64 GB (16.43 GiB)' beside '− weights'. A
    label that states the sign ('− …', '+ …') is followed by the size alone (not '− weights  −17.64 GB'); a
    step whose bytes run against its label's sign shows its own sign, so nothing is hidden. The glyph read is the
    one printed beside the figure, not a meaning: the sign of the figure is its bytes', and a typed sign beside
    the label would be a second statement of what the printed label already says (one that could disagree). Every
    step carries bytes or a value (`BudgetStep` refuses one of neither)."""
    if step.bytes is None:
        assert step.value is not None  # `BudgetStep._has_a_figure`: the one or the other
        return number(step.value)
    size = step.bytes  # under 0.01 GB in whole bytes (`fmt_both_or_exact`): '0.00 GB (0.00 GiB)' would hide it
    stated = "−" if step.label.startswith("−") else "+" if step.label.startswith("+") else None
    if stated is None:
        return fmt_both_or_exact(size)
    against = size != 0 and (stated == "−") == (size > 0)  # '− x' of a positive size adds: said, not hidden
    if not against:
        return fmt_both_or_exact(abs(size))
    # its own sign on both units ('−3.22 GB (−3.00 GiB)', as a signless label's), never on the GB alone
    return f"+{fmt_both_or_exact(size)}" if size > 0 else fmt_both_or_exact(size)


def capacity_lines(ledger: Ledger) -> list[str]:
    """The block under the budget: tokens, pool, requests, concurrency and exchange rate, or the shortfall."""
    e, lines = ledger.engine, []
    requests = ledger.request_capacity
    if requests is not None:
        return request_lines(ledger, requests)
    if e.fits:
        lines.append(f"Token capacity      {fmt_tokens(e.token_capacity)} tokens per rank"
                     + (f" (SWA pool {fmt_tokens(e.swa_token_capacity)})" if e.swa_token_capacity else ""))  # fmt: skip
        unused = e.unused_budget_bytes
        # a zero reserve (LMDeploy, llama.cpp size the pool from free memory alone) is no step: not '0.00 GB (0.00 GiB)'
        reserve = f"; runtime reserve {fmt_both_or_binary(e.reserve_bytes)}" if e.reserve_bytes else ""
        lines.append(
            f"KV pool             {fmt_both(e.kv_pool_bytes)} per rank{reserve}"
            + (f"; unused budget {fmt_both(unused)} (a cap or a fixed KV size leaves it)" if unused >= UNUSED_SHOWN else "")
        )
        lines.append(f"Max running reqs    {e.max_running_requests:,}")
        if e.max_concurrency is not None:
            lines.append(
                f"Max concurrency     {e.max_concurrency:.2f}x at {ledger.context_length:,} tokens per request"
            )
        elif (full_context := ledger.requests_at_context_length) is not None:
            lines.append(f"Full-context reqs   {full_context:.2f} requests of {ledger.context_length:,} tokens fit")
        lines.append(f"Exchange rate       {ledger.tokens_per_gib:,.0f} tokens per GiB of KV budget")
    else:  # a block count's refusal where memory holds the blocks: no shortfall to show (`count_refusal`)
        lines.append(f"DOES NOT FIT: {e.count_refusal or f'short by {fmt_both_or_binary(e.shortfall_bytes)} per rank'} "
                     "(token capacity 0)")  # fmt: skip
    return lines


def request_lines(ledger: Ledger, capacity: RequestCapacity) -> list[str]:
    """An attention-free model's block: requests (each a fixed state), and tokens bounded by no memory."""
    e = ledger.engine
    return [
        f"Request capacity    {capacity.requests:,} requests per rank (attention-free: a fixed state of "
        f"{capacity.state_bytes_per_request:,} B ({fmt_bytes(capacity.state_bytes_per_request)}) each, no KV per token)",
        f"  state slots       {capacity.requests_fit:,} fit in the state pool; the engine caps running requests at "
        f"{capacity.engine_cap:,}",
        f"Token capacity      not bounded by memory (the engine's own token figure: {fmt_tokens(capacity.token_pool)})",
        f"State pool          {fmt_both(e.kv_pool_bytes)} per rank; runtime reserve {fmt_both(e.reserve_bytes)}",
    ]


def _book_cells(row: WeightRow) -> str:
    """Params, bytes per param and shards; '—' for a row the book did not count in parameters (the calibrated
    bytes beyond the book), never '0  0.000' beside bytes it holds."""
    if not row.params and row.bytes:
        return f"{'—':>16}{'—':>9}{'—':>8}"
    return f"{row.params:>16,}{row.bytes_per_param:>9.3f}{row.shards:>8}"


def gpu_shown(name: str | None, total_bytes: int, origin: GpuTotalOrigin | None) -> str:
    """'H100 (79.65 GiB, nvidia-smi's total)': the GPU a header names, with what its total is (`gpu_total_origin.total_said`
    of the origin every view says, `Ledger.shown_total_origin`), apart from the CUDA total a calibrated budget sizes
    from ('GPU memory as CUDA reports it', 79.19 GiB); the bare total for a measured one no chooser described."""
    said = f", {total_said(name, origin)}" if origin is not None else ""
    return f"{name or 'GPU'} ({fmt_gib(total_bytes)}{said})"


def total_is(ledger: Ledger) -> str | None:
    """What the ledger's GPU total is, as the header and the budget's first line say it (`gpu.total_is`:
    `Ledger.shown_total_origin`); None only for a measured total no chooser described."""
    origin = ledger.shown_total_origin
    return None if origin is None else total_said(ledger.gpu_name, origin)


def ledger_text(ledger: Ledger, capacity: list[str] | None = None) -> str:
    """The ledger as a table (`capacity`: the block under the budget, where a plan says more than the ledger)."""
    e, m = ledger.engine, ledger.model
    lines = [
        f"{m.name}  ·  {display_name(e.engine)} {ledger.version.label}  ·  {ledger.layout.describe()} on {ledger.layout.gpus}× "
        f"{gpu_shown(ledger.gpu_name, ledger.gpu_total_bytes, ledger.shown_total_origin)}  ·  KV {ledger.kv_format}  ·  "
        f"context {ledger.context_length:,}",
        "",
    ]
    for label, rank in _distinct_ranks(ledger):
        lines.append(f"Weights per rank — {label} (layers {rank.layers[0]}–{rank.layers[1] - 1})")
        name = max(16, *(len(component_words(row.component, e.engine)) for row in rank.weights.rows))  # a long row stays aligned
        lines.append(f"  {'component':<{name}}{'params':>16}{'B/param':>9}{'shards':>8}  {'bytes':>28}")
        for row in rank.weights.rows:
            note = f"  {row.note}" if row.note else ""
            lines.append(f"  {component_words(row.component, e.engine):<{name}}{_book_cells(row)}  {fmt_both_or_binary(row.bytes):>28}{note}")
        lines.append(
            f"  {'total':<{name}}{rank.weights.total_params:>16,}{'':>17}  {fmt_both(rank.weights_bytes):>28}"
        )
        lines.append("")
        lines += _kv_heading(label, rank)
        for pool in rank.kv.pools:
            if pool.per_request:
                lines.append(
                    f"  {pool.name:<10} {pool.layers:>4} layers  {pool.bytes_per_request:>14,} B per request"
                )
            else:
                lines.append(
                    f"  {pool.name:<10} {pool.layers:>4} layers  {pool.bytes_per_token:>14,} B per {pool_token(pool.name)}"
                )
        lines.append("")
    lines += deployment_lines(ledger)
    lines.append(
        f"Budget ({display_name(e.engine)} {ledger.version.label}, tightest rank; {ledger.version.detail})"
    )
    for step in e.steps:
        source = step.source or ("measured" if step.measured else "")
        lines += step_lines(step, source + (f"  {step.note}" if step.note else ""))
    lines.append("")
    lines += capacity if capacity is not None else capacity_lines(ledger)
    for note in plan_notes(ledger):
        lines.append(prose("note: ", note))
    lines += engine_launch_lines(ledger.settings)
    neutral = memory_neutral_flags(ledger.settings)  # seen and ignored: named, never their values (an API key)
    if neutral:
        lines.append(f"  no effect on memory (accepted, not modelled): {' '.join(neutral)}")
    return qualified("\n".join(lines), ledger.engine.engine)  # a "§N" names the engine's doc


def estimate_term_json(term: TermEstimate) -> dict[str, Any]:
    return {"term": term.term.value, "label": term.label, "bytes": term.bytes, "error_bytes": term.error_bytes,
            "error_below_bytes": term.error_below_bytes, "raise_only_bytes": term.raise_only_bytes,
            "lower_only_bytes": term.lower_only_bytes, "source": term.source, "basis": term.basis, "beyond": term.beyond, "fit_key": term.fit_key,
            "within": term.within}  # fmt: skip


def term_error(term: TermEstimate) -> str:
    """A term's error in the plan's table: '± 0.66 GiB' ('+ 2.41 / − 0.97 GiB' where a part only raises the term,
    '+ 0.97 / − 2.41 GiB' where a part only lowers it),
    'in measured' (held in a measured input), 'in host share' (a context a unified host's assumed share holds), or
    'exact'."""
    if term.error_bytes or term.error_below_bytes:
        return term.error_said
    return "exact" if term.within is None else "in host share" if term.in_host_share else "in measured"


def request_interval_json(interval: RequestInterval | None, dominant: TermEstimate | None) -> dict[str, Any] | None:
    """An attention-free plan's requests at both ends of its budget (`requests_min`/`requests_max`, the state slots
    under them, whether the engine's cap binds, the term that widens it); null for a model that plans KV tokens."""
    if interval is None:
        return None
    return interval.model_dump() | {"cap_binds": interval.cap_binds, "spread": interval.spread,
                                    "term": dominant.term.value if dominant else None}  # fmt: skip


def plan_json(plan: CapacityPlan) -> dict[str, Any]:
    """The ledger's contract, with the capacity interval and every pre-load term (docs/calibration.md)."""
    dominant = plan.dominant
    check = architecture_check(plan.ledger)
    ledger = plan.ledger
    return ledger_json(ledger) | {
        "architecture_check": {"state": check.state, "architecture": check.architecture, "message": check.message,
                               "source": check.source},
        "token_capacity_min": plan.token_capacity_min,
        "token_capacity_max": plan.token_capacity_max,
        "kv_budget_min_bytes": plan.kv_budget_min_bytes,
        "kv_budget_max_bytes": plan.kv_budget_max_bytes,
        "interval_term": dominant.term.value if dominant else None,
        "interval_kind": plan.interval_kind.value,
        "capacity_fixed_by": plan.fixed_by,
        "request_interval": request_interval_json(plan.requests, dominant),
        "interval_scale": plan.estimate.interval_scale,
        "interval_scale_basis": plan.estimate.scale_basis,
        "beyond_support": list(plan.beyond_support),
        "calibrated_on_node": plan.estimate.node_note,
        "start_notes": list(plan.start_notes),
        "host_memory": {
            "unified": plan.estimate.unified_host.model_dump(mode="json") if plan.estimate.unified_host else None,
            "desktop": plan.estimate.desktop.model_dump(mode="json") if plan.estimate.desktop else None,
        },
        "terms": [estimate_term_json(term) for term in plan.estimate.terms]
        + ([estimate_term_json(plan.extrapolation_term)] if plan.extrapolation_term else []),
        "start": start_json(plan),
    }


def start_json(plan: CapacityPlan) -> dict[str, Any] | None:
    """Whether it starts where a unified-memory host holds its assumed share (null: no share of the total is asked
    free at its start, or the GPU is its own): `state`, `reason`, and where the centre may not start the largest share
    that starts there (`starting_fraction`) and its tokens per rank (`starting_tokens`). `needs_bytes`,
    `most_held_bytes` and `left_bytes` are read from the host (`host_memory.unified`), not held twice."""
    start = plan.start
    if start is None:
        return None
    return {
        "state": start.verdict.value, "starts_at_assumed_share": start.starts_at_centre, "fraction": start.fraction,
        "fraction_flag": start.fraction_flag, "needs_bytes": start.needs_bytes, "left_bytes": start.left_bytes,
        "most_held_bytes": start.most_held_bytes, "starting_fraction": start.starting_fraction,
        "starting_tokens": start.starting_tokens, "reason": start.reason,
    }  # fmt: skip


def interval_line(plan: CapacityPlan) -> str:
    """'between 440,112 and 480,000 tokens (± 20k), mostly vLLM's profiled activation peak': the interval's case
    (`CapacityPlan.interval_kind`) in `plan`'s words; a refused start is stated in full once, elsewhere named."""
    kind, dominant, start = plan.interval_kind, plan.dominant, plan.start
    mostly = f", mostly {dominant.label} ({dominant.source})" if dominant else ""
    if kind is IntervalKind.EXACT:
        return f"exactly {fmt_tokens(plan.ledger.token_capacity)} tokens: every input is measured"
    if kind is IntervalKind.REFUSED_ACROSS_SPAN:
        return f"0 tokens at both ends: refused across the assumed host share (see Token capacity){mostly}"
    if kind is IntervalKind.FITS_NOWHERE and plan.ledger.engine.count_refusal:
        return "0 tokens at both ends: the block count refuses it, not memory (see DOES NOT FIT)"
    if kind is IntervalKind.FITS_NOWHERE:
        return f"0 tokens at both ends: it does not fit even where its estimated inputs are kindest{mostly}"
    if kind is IntervalKind.FIXED_BY_FLAG:
        return (f"{fmt_tokens(plan.ledger.token_capacity)} tokens, fixed by {plan.fixed_by}: not a memory budget "
                "(it fits at both ends of the estimated inputs)")  # fmt: skip
    if kind is IntervalKind.ZERO_WIDE:
        return f"{fmt_tokens(plan.ledger.token_capacity)} tokens at both ends (± 0): no estimated input moves it"
    spread = f"({fmt_spread(*plan.spread_ends_tokens)})"
    at = f"at {start.fraction_flag} {start.fraction:g}" if start is not None else ""
    if kind in (IntervalKind.REFUSED_AT_CENTRE, IntervalKind.REFUSED_AT_HIGH_END) and start is not None:
        # an assumed share is no refusal: the low end is where the host holds more than the start leaves it
        spread = f"{at} (0: may not start where the host holds more than {fmt_gib(start.most_held_bytes)})"
    beyond = f"; outside the corpus: {', '.join(plan.beyond_support)}" if plan.beyond_support else ""
    return (f"{fmt_tokens(plan.token_capacity_min)} – {fmt_tokens(plan.token_capacity_max)} tokens "
            f"{spread}{mostly}{beyond}")  # fmt: skip


def request_interval_line(plan: CapacityPlan, interval: RequestInterval) -> str:
    """An attention-free plan's interval, in requests: 'exactly 1,024 requests' where every input is measured; a
    start refused on a unified host (`CapacityPlan.interval_kind`) named as the token interval names it."""
    kind, dominant, start = plan.interval_kind, plan.dominant, plan.start
    mostly = f", mostly {dominant.label} ({dominant.source})" if dominant else ""
    if plan.exact:
        return f"exactly {interval.requests:,} requests: every input is measured"
    if kind is IntervalKind.REFUSED_ACROSS_SPAN:
        return f"0 requests at both ends: refused across the assumed host share (see Token capacity){mostly}"
    if kind in (IntervalKind.REFUSED_AT_CENTRE, IntervalKind.REFUSED_AT_HIGH_END) and start is not None:
        why = f"0: may not start where the host holds more than {fmt_gib(start.most_held_bytes)}"
        return (f"{interval.requests_min:,} – {interval.requests_max:,} requests at {start.fraction_flag} "
                f"{start.fraction:g} ({why}){mostly}")  # fmt: skip
    return interval.words(mostly)


def plan_text(plan: CapacityPlan) -> str:
    """The ledger's table, with the interval after the capacity and the terms the plan rests on."""
    ledger = plan.ledger
    refused = [f"Token capacity      {plan.start.reason}", f"Exchange rate       {ledger.tokens_per_gib:,.0f} tokens "
               "per GiB of KV budget"] if plan.start is not None and plan.start_refused else None  # fmt: skip
    lines = ledger_text(ledger, refused).split("\n")
    at = next((i for i, line in enumerate(lines) if line.startswith(("Token capacity", "DOES NOT FIT"))), len(lines))
    interval = interval_line(plan) if plan.requests is None else request_interval_line(plan, plan.requests)
    lines.insert(at + 1, f"Interval            {interval}")
    terms = [f"Before the start ({plan.estimate.node_note or 'docs/calibration.md'}): what the plan assumes, per rank"]
    # the error column as wide as its widest entry ('+ 1.99 / − 0.97 GiB' is 19 characters), 13 at the least
    width = max([13, *(len(term_error(term)) for term in plan.estimate.terms)])
    for term in plan.estimate.terms:
        basis = f"{term.basis}; held in {term.within}" if term.within else term.basis
        terms += column_rows(term.label, f"{fmt_gib(term.bytes):>12}  {term_error(term):<{width}} {term.source:<11} {basis}")
    if plan.estimate.scale_basis:
        terms.append(prose("  ", f"the interval: the errors together {plan.estimate.scale_basis}", hang=4))
    # one-sided only where the interval has two ends apart (not one fixed by a flag, exact or ± 0): a refused start's
    # "0 – 315,764" too (REFUSED_AT_CENTRE, REFUSED_AT_HIGH_END; review R5 C3-5)
    ends = (plan.requests.requests_min, plan.requests.requests_max) if plan.requests else (
        plan.token_capacity_min, plan.token_capacity_max)  # fmt: skip
    spread = ends[0] != ends[1]
    terms.extend(prose("  ", f"the interval is {words}", hang=4)
                 for words in (term.one_sided_words for term in plan.estimate.one_sided if spread) if words)  # fmt: skip
    outside = plan.extrapolation_term
    if outside is not None:
        # the basis may open with its source ('calibrated: the 90th percentile …'): said once, not 'calibrated: calibrated:'
        basis = outside.basis if outside.basis.startswith(f"{outside.source}:") else f"{outside.source}: {outside.basis}"
        said_outside = f"the interval, outside the corpus: {outside.label} (± {fmt_gib(outside.error_bytes)} of KV, {basis})"
        terms.append(prose("  ", said_outside, hang=4))
    terms.extend(prose("  ", note, hang=4) for note in plan.start_notes)
    if plan.start is not None and not plan.start_refused:  # refused across the span, the headline states it
        terms.append(prose("  ", f"start verdict: {plan.start.reason}", hang=4))
    budget = next(i for i, line in enumerate(lines) if line.startswith("Budget ("))
    check = architecture_check(plan.ledger)
    said = [check.message] if check.state != "registered" else []  # served otherwise, or not checked
    said += [variant] if (variant := memory_variant_note(ledger.gpu_name, ledger.shown_total_origin)) else []
    flags = next((i for i, line in enumerate(lines) if line.startswith(LAUNCH_HEADS)), len(lines))
    lines[flags:flags] = [prose("note: ", line) for line in said]  # beside the notes
    return qualified("\n".join([*lines[:budget], *terms, "", *lines[budget:]]), ledger.engine.engine)

def fitting_lines(ledger: Ledger, smallest: FittingLayout | None, defaults: tuple[str, ...]) -> list[str]:
    """Under a plan that does not fit: which inputs were kvtop's defaults, and the fewest GPUs that fit."""
    if ledger.engine.fits:
        return []
    lines = []
    if defaults:
        lines.append(f"assumed (not given): {' and '.join(defaults)}")
    gpu = f"{ledger.gpu_name or 'GPU'} ({fmt_gib(ledger.gpu_total_bytes)})"
    if smallest is None:
        lines.append(f"no layout up to 32× {gpu} fits this launch")
    elif smallest.dropped is not None:
        dropped = smallest.dropped  # the share as the engine's launch writes it at the plan's release
        words = set_words(smallest.settings, **{dropped.setting: dropped.value})
        lines.append(
            f"no layout up to 32× {gpu} fits with {words}; at the engine's own share {smallest.gpus}× {gpu} "
            f"fits, {fmt_tokens(smallest.token_capacity)} tokens per rank ({launch_said(smallest.settings)})"
        )
    else:
        lines.append(
            f"smallest layout that fits: {smallest.gpus}× {gpu}, {fmt_tokens(smallest.token_capacity)} tokens per rank "
            f"({launch_said(smallest.settings)})"
        )
    return lines


def fitting_json(smallest: FittingLayout | None, defaults: tuple[str, ...]) -> dict[str, Any]:
    """`smallest_fit` ({gpus, token_capacity, engine_flags} or null), `assumed`; `dropped.flag`: an option or a YAML key."""
    fit = None
    if smallest is not None:
        launch = smallest.settings.engine_launch()  # what the engine takes, as the top level; TensorRT-LLM's YAML too
        fit = {"gpus": smallest.gpus, "token_capacity": smallest.token_capacity, "engine_flags": list(launch.line),
               "engine_env": dict(launch.env)}  # fmt: skip
        fit |= {"engine_config": config} if (config := engine_config_json(launch)) is not None else {}
        if (dropped := smallest.dropped) is not None:  # the launch's share fits no layout: this one is the engine's own
            flag = next(iter(setting_names(smallest.settings, dropped.setting, dropped.value)), None)
            fit["dropped"] = {"setting": dropped.setting, "flag": flag, "value": dropped.value}
    return {"smallest_fit": fit, "assumed": list(defaults)}
