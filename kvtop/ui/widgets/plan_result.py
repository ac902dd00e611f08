"""The planner's before → after table: tokens, requests and concurrency, then per rank."""

from __future__ import annotations

from collections.abc import Callable

from textual.content import Content

from kvtop.domain.calibration.estimate import CapacityPlan, IntervalKind
from kvtop.domain.capacity import CapacitySource, capacity_said
from kvtop.domain.deployment import CHARGE_WORDS, gpu_terms_beside
from kvtop.domain.host_tier_fit import HostTierFit, HostTierState
from kvtop.domain.ledger import Ledger, RankLedger
from kvtop.domain.ledger_values import BesideState
from kvtop.domain.observe import EngineLive
from kvtop.ui.planning import PlanOutcome
from kvtop.units import fmt_bytes, fmt_gib, fmt_signed, fmt_spread, fmt_tokens

LABEL_WIDTH = 17
VALUE_WIDTH = 12  # 'not modelled', the widest a cell says


def _concurrency(ledger: Ledger) -> str:
    """vLLM's max concurrency, or for SGLang how many full-context requests the pool holds."""
    if ledger.engine.max_concurrency is not None:
        return f"{ledger.engine.max_concurrency:,.2f}"
    requests = ledger.requests_at_context_length
    return f"{requests:,.2f}" if requests is not None else "—"


def _tokens(ledger: Ledger) -> str:
    """Tokens per rank; an attention-free model's are bounded by no memory (its capacity is in requests)."""
    return "no KV" if ledger.request_capacity is not None else fmt_tokens(ledger.token_capacity)


def _state_requests(ledger: Ledger) -> str:
    """An attention-free model's requests per rank (each a fixed state); — for a model that plans KV tokens."""
    capacity = ledger.request_capacity
    return fmt_tokens(capacity.requests) if capacity is not None else "—"


#: The requests a launch that does not fit runs: none, named (its engine figure, e.g. SGLang's pool-derived 0, is no
#: choice the engine makes: the engine does not start), read from the domain's `EngineResult.fits`.
NO_REQUESTS = "— (does not fit)"
#: The same in the max-requests field's hint ('auto: none'), whose width cut 'auto: — (does not fit)' to 'auto: — (does'
#: (the planner's form column is 14 cells at any terminal width); the status line says why.
NO_REQUESTS_HINT = "none"


def requests_run(ledger: Ledger) -> int | None:
    """The requests the engine runs at once: its max running requests, None where the launch does not fit."""
    return ledger.engine.max_running_requests if ledger.engine.fits else None


def running_requests(ledger: Ledger) -> str:
    """The engine's max running requests, or `NO_REQUESTS` where the launch does not fit."""
    requests = requests_run(ledger)
    return NO_REQUESTS if requests is None else fmt_tokens(requests)


_ROWS: tuple[tuple[str, Callable[[Ledger], str]], ...] = (
    ("tokens per rank", _tokens),
    ("state requests", _state_requests),
    ("max running reqs", running_requests),
    ("concurrency @ctx", _concurrency),
    ("context length", lambda ledger: fmt_tokens(ledger.context_length)),
    ("KV B/token/rank", lambda ledger: _cell(ledger)),
    ("tokens per GiB", lambda ledger: f"{ledger.tokens_per_gib:,.0f}"),
    ("beside the model", lambda ledger: _beside(ledger)),
    ("host KV tokens", lambda ledger: fmt_tokens(ledger.host_tier.tokens_per_rank) if ledger.host_tier else "—"),
    ("layout", lambda ledger: ledger.layout.describe()),
    ("GPUs", lambda ledger: str(ledger.layout.gpus)),
    ("fits", lambda ledger: _fits(ledger)),
    ("engine rules", lambda ledger: ledger.version.label),  # the release whose rules solved the column
)


#: What the after column says in place of a figure the engine would never reach: a launch it refuses at start
#: (`launch_refusals`, the domain's; the ✗ line under the fields says why) serves no tokens, requests or concurrency.
REFUSED = "refused"
#: The rows that are what the launch serves (its capacity), not what it asks for (its settings): refused, each says so.
_SERVED_ROWS = frozenset({"tokens per rank", "state requests", "max running reqs", "concurrency @ctx", "host KV tokens",
                          "fits"})  # fmt: skip
#: The per-rank rows that are what the start sizes for KV: refused, it sizes none.
_SERVED_RANK_ROWS = frozenset({"  KV pool", "  tokens"})


def _cell(ledger: Ledger) -> str:
    """The ledger's KV bytes per token per rank, '≥' it where a term of the cell is not modelled (an EAGLE-3 draft
    named by no config: its layers unknown), as `plan` lists it beside the model."""
    shown = fmt_bytes(ledger.kv_bytes_per_token)
    return f"≥ {shown}" if ledger.kv_cell_unpriced else shown


def _row_label(label: str, before: Ledger | None, after: Ledger | None) -> str:
    """The concurrency row's name where the engine states no max concurrency (SGLang): 'reqs fit @ctx', the
    full-context requests the pool holds (`plan`'s 'Full-context reqs'), not capped by max running reqs, which a
    'concurrency' of 1,230.95 beside a cap of 64 read as."""
    shown = [ledger for ledger in (after, before) if ledger is not None]
    if label == "concurrency @ctx" and shown and shown[0].engine.max_concurrency is None:
        return "reqs fit @ctx"
    return label


def _beside(ledger: Ledger) -> str:
    """What the tightest rank's deployment holds on the GPU beside the model, however the engine charges it (before
    the pool, its reserve, after the pool), as the domain states it (`Ledger.beside_model`): each term under the table
    as `plan` lists it; '—': none; a term kvtop cannot price is `plan`'s named state, never '—': 'not modelled', or
    '≥' the priced ones beside it (`unpriced_lines` says which and why)."""
    held, state = ledger.beside_model
    return {
        BesideState.NONE: "—", BesideState.PRICED: fmt_gib(held), BesideState.AT_LEAST: f"≥ {fmt_gib(held)}",
        BesideState.NOT_MODELLED: "not modelled",
    }[state]  # fmt: skip


def beside_lines(ledger: Ledger) -> list[Content]:
    """Each priced term of the 'beside the model' row, worded as `plan` lists it: 'multimodal reserve: encoder cache
    and feature pools: 0.10 GiB, engine's reserve (assumed)'."""
    return [
        Content.styled(f"{t.label}: {fmt_gib(t.bytes)}, {CHARGE_WORDS[t.charge]} ({t.basis.value})", "$text-muted")
        for t in gpu_terms_beside(ledger.terms)
    ]


def version_lines(before: Ledger | None, after: Ledger | None) -> list[Content]:
    """How the edited engine version resolved, where it is not the before column's: the release whose rules solve
    the after column and why (`ResolvedVersion.detail`: '--engine-version 9.9.9 (newer than 0.5.23, the newest release
    kvtop models: its rules apply)'), as `plan` heads its budget; none where the version was not edited."""
    if after is None or (before is not None and before.version == after.version):
        return []
    return [Content.styled(f"engine rules: {after.version.detail}", "$text-muted")]


def fraction_lines(before: Ledger | None, after: Ledger | None) -> list[Content]:
    """Why the after column's memory fraction is not the before's, in the engine's words (`memory_fraction_source`, the
    rank ledger's 'fraction from'): an edit of PP 1 → 41 at TP8 moved SGLang's automatic share from 0.818 to 0.316 (its
    reserve adds 1 GiB per 8 ranks of TP × PP) and only the field's 'auto: 0.316' said so (session 57's operator run).
    None where the fraction did not move."""
    if before is None or after is None or before.engine.memory_fraction == after.engine.memory_fraction:
        return []
    was, now = before.engine.memory_fraction, after.engine.memory_fraction
    return [Content.styled(f"memory fraction {was:.3f} → {now:.3f} from {after.engine.memory_fraction_source}", "$text-muted")]


def cell_lines(ledger: Ledger) -> list[Content]:
    """What the KV row's bytes are where the engine solves with its own cell (`plan`'s heading): 'KV B/token/rank:
    per token of a max-length request (540 blocks of 2,621,440 B per 448 tokens: …)', not a token's own rows."""
    cell = ledger.kv_cell
    if cell is None:
        return []
    fixed = f"; + {fmt_gib(cell.fixed_bytes)} fixed before any token" if cell.fixed_bytes else ""
    return [Content.styled(f"KV B/token/rank: {cell.unit} ({cell.counts}){fixed}", "$text-muted")]


def unpriced_lines(ledger: Ledger) -> list[Content]:
    """Each term `plan` names not modelled, with its reason: 'draft weights: not modelled (the config states no MTP
    layers and no draft model was named (--speculative-draft-model-path))'; then what kvtop leaves out of the
    plan, as `plan`'s 'note: not modelled: …' says it: the one list (`Ledger.not_modelled`: the model's parts, its
    cast at load, the engine's rules' on this launch)."""
    return [
        *(Content.styled(f"{t.label}: not modelled" + (f" ({t.detail})" if t.detail else ""), "$warning")
          for t in ledger.terms if not t.modelled),
        *(Content.styled(f"not modelled: {note}", "$warning") for note in ledger.not_modelled),
    ]  # fmt: skip


def shortfall(ledger: Ledger) -> str:
    """What the plan lacks per rank to start, in the unit that shows it: '3.20 GiB', or '2.58 MiB' for one KV block
    (an LMDeploy share of 1e-9 read '0.00 GiB short')."""
    return fmt_bytes(ledger.engine.shortfall_bytes)


def _fits(ledger: Ledger) -> str:
    """'yes', 'no, 3.20 GiB short', or 'at risk' where the runtime reserve is below the engine's own."""
    if ledger.engine.count_refusal:  # the count's refusal, not memory's: no shortfall to show
        return "no, too few blocks for one request"
    if not ledger.engine.fits:
        return f"no, {shortfall(ledger)} short"
    return "at risk" if ledger.engine.reserve_short_bytes else "yes"


def reserve_short(ledger: Ledger) -> str | None:
    """'runtime reserve 0.77 GiB < 14.03 GiB the engine keeps for …' where the plan's runtime reserve is below what
    the engine keeps itself (the 'at risk' of the fits row); None where it is not."""
    e = ledger.engine
    if not e.reserve_short_bytes or e.reserve_needed_bytes is None:
        return None
    return (
        f"runtime reserve {fmt_gib(e.reserve_bytes)} < {fmt_gib(e.reserve_needed_bytes)} the engine keeps for "
        "CUDA graphs and activations: it may run out of memory"
    )


def reserve_warning(ledger: Ledger) -> Content | None:
    """The line under the table when the plan's runtime reserve is below what the engine keeps itself."""
    short = reserve_short(ledger)
    return None if short is None else Content.styled(f"✗ {short}", "bold $error")


_RANK_ROWS: tuple[tuple[str, Callable[[RankLedger], str]], ...] = (
    ("  weights", lambda rank: fmt_gib(rank.weights_bytes)),
    ("  KV pool", lambda rank: fmt_gib(rank.kv_pool_bytes)),
    ("  reserve", lambda rank: fmt_gib(rank.reserve_bytes)),
    ("  tokens", lambda rank: fmt_tokens(rank.token_capacity)),
)


def _stage_rows(ledger: Ledger) -> dict[str, RankLedger]:
    """One representative rank per pipeline stage (TP ranks of a stage hold the same books)."""
    stages: dict[int, list[RankLedger]] = {}
    for rank in ledger.ranks:
        stages.setdefault(rank.pp_rank, []).append(rank)
    labelled = {}
    for pp_rank, members in stages.items():
        label = (
            f"ranks {members[0].rank}–{members[-1].rank}" if len(members) > 1 else f"rank {members[0].rank}"
        )
        labelled[f"PP{pp_rank} {label}" if ledger.layout.pp > 1 else label] = members[0]
    return labelled


def _line(label: str, before: str, after: str, changed: bool) -> Content:
    return Content.assemble(
        (f"{label:<{LABEL_WIDTH}}", "$text-muted"), f"{before:>{VALUE_WIDTH}}", (" → ", "$text-muted"),
        (f"{after:>{VALUE_WIDTH}}", "bold $accent" if changed else ""),
    )  # fmt: skip


def interval_line(plan: CapacityPlan) -> Content:
    """'fresh start   420,112 – 460,000 (± 20k), mostly vLLM's CUDA-graph estimate (assumed)': what a fresh start
    of the edit would log as `kvtop plan` plans it (calibrated terms), and the term to measure first; the case is
    the plan's (`CapacityPlan.interval_kind`), the words the pane's."""
    label = (f"{'fresh start':<{LABEL_WIDTH}}", "$text-muted")
    kind, dominant, start = plan.interval_kind, plan.dominant, plan.start
    if kind is IntervalKind.EXACT:
        shown = f"{plan.requests.requests:,} requests" if plan.requests is not None else fmt_tokens(plan.ledger.token_capacity)
        return Content.assemble(label, f"{shown}: every input measured")
    mostly = (f", mostly {dominant.label} ({dominant.source})" if dominant else "", "$text-muted")
    if kind is IntervalKind.REQUESTS and plan.requests is not None:  # an attention-free model: in requests
        return Content.assemble(label, plan.requests.words(mostly[0]))
    if kind is IntervalKind.FIXED_BY_FLAG:
        return Content.assemble(label, f"{fmt_tokens(plan.ledger.token_capacity)}, fixed by {plan.fixed_by}",
                                (": not a memory budget (fits at both ends)", "$text-muted"))  # fmt: skip
    if kind is IntervalKind.REFUSED_ACROSS_SPAN:
        return Content.assemble(label, ("0 at both ends: refused across the assumed host share (✗ above)", "$error"),
                                mostly)  # fmt: skip
    if kind is IntervalKind.FITS_NOWHERE:
        return Content.assemble(label, "0 at both ends: does not fit even where its estimated inputs are kindest")
    if kind is IntervalKind.ZERO_WIDE:
        return Content.assemble(label, f"{fmt_tokens(plan.ledger.token_capacity)} at both ends (± 0)",
                                (": no estimated input moves it", "$text-muted"))  # fmt: skip
    spread = f" ({fmt_spread(*plan.spread_ends_tokens)})"
    low, high = fmt_tokens(plan.token_capacity_min), fmt_tokens(plan.token_capacity_max)
    if plan.requests is not None:  # an attention-free model refused on a unified host: its ends in requests
        low, high = f"{plan.requests.requests_min:,}", f"{plan.requests.requests_max:,} requests"
    if kind in (IntervalKind.REFUSED_AT_CENTRE, IntervalKind.REFUSED_AT_HIGH_END) and start is not None:
        # an assumed share is no refusal: 'may not start', the start line under the table says why
        spread = f" at {start.fraction:g} (0: may not start where the host holds more than {fmt_gib(start.most_held_bytes)})"
    return Content.assemble(
        label,
        f"{low} – {high}{spread}",
        mostly,
        (f" · outside the corpus: {', '.join(plan.beyond_support)}" if plan.beyond_support else "", "$warning"),
        (f" · {plan.estimate.node_note}" if plan.estimate.node_note else "", "$success"),
    )  # fmt: skip


def start_note_lines(plan: CapacityPlan) -> list[Content]:
    """The plan's start notes (`CapacityPlan.start_notes`: torch.compile's cache), each under its own 'start note'
    label: a blank label read as a stray indent under 'fresh start' once the note wrapped (session 70's operator)."""
    return [Content.assemble((f"{'start note':<{LABEL_WIDTH}}", "$text-muted"), (note, "$warning"))
            for note in plan.start_notes]  # fmt: skip


def start_line(plan: CapacityPlan) -> Content | None:
    """The start verdict on a unified-memory host, stated once: '✗ refused across the assumed host share: …;
    --gpu-memory-utilization 0.7 starts at its centre: 546,528 tokens per rank' where even its low end refuses (the
    plan's headline), else the verdict under the table ('may not start: …'); None where the plan has none."""
    if plan.start is None:
        return None
    if plan.start_refused:
        return Content.styled(f"✗ {plan.start.reason}", "bold $error")
    return Content.styled(f"start: {plan.start.reason}", "$warning")


def token_delta(change: int | None) -> Content | None:
    """The change of a changed token figure (`Ledger.token_change_from`) as its own row under the after column
    ('change  −837,017'): beside the row it made 44 + 11 cells, wrapped onto its own line at 80 columns (the trial).
    None when it did not change or is no token figure."""
    if not change:
        return None
    return Content.assemble(
        (f"{'  change':<{LABEL_WIDTH}}{'':>{VALUE_WIDTH}}   ", "$text-muted"),
        (f"{fmt_signed(change):>{VALUE_WIDTH}}", "$success" if change > 0 else "$error"),
    )


def host_tier_line(host: HostTierFit) -> Content:
    """The edited launch's host KV tier against the host (`host_tier_fit`): refused ✗, over what is available now, or
    within; 'not checked' where the host's memory is not known."""
    style = {HostTierState.OVER_HOST: "bold $error", HostTierState.OVER_AVAILABLE: "$warning"}.get(host.state,
                                                                                                    "$text-muted")
    mark = "✗ " if host.refused else ""
    return Content.assemble((f"{'host KV':<{LABEL_WIDTH}}", "$text-muted"), (f"{mark}{host.reason}", style))


def outcome_table(
    outcome: PlanOutcome,
    live: EngineLive | None,
    host: HostTierFit | None = None,
    live_source: CapacitySource = CapacitySource.LIVE,
    refused: bool = False,
) -> Content:
    """The before → after table; `live` what the engine states (None: no engine), its token capacity said
    by `live_source` (`capacity_said`: 'engine logged', 'demo simulates', 'engine reports'); `host` the edit's host KV
    tier against the node's host memory, where it has one; `refused`: the engine refuses the edit at start
    (`launch_refusals`, the ✗ line under the fields says why), so it fits nothing, at risk or not, and the after
    column says 'refused' for what it would serve (tokens, requests, concurrency, its KV pool), as `kvtop plan`
    refuses it outright, in place of figures it never reaches."""
    before, after = outcome.before, outcome.after
    lines = [
        Content.styled(
            f"{'':<{LABEL_WIDTH}}{'before':>{VALUE_WIDTH}}   {'after':>{VALUE_WIDTH}}", "bold $text-muted"
        )
    ]
    stateful = any(ledger is not None and ledger.request_capacity is not None for ledger in (before, after))
    for label, value in _ROWS:
        if label == "state requests" and not stateful:  # a row only an attention-free model has
            continue
        shown_before = value(before) if before else "—"
        shown_after = value(after) if after else "invalid"
        if label in _SERVED_ROWS and after is not None and refused and shown_after != "—":
            shown_after = REFUSED  # the engine stops before serving: the ✗ line says why ('—', none asked, stays)
        elif label == "fits" and outcome.after_plan is not None and outcome.after_plan.start_refused:
            shown_after = "refused"  # across the assumed host share: the line under the table says why
        if label == "fits" and host is not None and host.refused and after is not None:
            shown_after = "no: host"  # the host KV line under the table says why
        lines.append(_line(_row_label(label, before, after), shown_before, shown_after, shown_before != shown_after))
        if label == "tokens per rank" and before is not None and after is not None and not refused:
            delta = token_delta(after.token_change_from(before))
            lines.extend([delta] if delta is not None else [])
    lines.extend(version_lines(before, after))
    lines.extend(fraction_lines(before, after))
    lines.extend(cell_lines(after) if after is not None else [])
    lines.extend(beside_lines(after) if after is not None else [])
    lines.extend(unpriced_lines(after) if after is not None else [])
    if host is not None:
        lines.append(host_tier_line(host))
    if outcome.after_plan is not None and refused:  # no fresh start to bound: the engine refuses the launch
        lines.append(Content.assemble((f"{'fresh start':<{LABEL_WIDTH}}", "$text-muted"),
                                      ("refused: the engine does not start this launch (the ✗ line says why)", "$error")))  # fmt: skip
    elif outcome.after_plan is not None:
        if (start_refused := start_line(outcome.after_plan)) is not None:
            lines.append(start_refused)
        lines.append(interval_line(outcome.after_plan))
        lines.extend(start_note_lines(outcome.after_plan))
    if live is not None and live.token_capacity is not None:  # the engine's own figure: its model at its settings
        lines.append(
            Content.assemble(
                (f"{capacity_said(live_source):<{LABEL_WIDTH}}", "$text-muted"),
                f"{fmt_tokens(live.token_capacity):>{VALUE_WIDTH}}",
                ("" if outcome.live_model_planned else "   the live engine's, for its own model: not the one planned",
                 "$warning"),
            )
        )  # fmt: skip
    if after is not None:
        lines.append(Content.styled("per rank (after)", "bold $text-muted"))
        before_stages = list(_stage_rows(before).values()) if before else []
        for index, (label, rank) in enumerate(_stage_rows(after).items()):
            old = before_stages[index] if index < len(before_stages) else None
            lines.append(Content.styled(label, "$text-muted"))
            for name, pick in _RANK_ROWS:
                shown_old, shown_new = (pick(old) if old else "—"), pick(rank)
                shown_new = REFUSED if refused and name in _SERVED_RANK_ROWS else shown_new
                lines.append(_line(name, shown_old, shown_new, shown_old != shown_new))
    if after is not None and (warning := reserve_warning(after)) is not None:
        lines.append(warning)
    if outcome.before_error:
        lines.append(Content.styled(f"live settings: {outcome.before_error}", "$warning"))
    return Content("\n").join(lines)
