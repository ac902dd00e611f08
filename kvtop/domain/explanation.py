"""What `kvtop explain` says about a log: the figures it read, the rebuilt capacity, and the verdict.

A log prints memory rounded to two decimals, so every measured input is an interval and so is
the prediction: `token_capacity_min` uses the least favourable ends, `token_capacity_max` the most
favourable. The verdict is `match` when the logged capacity lies inside, `mismatch` (with the gap and
its likely cause) when it does not, `insufficient` when the log lacks what the computation needs
(named), and `failed_start` when the log shows the engine refusing to start.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from enum import Enum
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, computed_field, model_validator

from kvtop.domain.calibration.terms import TermEstimate, TermSource
from kvtop.domain.capacity_assumption import CapacityAssumption
from kvtop.domain.capacity_gap import CapacityGap, capacity_gap_of, tokens_beyond
from kvtop.domain.diagnose_findings import Finding
from kvtop.domain.engine_log_records import Measured
from kvtop.domain.engines.budget_step import BudgetStep
from kvtop.domain.engines.catalogue import display_name, engine_module
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.explain_causes import MismatchFacts, likely_cause, token_cap
from kvtop.domain.gpu_total_origin import GpuTotalOrigin, total_said
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.launch_change import KVTOP_SPELLING, launch_change
from kvtop.domain.ledger_values import Ledger
from kvtop.domain.wording import gib

Verdict = Literal["match", "mismatch", "insufficient", "failed_start"]
EstimatedField = Literal["free_before_load_bytes", "free_after_load_bytes", "non_kv_bytes", "available_kv_bytes"]
PLACEHOLDER_GPU_BYTES = 80 << 30  # only the automatic memory fraction reads the GPU total; a log states it
Ends = tuple[int, int, int]  # (low, value, high) bytes of a rounded figure
# where the memory fraction an engine's budget used came from: a flag (given, or the log's printed arguments), the
# log's own line, or the release's default (the log states none)
FractionOrigin = Literal["flag", "log", "default"]


class Logged(BaseModel):
    """Every number the log states that the explanation uses (bytes or counts)."""

    model_config = ConfigDict(frozen=True)

    token_capacity: int | None = None
    num_gpu_blocks: int | None = None  # vLLM V0 prints blocks, not tokens (token_capacity = blocks × block)
    kv_bytes_per_token: int | None = None  # (K + V) ÷ (#tokens + page), where both are printed
    # the ends of that figure from the printed sizes' rounding (0.12 GiB: 0.115–0.125 GiB)
    kv_bytes_per_token_low: int | None = None
    kv_bytes_per_token_high: int | None = None
    free_before_load_bytes: int | None = None
    free_after_load_bytes: int | None = None
    weights_bytes: int | None = None  # the served (target) model's load only
    # how the views label that figure, in the engine's own words (the line it was read from), set by its explainer
    weights_label: str = "weights"
    # a speculative draft's own load, where the log prints a second one: free after load is after both
    free_after_target_load_bytes: int | None = None
    draft_weights_bytes: int | None = None
    available_kv_bytes: int | None = None
    available_kv_rank: str | None = None  # the rank whose figure is the minimum ('TP1', 'unranked')
    max_running_requests: int | None = None
    max_concurrency: float | None = None
    context_length: int | None = None
    ranks_seen: int = 0
    gpu_total_bytes: int | None = None  # the device total the engine printed (CUDA's), where it did
    memory_fraction: float | None = None  # the memory fraction the engine printed it was asked for, where it did
    # the stated capacity rests on a default the log does not state (TensorRT-LLM's tokens per primary-pool block
    # of a release read from its wording): the reading taken, the release and why, the other readings (typed; the
    # views word it with capacity_assumption.assumption_words)
    capacity_assumption: CapacityAssumption | None = None


class LoggedDevice(BaseModel):
    """The GPU's total and the memory fraction an engine printed at its start, each with the line that printed it
    in the engine's words (None: not printed). explain solves with them where no --gpu or flag says, as measured
    figures, so that neither the 80 GiB stand-in nor a default stands beside a log that states otherwise."""

    model_config = ConfigDict(frozen=True)

    total: Measured | None = None
    total_line: str = ""
    fraction: float | None = None
    fraction_line: str = ""


def logged_total_first(
    logged: Measured | None, line: str, given_bytes: int | None, given_source: TermSource, gpu_name: str | None,
    origin: GpuTotalOrigin | None,
) -> tuple[int | None, list[str]]:
    """The device total explain solves with where the log prints one (CUDA's, which the engine measured and sized
    its pool from): the log's over --gpu's GPU-table total (assumed: what the card is taken to report); only a
    measured total (--gpu-memory) overrides it. Returns (the log's total to solve with, else None; notes saying
    a given total the log contradicts, by how much, beyond the printed figure's rounding). `origin`: what the given
    total is, where its chooser said (a larger memory variant's --gpu-memory is nvidia-smi's, as the table's is)."""
    if logged is None:
        return None, []
    if given_bytes is None:
        return logged.value_bytes, []
    differs = not logged.low_bytes <= given_bytes <= logged.high_bytes
    gap = given_bytes - logged.value_bytes
    by = f"{'+' if gap >= 0 else '−'}{gib(abs(gap))}"
    if given_source == "measured":
        said = f"--gpu-memory {gib(given_bytes)}: kvtop was told it and solves with it, but the log prints {line} ({by})"
        return None, [said] if differs else []
    given = (f"--gpu-memory {gib(given_bytes)} (nvidia-smi's total of a larger memory variant of the {gpu_name})"
             if origin is GpuTotalOrigin.VARIANT else f"--gpu {gpu_name or ''}: the GPU table's total {gib(given_bytes)}")
    said = (f"{given} differs from the log's {line} by {by}; kvtop solves with the log's (CUDA's total, which the "
            "engine measured)")  # fmt: skip
    return logged.value_bytes, [said] if differs else []


class PoolPart(str, Enum):
    """Which part of the KV pool a printed size is of, as the engine's line names it (`explain --json`'s
    `pool_checks[].name`)."""

    K = "K"
    V = "V"
    KV = "KV"  # K and V in one figure: SGLang's `KV size`, TensorRT-LLM's pool memory
    BLOCK = "block"  # one block of the pool: LMDeploy TurboMind's `block_size = … MB`
    SWA_K = "SWA K"  # llama.cpp's sliding-window cache, its K and V
    SWA_V = "SWA V"

    def __str__(self) -> str:
        return self.value

    @property
    def whole_pool(self) -> bool:
        """The part is the whole KV pool (K and V together): its name already says 'KV'."""
        return self is PoolPart.KV


class PoolSizeCheck(BaseModel):
    """A pool size the log printed, against (#tokens + page) × the predicted bytes of that pool."""

    model_config = ConfigDict(frozen=True)

    name: PoolPart
    tokens: int
    rows: int  # #tokens + page: the rows the engine allocates
    logged_text: str
    logged_bytes: int
    predicted_bytes: int
    predicted_bytes_per_token: int
    kv_dtype: str  # the KV dtype the prediction used
    within_rounding: bool
    unit: str = "GiB"  # the unit the log printed it in (LMDeploy's TurboMind prints a block in MiB)


class EstimateOrigin(str, Enum):
    """What an estimated input's figure is: plan's own terms for it (each calibrated or assumed, as `source` says: the
    figure `plan` charges), or an assumption stated beside them (an engine's fallback figure, the log's own bounds).
    A caller that solves differently by it reads this, never the basis's words."""

    PLAN_TERMS = "plan_terms"
    ASSUMPTION = "assumption"


class EstimatedInput(BaseModel):
    """One input the log lacks, as kvtop estimated it, and the value the logged capacity implies."""

    model_config = ConfigDict(frozen=True)

    field: EstimatedField  # the MeasuredInputs field estimated
    label: str  # in words: "free memory before the weights load"
    low_bytes: int
    value_bytes: int
    high_bytes: int
    basis: str  # how kvtop estimates it: the calibrated terms with their errors, or the assumption
    source: TermSource = "assumed"  # calibrated: from the fitted terms (docs/calibration.md); else assumed
    origin: EstimateOrigin = EstimateOrigin.ASSUMPTION  # plan's terms, or an assumption beside them
    implied_bytes: int | None = None  # the value that rebuilds the logged capacity (None: no value does)
    # the other terms the rebuild estimates, whose errors the interval also holds (the weights book's where the log
    # states no weights; CUDA's total where the budget reads the calibrated one), each with its unscaled error
    others: tuple[TermEstimate, ...] = ()


_Explained = TypeVar("_Explained", bound="Explanation")


class Explanation(BaseModel):
    """The engine's logged capacity rebuilt from the same inputs, with a verdict."""

    model_config = ConfigDict(frozen=True)

    engine: str
    engine_version: ResolvedVersion = ResolvedVersion()  # whose rules were used, and why
    logged: Logged
    token_capacity: int | None = None
    token_capacity_min: int | None = None
    token_capacity_max: int | None = None
    kv_bytes_per_token: int | None = None
    verdict: Verdict
    gap_tokens: int | None = None  # logged − the interval's nearer end, never its centre (`gap.beyond_end_tokens`)
    pool_gap_bytes: int | None = None  # logged − predicted size of the printed pools (or block) that disagree
    cause: str | None = None
    # the cause is read from the log's own figures (its printed pool sizes hold kvtop's cell: a token cap), not guessed
    cause_from_log: bool = False
    cause_flags: tuple[str, ...] | None = None  # the engine flags with which kvtop rebuilds the logged figure
    # the settings of every change that rebuilds the logged figures (one: the cause; several: not settled)
    cause_settings: tuple[LaunchSettings, ...] = ()
    missing: tuple[str, ...] = ()
    ledger: Ledger | None = None  # the central prediction, with the engine's steps
    pool_checks: tuple[PoolSizeCheck, ...] = ()
    startup_error: str | None = None  # the engine's own error line, when the log shows a refused start
    log_cut_at_bytes: int | None = None  # only this much of a longer log was read (EngineLog.cut_at_bytes)
    notes: tuple[str, ...] = ()  # inputs not read from the log (a flag, the log's KV dtype), said once each
    # an input the log lacks, estimated as `plan` does because the operator named the GPU (match/mismatch
    # are then "with an estimated input")
    estimated: EstimatedInput | None = None
    # why kvtop cannot rebuild this log at all (a model, weight format or setting it does not model): the
    # log's own figures and refusal are still read (`insufficient`, or `failed_start` when it refused)
    unsolved: str | None = None
    # a refused start (`failed_start`) after the engine printed its capacity: how that figure rebuilds
    capacity_verdict: Literal["match", "mismatch", "insufficient"] | None = None

    @property
    def gap(self) -> CapacityGap | None:
        """The logged capacity's gap to the interval, derived from the log and the interval fields (never stored
        beside them, so it cannot disagree with them): None where the log lies within the interval or a figure is
        missing."""
        return capacity_gap_of(self.logged.token_capacity, self.token_capacity, self.token_capacity_min,
                               self.token_capacity_max)  # fmt: skip

    @computed_field  # type: ignore[prop-decorator]
    @property
    def gap_bytes(self) -> int | None:
        """The capacity gap in bytes: `gap_tokens` × the predicted bytes per token (`kv_bytes_per_token`), derived so the
        two can never disagree; 0 where the tokens agree (only printed pools differ), None where no gap is said or
        no cell was predicted. `explain --json` writes it under its old key."""
        return _derived_gap_bytes(self.gap_tokens, self.kv_bytes_per_token)

    @model_validator(mode="before")
    @classmethod
    def _gap_bytes_is_derived(cls, data: Any) -> Any:
        """`gap_bytes` is derived (`gap_tokens` × `kv_bytes_per_token`): a dump's own value (`model_dump` writes the
        computed field) reads back, None read as not given; one that differs from the derived figure is refused,
        never silently dropped (the model ignores unknown fields)."""
        if not isinstance(data, Mapping) or "gap_bytes" not in data:
            return data
        given, rest = data["gap_bytes"], {key: value for key, value in data.items() if key != "gap_bytes"}
        tokens, cell = rest.get("gap_tokens"), rest.get("kv_bytes_per_token")
        if given is not None and (not isinstance(tokens, int | None) or not isinstance(cell, int | None)
                                  or given != _derived_gap_bytes(tokens, cell)):  # fmt: skip
            raise ValueError("gap_bytes is gap_tokens × kv_bytes_per_token (derived): set gap_tokens")
        return rest

    @model_validator(mode="after")
    def _gap_tokens_are_the_gap(self) -> Explanation:
        """A capacity mismatch says its gap's figure in `gap_tokens` (0 where only printed pool sizes disagree), checked
        on construction and on every copy (`model_copy`)."""
        _check_gap_tokens(self)
        return self

    def model_copy(self: _Explained, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> _Explained:
        """A copy checked as construction checks it: pydantic's `model_copy(update=…)` runs no validator, and `judge`,
        the engines' explainers and the readers all copy; a copy that moved the log or the interval but kept
        `gap_tokens` (or set another) would print one gap in the verdict line (`gap`, derived) and another in
        `--json` (`gap_tokens`), so it is refused as a built one is; so is a copy that sets `gap_bytes` (derived)."""
        if update is not None and "gap_bytes" in update:
            raise ValueError("gap_bytes is gap_tokens × kv_bytes_per_token (derived): set gap_tokens")
        copied = super().model_copy(update=update, deep=deep)
        _check_gap_tokens(copied)
        return copied


def _derived_gap_bytes(gap_tokens: int | None, kv_bytes_per_token: int | None) -> int | None:
    """`Explanation.gap_bytes`: `gap_tokens` × `kv_bytes_per_token`, 0 where the tokens agree, None where no gap is
    said or no cell was predicted."""
    if gap_tokens is None:
        return None
    if gap_tokens == 0:
        return 0
    return gap_tokens * kv_bytes_per_token if kv_bytes_per_token is not None else None


def _check_gap_tokens(result: Explanation) -> None:
    """Raise ValueError where a capacity mismatch's `gap_tokens` is not its gap's figure (`Explanation.gap`)."""
    judged = "mismatch" in (result.verdict, result.capacity_verdict)
    gap = result.gap
    want = gap.beyond_end_tokens if gap is not None else 0
    if judged and result.gap_tokens is not None and result.gap_tokens != want:
        raise ValueError(f"gap_tokens {result.gap_tokens:,} is not the log's gap to the interval ({want:,})")


def judge(
    engine: str,
    logged: Logged,
    central: Ledger,
    low: int,
    high: int,
    settings: LaunchSettings,
    kv_room_bytes: int | None,
    gpu_total_bytes: int | None,
    *,
    kv_memory_logged: bool,
    predicted_tokens: int | None = None,
) -> Explanation:
    """`match` when the logged capacity lies in [low, high], else `mismatch` with the gap and its likely cause.

    `kv_memory_logged`: the log states the KV memory itself (vLLM), so only geometry can differ.
    `predicted_tokens`: the central figure as the engine prints it, where that is not the ledger's capacity.
    """
    got = logged.token_capacity
    assert got is not None
    cell = central.kv_bytes_per_token
    plan = central.token_capacity if predicted_tokens is None else predicted_tokens
    base = Explanation(
        engine=engine,
        logged=logged,
        token_capacity=plan,
        token_capacity_min=low,
        token_capacity_max=high,
        kv_bytes_per_token=cell,
        ledger=central,
        verdict="match",
    )
    if low <= got <= high:
        return base
    gap_tokens = tokens_beyond(got, low, high)
    full = central.ranks[0].kv.pool("full")
    dtype = settings.kv_cache_dtype if settings.kv_cache_dtype != "auto" or full is None else full.torch_dtype
    facts = MismatchFacts(
        engine_name=display_name(engine),
        kv_memory_logged=kv_memory_logged,
        logged_tokens=got,
        gap_tokens=gap_tokens,
        cell_bytes=cell,
        model_name=central.model.name,
        kv_dtype=dtype,
        tp=settings.tp,
        gpus=settings.tp * settings.pp,
        ranks_seen=logged.ranks_seen,
        page_size=central.engine.page_size,
        context_length=central.context_length,
        logged_pool_bytes_per_token=logged.kv_bytes_per_token,
        logged_pool_bytes_per_token_ends=_ends_of(logged.kv_bytes_per_token_low, logged.kv_bytes_per_token_high),
        kv_room_bytes=kv_room_bytes,
        gpu_total_bytes=gpu_total_bytes,
        token_caps=token_caps_of(settings),
    )
    capped = token_cap(facts)
    update = {"verdict": "mismatch", "gap_tokens": gap_tokens}  # its bytes at `cell` derived (`gap_bytes`)
    return base.model_copy(update={**update, "cause": capped or likely_cause(facts), "cause_from_log": bool(capped)})


def capacity_gap(result: Explanation) -> CapacityGap | None:
    """The capacity gap of a mismatch (the end it is counted from, the plan's centre beside it), as the result's log and
    interval give it (`Explanation.gap`); None where the logged capacity is not outside the interval (a match, a
    geometry mismatch at equal tokens, no verdict) or the result says no capacity gap (`gap_tokens` None: an
    `insufficient` result, such as Ray's folded workers without a geometry, that only its printed pools made a
    mismatch). The verdict line and `--json` say the one figure, `gap_tokens` being checked to be it."""
    return result.gap if result.verdict == "mismatch" and result.gap_tokens else None


def token_caps_of(settings: LaunchSettings) -> str:
    """What caps the engine's tokens apart from memory, in its own launch's names at the settings' release: the
    settings its rules name as caps (`cap_fields`: SGLang's --max-total-tokens, vLLM's --num-gpu-blocks-override,
    TensorRT-LLM's kv_cache_config.max_tokens, a YAML key), or only the context bound."""
    # the engine's package by id (as launch.py reads its FLAGS): registry sits above this module (it names the
    # protocols, which name Explanation), so importing it here would close an import circle
    cap_fields: tuple[str, ...] = engine_module(settings.engine).RULES.cap_fields
    # named as a count the launch would set; a cap its release's launch does not take (LMDeploy's --num-gpu-blocks
    # before 0.18.0) has no name and is left out; kvtop's own name (no launch at the release) is said as such
    changes = [launch_change(settings, settings.model_copy(update={field: 1})) for field in cap_fields]
    flags = [" / ".join(dict.fromkeys(change.names)) + (f" ({KVTOP_SPELLING})" if change.spelled_by else "")
             for change in changes if change.names]  # fmt: skip
    return f"a {' or '.join(flags)} setting or the context bound" if flags else "the context bound"


def _ends_of(low: int | None, high: int | None) -> tuple[int, int] | None:
    return None if low is None or high is None else (low, high)


def step_source(step: BudgetStep) -> str:
    """Where a budget step's figure came from, in a word, as explain prints it beside the figure: its term's
    source (measured, calibrated, assumed), 'measured' for a figure read from the log or given, '' for the
    engine's arithmetic on them (a default or a stand-in says so in its label; the line a figure was read from
    is the step's note)."""
    return step.source or ("measured" if step.measured else "")


def sources_said(ledger: Ledger) -> Ledger:
    """Every step's `source` as `step_source` words it (a figure read from the log: measured), so the text, the
    JSON and any other view read one word per step, whichever engine's explainer marked it."""
    return steps_said(ledger, lambda s: {"source": step_source(s)} if step_source(s) and s.source is None else None)


def steps_said(ledger: Ledger, said: Callable[[BudgetStep], dict[str, object] | None]) -> Ledger:
    """The ledger with each budget step `said` answers for updated (its label, note, measured…), as explain
    words an input's origin that the budget, which solves plans too, cannot know. The updated step is validated
    as a new `BudgetStep` (model_copy would take a misspelt field or a wrong type silently)."""

    def updated(step: BudgetStep, update: dict[str, object]) -> BudgetStep:
        unknown = set(update) - set(BudgetStep.model_fields)
        if unknown:
            raise ValueError(f"not fields of a budget step: {sorted(unknown)}")
        return BudgetStep.model_validate({**step.model_dump(), **update})

    steps = tuple(updated(step, update) if (update := said(step)) else step for step in ledger.engine.steps)
    return ledger.model_copy(update={"engine": ledger.engine.model_copy(update={"steps": steps})})


def stand_in_gpu_said(ledger: Ledger) -> Ledger:
    """The GPU total's step (its role, whatever the engine's wording), when no --gpu was given and it holds the
    stand-in, named as the stand-in it is (never as measured); a total the log printed stays the log's, even at
    exactly the stand-in's bytes."""
    stand_in = {"label": "GPU memory (a stand-in: pass --gpu)", "measured": False, "source": "assumed"}

    def said(step: BudgetStep) -> dict[str, object] | None:
        held = step.role == "gpu_total" and step.bytes == PLACEHOLDER_GPU_BYTES
        return stand_in if held and not step.measured else None

    return steps_said(ledger, said)


def total_origin_said(ledger: Ledger, origin: GpuTotalOrigin) -> Ledger:
    """The GPU total's step (its role) labelled from where its chooser said the total came (`origin`: --gpu's table,
    --gpu-memory, NVML), never read back from its bytes; a measured step (the operator's total, NVML's, a log's) keeps
    its own label, a stand-in is `stand_in_gpu_said`'s, and CUDA's own total an engine sizes from in its place (role
    `cuda_total`: vLLM's "GPU memory as CUDA reports it", calibrated) keeps the engine's, whatever its bytes."""
    label = f"GPU memory ({total_said(ledger.gpu_name, origin)})"

    def said(step: BudgetStep) -> dict[str, object] | None:
        stand_in = step.label.startswith("GPU memory (a stand-in")
        return {"label": label} if step.role == "gpu_total" and not step.measured and not stand_in else None

    return steps_said(ledger, said)


def logged_total_said(ledger: Ledger, line: str = "", total: int | None = None) -> Ledger:
    """The GPU total's step (its role) named as the log's own figure, as the available KV memory is: the measured
    step, or the one of `total` bytes (an estimate's ledger, solved at the logged total); `line`: the line that
    printed it, kept as the step's note."""
    read = {"note": f"the log's {line}"} if line else {}
    logged: dict[str, object] = {"label": "GPU memory (logged)", "measured": True, **read}

    def said(step: BudgetStep) -> dict[str, object] | None:
        found = step.measured if total is None else step.bytes == total
        return logged if step.role == "gpu_total" and found else None

    return steps_said(ledger, said)


def fraction_said(ledger: Ledger, origin: FractionOrigin, line: str = "") -> Ledger:
    """The memory fraction's step (its role; its label is the engine's own wording) said as the log's (`line`, kept
    as its note) or as a default the log does not state; a flag's is the budget's wording."""
    if origin == "flag":
        return ledger
    suffix = ", the log's fraction" if origin == "log" else ", default (not in the log)"

    def said(step: BudgetStep) -> dict[str, object] | None:
        if step.role != "memory_fraction":
            return None
        read = {"note": f"the log's {line}", "source": "measured"} if origin == "log" and line else {}
        return {"label": step.label + suffix, **read}

    return steps_said(ledger, said)


def findings_beside_verdict(result: Explanation, findings: Sequence[Finding]) -> tuple[Finding, ...]:
    """The findings that do not contradict the verdict: one whose change a rebuilding cause already makes (the
    verdict says fp8 KV may be what ran; a finding would still advise switching to fp8) is left out — one fact."""
    if result.ledger is None or not result.cause_settings:
        return tuple(findings)
    ran = result.ledger.settings.model_dump()
    causes = [cause.model_dump() for cause in result.cause_settings]

    def said(finding: Finding) -> bool:
        if finding.fix_settings is None:
            return False
        change = {k: v for k, v in finding.fix_settings.model_dump().items() if ran.get(k) != v}
        return bool(change) and any(all(cause.get(k) == v for k, v in change.items()) for cause in causes)

    return tuple(finding for finding in findings if not said(finding))
