"""What a finding is, as a value: its rule, severity, figures, fix and the other way out.

The frozen values every finding rule and every engine's `diagnosis` module build (`Finding`,
`Thresholds`, `FlagAlternative`) and the small helpers that label ranks, kept apart from the rules
that look engines up (`diagnose_rules`, `diagnose_headroom`, `keep_running`) so those rules and the
engine packages both import them downward.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import TYPE_CHECKING, TypeAlias

from pydantic import BaseModel, ConfigDict

from kvtop.domain.capacity import CapacityCause, CapacitySource
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.wording import GIB, gib

if TYPE_CHECKING:
    from kvtop.domain.ledger_values import Ledger, RankLedger, WhatIf


class AlternativeLimit(str, Enum):
    """Why the alternative's share is not larger."""

    REACHED = "reached"  # it holds what stopping the processes gives back: no more is needed
    RESERVE = "reserve"  # a larger one takes the runtime reserve below the engine's own (kvtop's tolerance)
    START = "start"  # a larger one does not start (vLLM: less free than the share asks)
    OWN_SHARE = "own_share"  # the launch's or the engine's default share: kvtop cannot price more for the runtime

    def __str__(self) -> str:
        return self.value


class FlagAlternative(BaseModel):
    """A restart of `engine_id` with its memory flag at `share`, the processes left running."""

    model_config = ConfigDict(frozen=True)

    engine_id: str
    engine_name: str  # 'SGLang'
    pids: tuple[int, ...]  # the processes it leaves running
    flag: str  # the engine's own spelling: '--mem-fraction-static'
    share: float  # two decimals
    tokens: int  # tokens per rank that restart holds
    restart_tokens: int  # … a restart with the flags as they are (0: the engine would not start)
    stopped_tokens: int  # … a restart with the processes stopped (the finding's own fix)
    reserve_bytes: int  # the runtime reserve the share leaves on the tightest rank
    reserve_needed_bytes: int | None  # the reserve the engine keeps itself, where it states one
    limit: AlternativeLimit
    settings: LaunchSettings  # the launch with the share applied (the planner's "after")
    # the share as the engine's launch at the plan's release writes it (`launch_change.change_words`: TensorRT-LLM's
    # `kv_cache_config.free_gpu_memory_fraction` in its YAML where the launch has one); '' : `flag share`
    words: str = ""

    @property
    def fix(self) -> str:
        """'--mem-fraction-static 0.83'."""
        return self.words or f"{self.flag} {self.share:.2f}"

    @property
    def gain_tokens(self) -> int:
        """Tokens per rank it holds above a restart with the flags as they are."""
        return self.tokens - self.restart_tokens

    def describe(self) -> str:
        """The alternative with its price, as the findings pane and `diagnose` print it: 'keep pid 4242
        running and restart sglang:41000 with --mem-fraction-static 0.83: +22,750 tokens per rank over a
        restart as launched (1,115,631 against 1,093,274, both with the processes held now); runtime reserve …'.
        A restart as launched is the ledger's own pre-load less what others hold now (`EngineOnNode.clean`): with
        the same processes as at the start it is the explained pool, the figure the advice and the planner start from."""
        if self.restart_tokens:
            held = (
                f"+{self.gain_tokens:,} tokens per rank over a restart as launched ({self.tokens:,} against "
                f"{self.restart_tokens:,}, both with the processes held now)"
            )
        else:
            held = f"{self.tokens:,} tokens per rank (as launched it would not start)"
        reserve = f"runtime reserve {gib(self.reserve_bytes)}"
        if self.reserve_needed_bytes is not None:
            reserve += f" ({self.engine_name} keeps {gib(self.reserve_needed_bytes)} itself)"
        why = _LIMITS[self.limit].format(engine=self.engine_name)
        processes = ("pids " if len(self.pids) > 1 else "pid ") + ", ".join(map(str, self.pids))
        return f"keep {processes} running and restart {self.engine_id} with {self.fix}: {held}; {reserve}; {why}"


_LIMITS = {
    AlternativeLimit.REACHED: "it holds what stopping them gives back",
    AlternativeLimit.RESERVE: "a larger share takes the runtime reserve more than 1 GiB below {engine}'s own",
    AlternativeLimit.START: "{engine} does not start with a larger share on the memory free now",
    AlternativeLimit.OWN_SHARE: "not above the launch's or {engine}'s default share (kvtop cannot price the runtime beyond it)",
}


class CapacityStart(BaseModel):
    """The figure a finding's capacity change ('capacity 415,744 predicted → 806,336') starts from, and where it
    comes from; with the engine's own figure beside it where the engine stated one (its endpoint or its startup log):
    the change is priced on kvtop's plan, so a logged 397,696 must not read as the start (session 57)."""

    model_config = ConfigDict(frozen=True)

    tokens: int  # per rank (per pool for the layout rules)
    source: CapacitySource
    line: str  # the evidence line that names it: 'capacity 38,560 predicted → 77,136 tokens per rank'
    engine_tokens: int | None = None  # the engine's own figure per rank, where it stated one
    engine_source: CapacitySource | None = None  # live or logged

    def said(self) -> str:
        """`line`, and where the engine stated another figure, that one beside it: 'capacity 38,560 predicted →
        77,136 tokens per rank (the engine logged 37,728; the change is priced on kvtop's plan)'."""
        if self.engine_tokens is None or self.engine_source is None or self.engine_tokens == self.tokens:
            return self.line
        return f"{self.line} ({self.engine_source.stated} {self.engine_tokens:,}; the change is priced on kvtop's plan)"

    def beside(self, tokens: int, source: CapacitySource) -> CapacityStart:
        """This start with the engine's own figure (`tokens` per rank, `source` live or logged) beside it."""
        if source is CapacitySource.PREDICTED:
            return self
        return self.model_copy(update={"engine_tokens": tokens, "engine_source": source})


def capacity_change(before: int, after: int, tail: str = "tokens per rank") -> tuple[str, CapacityStart]:
    """'capacity 38,560 predicted → 77,136 tokens per rank', and its start: a plan's rule prices a change on the
    plan's own capacity (kvtop's prediction, with every measured cause where a node is measured), and says so."""
    source = CapacitySource.PREDICTED
    line = f"capacity {before:,} {source.value} → {after:,} {tail}"
    return line, CapacityStart(tokens=before, source=source, line=line)


class Severity(str, Enum):
    CRITICAL = "critical"  # the engine cannot serve, or will not start again as configured
    WARNING = "warning"  # capacity is lost now and a stated change wins it back (or kvtop cannot check it)
    INFO = "info"  # a trade-off worth knowing (e.g. FP8 KV); not a fault

    def __str__(self) -> str:
        return self.value


class Rule(str, Enum):
    """What a finding is about: one id per rule, stable in JSON and metrics; a person reads its title (`RULE_TITLES`)."""

    CO_TENANT = "co_tenant"
    UNATTRIBUTED_BYTES = "unattributed_bytes"
    ORPHAN_WORKER = "orphan_worker"
    RANK_IMBALANCE = "rank_imbalance"
    WEIGHTS_LARGER_THAN_PREDICTED = "weights_larger_than_predicted"
    RESERVE_LARGER_THAN_EXPECTED = "reserve_larger_than_expected"
    RESTART_WILL_NOT_FIT = "restart_will_not_fit"
    UNEXPLAINED_BYTES = "unexplained_bytes"
    GPU_LOST = "gpu_lost"
    BF16_KV_WHERE_FP8_SUPPORTED = "bf16_kv_where_fp8_supported"
    FP32_KV_CACHE = "fp32_kv_cache"  # a float32 KV cache (and weights): a 16-bit --dtype halves both
    TP_ABOVE_KV_HEADS = "tp_above_kv_heads"
    MLA_UNDER_ATTENTION_TP = "mla_under_attention_tp"
    REQ_TO_TOKEN_LARGE = "req_to_token_large"
    MAMBA_STATE_CAPS_REQUESTS = "mamba_state_caps_requests"
    HYBRID_KV_MANAGER_DISABLED = "hybrid_kv_manager_disabled"
    BF16_KV_WHERE_INT8_SUPPORTED = "bf16_kv_where_int8_supported"  # LMDeploy's --quant-policy 8
    SESSION_LEN_TRUNCATED = "session_len_truncated"  # TurboMind cut session_len to what its blocks hold
    KV_CAP_BINDS = "kv_cap_binds"
    IDLE_GPU = "idle_gpu"  # a GPU no process uses on a node whose engines could
    NO_PREDICTION = "no_prediction"  # an engine kvtop has no plan for: nothing can be checked, never an all-clear
    PREEMPTING_WITH_ROOM = "preempting_with_room"  # the pool preempts while the GPUs have room to grow it
    PREEMPTING_POOL_FULL = "preempting_pool_full"  # the pool preempts with no room: admit fewer requests
    HEADROOM_SHORT = "headroom_short"  # what the pool leaves is short of what later phases allocate
    HOST_TIER_WOULD_NOT_FIT = "host_tier_would_not_fit"  # a restart's host KV tier exceeds the host's memory
    RESERVE_BELOW_ENGINES_OWN = "reserve_below_engines_own"  # a memory share above the engine's own  # TensorRT-LLM's max_tokens / max_gpu_total_bytes sizes the pool

    def __str__(self) -> str:
        return self.value


#: Each rule's title: what a person reads where a script reads the id (the findings pane, `diagnose` and `explain`
#: text; JSON and the metrics keep the id). Worded by what the finding is about, never by one engine's flag.
RULE_TITLES: dict[Rule, str] = {
    Rule.CO_TENANT: "Another process holds memory on an engine's GPU",
    Rule.UNATTRIBUTED_BYTES: "GPU memory no process accounts for",
    Rule.ORPHAN_WORKER: "Orphaned engine workers hold GPU memory",
    Rule.RANK_IMBALANCE: "One rank has less memory than the others",
    Rule.WEIGHTS_LARGER_THAN_PREDICTED: "Weights larger than predicted",
    Rule.RESERVE_LARGER_THAN_EXPECTED: "More memory kept outside the KV cache than expected",
    Rule.RESTART_WILL_NOT_FIT: "A restart would not fit on the GPUs as they are now",
    Rule.UNEXPLAINED_BYTES: "Workers hold memory the ledger does not explain",
    Rule.GPU_LOST: "GPU lost",
    Rule.BF16_KV_WHERE_FP8_SUPPORTED: "16-bit KV where the engine supports FP8 KV",
    Rule.FP32_KV_CACHE: "Float32 KV cache and weights",
    Rule.TP_ABOVE_KV_HEADS: "Tensor parallel above the KV heads: KV copied on every rank",
    Rule.MLA_UNDER_ATTENTION_TP: "MLA latent copied by attention tensor parallel",
    Rule.REQ_TO_TOKEN_LARGE: "Large request-to-token table",
    Rule.MAMBA_STATE_CAPS_REQUESTS: "Recurrent-state slots cap the running requests",
    Rule.HYBRID_KV_MANAGER_DISABLED: "Sliding-window layers cached at full length",
    Rule.BF16_KV_WHERE_INT8_SUPPORTED: "16-bit KV where the engine supports INT8 KV",
    Rule.SESSION_LEN_TRUNCATED: "Session length cut to what the KV blocks hold",
    Rule.KV_CAP_BINDS: "A token cap holds the KV pool below what memory allows",
    Rule.IDLE_GPU: "Idle GPU",
    Rule.NO_PREDICTION: "Engine not checked: no prediction",
    Rule.PREEMPTING_WITH_ROOM: "Preempting requests while the GPUs have room",
    Rule.PREEMPTING_POOL_FULL: "Preempting requests: the KV pool is full",
    Rule.HEADROOM_SHORT: "Too little memory left after the KV pool",
    Rule.HOST_TIER_WOULD_NOT_FIT: "Host KV tier would not fit in host memory",
    Rule.RESERVE_BELOW_ENGINES_OWN: "Memory share leaves less reserve than the engine keeps",
}


def rule_title(rule: Rule) -> str:
    """'BF16 KV where the engine supports FP8' for `bf16_kv_where_fp8_supported`."""
    return RULE_TITLES[rule]


SEVERITY_ORDER = {Severity.CRITICAL: 0, Severity.WARNING: 1, Severity.INFO: 2}


class Finding(BaseModel):
    """One cause of missing capacity, quantified, with the change that removes it.

    Info findings are advice (trade-offs such as FP8 KV); for them `tokens` is what the change
    would gain. The TP/MLA layout rules count tokens over all KV pools of the node.
    """

    model_config = ConfigDict(frozen=True)

    rule: Rule
    severity: Severity
    summary: str  # one line a person reads first
    engine_id: str | None = None
    gpus: tuple[int, ...] = ()
    ranks: tuple[str, ...] = ()  # "sglang:4242/tp3"; ledger-only findings: "tp3"
    bytes: int = 0  # what the cause holds or wastes on each affected rank
    # what `bytes` is where it is not memory the cause holds (a narrower KV cell's saving at today's tokens, which
    # frees nothing: the pool keeps its size and holds more); '' where it is memory held
    bytes_words: str = ""
    tokens: int = 0  # KV tokens per rank it costs (planner: without − with); layout rules: node total
    fix: str  # the exact change: a flag string, or "kill 4243 (…)"
    gain_tokens: int = 0  # what the fix wins back, per rank (planner)
    gain_needs_restart: bool = False  # the KV pool is sized at start-up: the gain needs a restart
    # whole GPUs out of service (lost, or held by a dead server's workers with no engine on them) or unused:
    # the largest capacity loss there is, counted in GPUs where no engine's tokens can price it
    whole_gpus: int = 0
    pids: tuple[int, ...] = ()  # the processes the fix stops (co-tenants, orphans), when it names any
    evidence: tuple[str, ...] = ()  # one-line facts with their numbers
    fix_settings: LaunchSettings | None = None  # the settings with the fix applied (planner what-if)
    # the other way out of a fix that stops processes: leave them running, move the engine's memory flag
    alternative: FlagAlternative | None = None
    # the capacity waterfall's term this finding explains (its tokens are that term's, as a cost)
    cause: CapacityCause | None = None
    term_tokens: int | None = None  # the term's own (signed) tokens: clean + Σ terms = actual
    # the figure its capacity change starts from ('capacity 38,560 predicted → …'), where it states one
    start: CapacityStart | None = None

    @property
    def title(self) -> str:
        """What the finding is about, as a person reads it (`RULE_TITLES`); the id `rule` stays for JSON and scripts."""
        return rule_title(self.rule)


def beside_engine_figure(finding: Finding, tokens: int | None, source: CapacitySource) -> Finding:
    """`finding` with the engine's own capacity (`tokens` per rank, live or logged) beside the plan's figure its change
    starts from: in `start` and in the evidence line that names it (unchanged where it starts from none, or no figure)."""
    if finding.start is None or tokens is None:
        return finding
    start = finding.start.beside(tokens, source)
    evidence = tuple(start.said() if fact == finding.start.line else fact for fact in finding.evidence)
    return finding.model_copy(update={"start": start, "evidence": evidence})


class LayoutOptions(BaseModel):
    """The layouts an engine's release runs over the same GPUs with a smaller attention TP, and, where it runs
    none, why in its own words (a release without the flag, a backend that ignores it): the layout rules
    then say that, never that the weights need today's layout."""

    model_config = ConfigDict(frozen=True)

    layouts: tuple[LaunchSettings, ...] = ()
    none_because: str | None = None  # set only where `layouts` is empty


class Thresholds(BaseModel):
    """When a measured difference becomes a finding."""

    model_config = ConfigDict(frozen=True)

    unexplained_bytes: int = GIB  # per rank, observed worker bytes above the predicted resident bytes
    weights_excess_fraction: float = 0.03  # engine-reported weights above the prediction
    imbalance_bytes: int = GIB  # free-memory spread between ranks, other processes discounted
    req_to_token_bytes: int = GIB
    reserve_excess_bytes: int = GIB  # vLLM: engine KV pool below the predicted available KV memory
    reserve_loss_fraction: float = 0.02  # SGLang: a lower mem_fraction_static costing this share of capacity
    advice_gain_fraction: float = 0.10  # layout/flag advice is a warning when it gains this share


def rank_label(row: RankLedger, ledger: Ledger, engine_id: str | None = None) -> str:
    """'tp3', 'dp1/tp0', 'pp1/tp2', prefixed by the engine id when known."""
    parts = []
    if ledger.layout.dp > 1:
        parts.append(f"dp{row.dp_rank}")
    if ledger.layout.pp > 1:
        parts.append(f"pp{row.pp_rank}")
    parts.append(f"tp{row.tp_rank}")
    label = "/".join(parts)
    return f"{engine_id}/{label}" if engine_id else label


def node_tokens(ledger: Ledger) -> int:
    """Tokens held by every KV pool of the layout: capacity × DP ranks (attention DP or replicas)."""
    return ledger.token_capacity * ledger.layout.dp


def advice_severity(gain: int, base: int, thresholds: Thresholds) -> Severity:
    """Advice is a warning when it gains `advice_gain_fraction` of the capacity, else info."""
    return Severity.WARNING if base > 0 and gain >= thresholds.advice_gain_fraction * base else Severity.INFO


def larger_plan(ledger: Ledger, replay: WhatIf, fixed: LaunchSettings) -> Ledger | None:
    """The plan of `fixed` where it holds more tokens than `ledger` does (a fix worth advising), else None."""
    alt = replay.solve(fixed)
    return alt if alt is not None and alt.token_capacity > ledger.token_capacity else None


def all_ranks(ledger: Ledger) -> tuple[tuple[int, ...], tuple[str, ...]]:
    return tuple(r.gpu_index for r in ledger.ranks), tuple(rank_label(r, ledger) for r in ledger.ranks)


#: A rule over a plan alone: the shared ones (`diagnose_rules`) and each engine's own.
LedgerRule: TypeAlias = "Callable[[Ledger, WhatIf, Thresholds], Finding | None]"
