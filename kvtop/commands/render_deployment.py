"""The deployment beside the model (draft, experts, encoder, LoRA, host KV) as JSON and as text."""

from __future__ import annotations

from typing import Any

from kvtop.commands.columns import column_rows
from kvtop.domain.deployment import (
    CHARGE_WORDS,
    BudgetTerm,
    Charge,
    Feature,
    HostTier,
    TermState,
)
from kvtop.domain.diagnose_findings import Thresholds
from kvtop.domain.diagnose_headroom import headroom_short
from kvtop.domain.headroom import Headroom, headroom_of
from kvtop.domain.host_tier_fit import host_tier_fit
from kvtop.domain.ledger import Ledger
from kvtop.domain.ledger_words import FEATURE_WORDS
from kvtop.domain.whatif import Replay
from kvtop.domain.wording import counted
from kvtop.units import fmt_both, fmt_signed, fmt_tokens

TERM_LABEL = 54  # the width of a term's label column, between its feature (16) and its figure (30)


def term_json(term: BudgetTerm) -> dict[str, Any]:
    return term.model_dump(mode="json")


def host_tier_json(host: HostTier | None) -> dict[str, Any] | None:
    """The tier, and whether the host holds it (`host_fit`: `kvtop plan` reads no host, so 'host_unknown')."""
    if host is None:
        return None
    fit = host_tier_fit(host, None)
    return host.model_dump(mode="json") | {"host_fit": fit.model_dump(mode="json") if fit else None}


def deployment_json(ledger: Ledger) -> dict[str, Any]:
    """`plan --json`'s `deployment`: what the launch turns on and every term of the tightest rank."""
    return {
        "features": [feature.value for feature in ledger.setup.features],
        "setup": ledger.setup.model_dump(mode="json"),  # host_kv in the contract's shape (`HostKvRequest`)
        "terms": [term_json(term) for term in ledger.terms],
        "host_tier": host_tier_json(ledger.host_tier),
        "headroom": headroom_json(headroom_of(ledger)),
    }


def headroom_json(headroom: Headroom | None) -> dict[str, Any] | None:
    if headroom is None:
        return None
    return headroom.model_dump(mode="json")  # needed_bytes, short_bytes: its computed fields


def _figure(term: BudgetTerm) -> str:
    if not term.modelled:
        return "not modelled"
    if term.charge is Charge.KV_CELL:
        return f"+{term.bytes_per_token:,} B/token" + (f" = {fmt_both(term.bytes)}" if term.bytes else "")
    return fmt_both(term.bytes)


def deployment_lines(ledger: Ledger) -> list[str]:
    """'Beside the model' for `plan`: one line per term (its figure, how it is charged, its basis), the
    host tier, and each term's detail; nothing when the launch turns nothing on."""
    terms, host = ledger.terms, ledger.host_tier
    if not terms and host is None:
        return []
    lines = ["Beside the model (tightest rank)"]
    for term in terms:
        basis = "" if not term.modelled else term.basis.value
        lines += term_rows(FEATURE_WORDS[term.feature], term.label, f"{_figure(term):>30}  {CHARGE_WORDS[term.charge]:<17}{basis}")
    if host is not None:
        lines.append(host_tier_line(host))
    for term in terms:
        if term.detail and not _said_as_not_modelled(term, ledger):
            lines.append(f"  · {term.label}: {term.detail}")
    if host is not None and host.detail:
        lines.append(f"  · host tier: {host.detail}")
    if host is not None and host.problem:
        lines.append(f"  ! host tier: {host.problem}")
    if host is not None and (fit := host_tier_fit(host, None)) is not None:  # a plan reads no host: said, not passed
        lines.append(f"  · host memory: {fit.reason}")
    lines += headroom_lines(ledger)
    lines.append("")
    return lines


def term_rows(feature: str, label: str, rest: str) -> list[str]:
    """'  draft model     draft weights (EAGLE-3 head) …  1.23 GB  …': the budget's row (`columns.column_rows`) with the
    term's feature named first, its label in a column of `TERM_LABEL`."""
    return column_rows(label, rest, TERM_LABEL, feature)


def headroom_lines(ledger: Ledger) -> list[str]:
    """What the pool leaves against what later phases allocate, when the deployment allocates after the pool."""
    headroom = headroom_of(ledger)
    if headroom is None or not any(t.charge is Charge.AFTER_POOL for t in ledger.terms):
        return []
    needs = "; ".join(f"{n.label} {fmt_both(n.bytes) if n.bytes is not None else 'not modelled'}"
                      + (f" (against the {r.label})" if (r := headroom.reserve_of(n)) else "") for n in headroom.needs)  # fmt: skip
    kept = "".join(f"; {r.label} {fmt_both(r.bytes)} holds {fmt_both(headroom.held_bytes(r))} of them"
                   for r in headroom.reserves)  # fmt: skip
    line = f"  headroom after the pool: runtime reserve {fmt_both(headroom.left_bytes)}; needs {needs}{kept}"
    finding = headroom_short(ledger, Replay(ledger), Thresholds())
    if finding is not None:
        gain = f" ({fmt_signed(finding.gain_tokens)} tokens per rank)" if finding.gain_tokens else ""
        return [line, f"  ! {finding.summary}", f"    fix: {finding.fix}{gain}"]
    return [line]


def _said_as_not_modelled(term: BudgetTerm, ledger: Ledger) -> bool:
    """Whether the term's detail is already one of the plan's 'note: not modelled: …' lines (`Ledger.not_modelled`,
    e.g. vLLM's MoE batch gathered over DP ranks): its row says 'not modelled' and the note says why, once."""
    return not term.modelled and any(term.detail in said for said in ledger.not_modelled)


def host_tier_line(host: HostTier) -> str:
    """'host KV tier  HiCache 2x: 759,744 tokens per rank (2.0× the GPU pool), 102.69 GB (95.64 GiB) pinned per rank'."""
    if host.state is not TermState.MODELLED:
        return "\n".join(term_rows(FEATURE_WORDS[Feature.HOST_KV], host.connector, f"{'not modelled':>30}"))
    multiple = host.gpu_pool_multiple
    scale = f" ({multiple:,.1f}× the GPU pool)" if multiple is not None else ""
    label = f"{host.connector}: {fmt_tokens(host.tokens_per_rank)} tokens per rank{scale}"
    # two spaces at least before a figure: a label or a figure wider than its column (a 1 EiB tier) ran into the next
    per_rank, total = "  " + fmt_both(host.bytes_per_rank), "  " + fmt_both(host.total_bytes)
    rows = term_rows(FEATURE_WORDS[Feature.HOST_KV], label, f"{per_rank:>30}  {'host, per rank':<17}{host.basis.value}")
    return "\n".join([*rows, *term_rows("", "over " + counted(host.ranks, "rank"), f"{total:>30}  host memory")])
