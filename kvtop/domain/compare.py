"""`kvtop plan --compare`: one model, GPU and layout solved under each engine's default rules, and the
settings that give every other engine the reference engine's KV budget per rank.

The engines' memory settings are shares of different things (SGLang's `mem_fraction_static` of the
memory free before the weights load, vLLM's `gpu_memory_utilization` of total memory, TensorRT-LLM's
`free_gpu_memory_fraction` and LMDeploy's `cache_max_entry_count` of what is left after the weights),
so one share gives each a different cache. Every figure here is the one `plan --engine X` gives the same launch
(`planned_capacity`: its unmeasured terms calibrated, and the interval around it): the same budget is set through the
engine's absolute setting where its release has one (`EngineDiagnosis.absolute_budget`), else by searching its share,
and then re-solved by that same plan.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum

from pydantic import BaseModel, ConfigDict

from kvtop.domain.calibration.estimate import CapacityPlan, IntervalKind, planned_capacity
from kvtop.domain.calibration.node import NodeMeasure
from kvtop.domain.engine_launch import EngineLaunch, env_words
from kvtop.domain.engines.base import EngineResult, MeasuredInputs
from kvtop.domain.engines.measured_reads import MeasuredNotRead
from kvtop.domain.engines.registry import ENGINE_IDS, EngineId, display_name, engine_rules
from kvtop.domain.engines.versions import NOT_STATED, ResolvedVersion
from kvtop.domain.errors import InputError, KvtopError
from kvtop.domain.gpu_total_origin import GpuTotalOrigin
from kvtop.domain.launch import LaunchSettings, check_parallel, engine_flags, spelling_of
from kvtop.domain.launch_check import architecture_check
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.ledger import Ledger, layout_from_settings
from kvtop.domain.model import ModelSpec
from kvtop.domain.redact import quoted

ALL_ENGINES = "all"
COMPARE_FLAG = "--compare"
# What carries to every engine: the model, kvtop's layout, and the fields every engine spells.
CARRIED_FIELDS = ("model", "tp", "pp", "dp", "ep", "dcp", "context_length", "max_running_requests", "kv_cache_dtype")
# Fields that do not size anything: neither carried nor refused (`flags` are reported as not carried).
IGNORED_FIELDS = ("engine", "host", "port", "flags", "unknown_flags", "gpu_name")  # unknown flags are in `flags` too
SHARE_STEPS = 1000  # a searched share is shown, and re-solved, to 3 decimals


class SameBudgetMethod(str, Enum):
    """How an engine was given the reference's KV budget."""

    ABSOLUTE = "absolute"  # its absolute setting (bytes, tokens or blocks) for the release
    SHARE = "share"  # its memory share, searched to 3 decimals (the largest not above the budget)
    MOST = "most"  # even its largest share falls short: the most it reaches


class NotStarting(str, Enum):
    """Why a re-solved launch holds the budget yet would not start, as its engine's result says (`not_starting`)."""

    CONTEXT = "context"  # one request at the context needs more KV than the budget (a shorter one starts)
    WEIGHTS = "weights"  # the weights and the runtime leave no memory for KV at all
    OTHER = "other"  # anything else the engine's rule refuses (a pool a flag fixes, a state pool): its shortfall only


class EngineRow(BaseModel):
    """One engine's plan of the launch under its default rules (or why there is none)."""

    model_config = ConfigDict(frozen=True)

    engine: EngineId
    version: ResolvedVersion = ResolvedVersion()
    memory_fraction_flag: str
    memory_fraction_of: str  # what the engine's share is a share of
    memory_fraction: float | None = None  # None where the engine takes no share of memory (`memory_fraction_field`)
    memory_fraction_source: str | None = None
    # the setting that sized the cache in the engine's words where no share does (llama.cpp's `-c 0 (training
    # context 131,072)`, `EngineResult.capacity_setting`); None: `memory_fraction_flag memory_fraction` is it
    capacity_setting: str | None = None
    kv_cache_dtype: str | None = None  # the KV format the engine stores
    kv_budget_bytes: int | None = None  # per rank (the tightest)
    kv_bytes_per_token: int | None = None  # per rank (the largest)
    token_capacity: int | None = None  # per rank, as the engine would log it
    # the plan's interval per rank (`CapacityPlan`: `plan --engine X`'s ends and their case)
    token_capacity_min: int | None = None
    token_capacity_max: int | None = None
    kv_budget_min_bytes: int | None = None
    kv_budget_max_bytes: int | None = None
    interval_kind: IntervalKind | None = None
    max_running_requests: int | None = None
    fits: bool = False
    # the launch as the engine takes it (`LaunchSettings.engine_launch`: its line, the config file the line names, the
    # environment a rule read), each row's as `plan --json` writes it; None where the engine cannot plan the launch
    launch: EngineLaunch | None = None
    error: str | None = None  # the named state when the engine cannot plan this launch
    inputs_not_read: tuple[MeasuredNotRead, ...] = ()  # measured figures given that its rule does not read
    notes: tuple[str, ...] = ()  # its plan's notes (`Ledger.notes`: the engine's, an assumed nvidia-smi total)
    not_modelled: tuple[str, ...] = ()  # what its plan leaves out (`Ledger.not_modelled`)


class SameBudget(BaseModel):
    """One engine given the reference's KV budget per rank, re-solved under its own rules."""

    model_config = ConfigDict(frozen=True)

    engine: EngineId
    method: SameBudgetMethod | None = None
    flags: tuple[str, ...] = ()  # the whole launch in kvtop's spelling (`to_flags`: what `plan --` reads back)
    # the launch as the engine takes it at its release (`LaunchSettings.engine_launch`: TensorRT-LLM's serve options,
    # its YAML and a TensorRT engine's build flags), what the row prints; None where there is no launch to match
    launch: EngineLaunch | None = None
    # the KV memory the re-solved launch holds per rank: its budget, or its pool where a token or block
    # cap keeps the pool below the budget (SGLang's --max-total-tokens)
    kv_budget_bytes: int = 0
    token_capacity: int = 0
    token_capacity_min: int = 0  # the re-solved plan's interval per rank, as `plan` gives those flags
    token_capacity_max: int = 0
    reached: bool = False  # whether the engine can hold the reference's budget at all
    # whether the re-solved launch starts: a budget can be held yet start nothing (vLLM refuses a pool
    # that cannot hold one request at the context: 0 tokens), and the row says so, not a bare 0
    fits: bool = True
    shortfall_bytes: int = 0  # per rank, where it does not start (`EngineResult.shortfall_bytes`)
    not_starting: NotStarting | None = None  # why it does not start (None: it starts)
    starts_at_context: int | None = None  # the longest context it would start with (vLLM's estimate), where context is why
    error: str | None = None


class Comparison(BaseModel):
    """The launch under every engine named, the reference first."""

    model_config = ConfigDict(frozen=True)

    model_name: str
    layout: ParallelLayout
    gpu_total_bytes: int
    gpu_name: str | None
    gpu_total_origin: GpuTotalOrigin | None  # where the total came from, as the plan's inputs said it
    context_length: int  # the reference engine's (its rule decides it, also where it cannot plan the launch)
    kv_cache_dtype: str  # as asked ("auto": each engine's default)
    reference: EngineId
    rows: tuple[EngineRow, ...]
    target_kv_budget_bytes: int | None  # the reference's KV budget per rank (None: it has none to match)
    same_budget: tuple[SameBudget, ...]
    not_carried: tuple[str, ...] = ()  # the launch's own flags and environment (`NAME=VALUE`), not carried


def engines_named(text: str, first: EngineId | None = None) -> tuple[EngineId, ...]:
    """'sglang,vllm' or 'all' as engine ids, in the order given (`all`: the registry's order, `first` leading it: a
    pasted launch's engine is the reference its own launch is compared from, not SGLang by the registry's order)."""
    names = [name.strip() for name in text.split(",")]
    if names == [ALL_ENGINES]:
        return tuple(sorted(ENGINE_IDS, key=lambda engine: engine != first))  # stable: the rest keep their order
    valid = f"one of {', '.join(ENGINE_IDS)}, or {ALL_ENGINES}"
    for name in names:
        if name == ALL_ENGINES:
            raise InputError(f"{ALL_ENGINES} names every engine: give it alone, or list engines ({valid})", field=COMPARE_FLAG)
        if not name:
            raise InputError(f"an empty engine name in {quoted(text, 80)} ({valid})", field=COMPARE_FLAG)
        if name not in ENGINE_IDS:
            raise InputError(f"unknown engine {quoted(name)} ({valid})", field=COMPARE_FLAG)
        if names.count(name) > 1:
            raise InputError(f"{name} is named twice", field=COMPARE_FLAG)
    if len(names) < 2:
        raise InputError(f"name two engines or more, comma-separated ({valid})", field=COMPARE_FLAG)
    return tuple(names)


def check_comparable(settings: LaunchSettings) -> tuple[str, ...]:
    """Raise InputError naming the first engine-specific setting (the comparison is of every engine's
    defaults); return this launch's own flags and environment, which are not carried to the other engines."""
    for name, field in LaunchSettings.model_fields.items():
        if name in CARRIED_FIELDS or name in IGNORED_FIELDS or getattr(settings, name) == field.default:
            continue
        flag = spelling_of(settings.engine, name)
        if name == "engine_version":
            raise InputError(f"{COMPARE_FLAG} solves every engine under its latest modelled rules; drop it", field=flag)
        raise InputError(
            f"{display_name(settings.engine)}'s own setting: {COMPARE_FLAG} solves every engine at its defaults "
            "(the model, GPU, layout, context length, max running requests and KV dtype carry); drop it",
            field=flag,
        )
    # an environment variable a rule read is said as the shell sets it (`VLLM_USE_FLASHINFER_SAMPLER=0`, redacted as
    # the copied launch's `env`), never as a flag
    env = settings.engine_launch().env
    return tuple(env_words({name: env[name]})[0] if name in env else f"--{name}" for name in settings.flags)


def compare_engines(
    model: ModelSpec,
    settings: LaunchSettings,
    engines: tuple[EngineId, ...],
    *,
    gpu_total_bytes: int,
    gpu_name: str | None,
    measured: MeasuredInputs | None = None,
    load_mtp: bool = False,
    node_measures: tuple[NodeMeasure, ...] = (),
) -> Comparison:
    """Solve the launch under each engine's rules, then give every other engine the first one's budget; every
    solve is `plan`'s (`planned_capacity`, with this node's earlier starts `node_measures` as `plan` reads them)."""
    not_carried = check_comparable(settings)
    measured = measured or MeasuredInputs()

    def solve(launch: LaunchSettings) -> CapacityPlan:
        return planned_capacity(model, launch, gpu_total_bytes=gpu_total_bytes, gpu_name=gpu_name, measured=measured,
                                load_mtp=load_mtp, node_measures=node_measures)  # fmt: skip

    plans: dict[EngineId, CapacityPlan] = {}
    rows = []
    for engine in engines:
        try:
            plans[engine] = solve(_engine_settings(settings, engine))
        except KvtopError as error:
            rows.append(_failed_row(engine, str(error)))
            continue
        unregistered = architecture_check(plans[engine].ledger)
        if unregistered.refused:  # the engine has no class for the model: it would not start
            del plans[engine]
            rows.append(_failed_row(engine, unregistered.message))
            continue
        rows.append(_row(plans[engine]))
    reference = plans.get(engines[0])
    target = reference.ledger.engine.kv_budget_bytes if reference is not None and reference.ledger.engine.fits else None
    same: tuple[SameBudget, ...] = ()
    if target is not None:
        same = tuple(_same_budget(plans[e].ledger, target, solve) for e in engines[1:] if e in plans)
    return Comparison(
        model_name=model.name,
        layout=layout_from_settings(settings, model),
        gpu_total_bytes=gpu_total_bytes,
        gpu_name=gpu_name,
        gpu_total_origin=measured.shown_total_origin(gpu_name, gpu_total_bytes),
        context_length=_reference_context(model, settings, engines[0], reference.ledger if reference else None),
        kv_cache_dtype=settings.kv_cache_dtype,
        reference=engines[0],
        rows=tuple(rows),
        target_kv_budget_bytes=target,
        same_budget=same,
        not_carried=not_carried,
    )


def _reference_context(model: ModelSpec, settings: LaunchSettings, engine: EngineId, ledger: Ledger | None) -> int:
    """The context length the reference engine runs the launch with: its ledger's, else (it cannot plan the
    launch) its own rule (`EngineRules.context_length`) at its latest modelled release, never another engine's."""
    if ledger is not None:
        return ledger.context_length
    return engine_rules(engine).context_length(model, settings.model_copy(update={"engine": engine}), NOT_STATED)


def _engine_settings(settings: LaunchSettings, engine: EngineId) -> LaunchSettings:
    """The carried settings under `engine`; a KV dtype only where the engine accepts that same value."""
    values: dict[str, object] = {name: getattr(settings, name) for name in CARRIED_FIELDS}
    if settings.kv_cache_dtype != "auto":
        engine_flags(engine).refuse_kv_dtype(settings.kv_cache_dtype, spelling_of(engine, "kv_cache_dtype"), None)
    launch = LaunchSettings.model_validate({**values, "engine": engine})
    check_parallel(launch)
    return launch


def _failed_row(engine: EngineId, error: str) -> EngineRow:
    rules = engine_rules(engine)
    return EngineRow(
        engine=engine,
        memory_fraction_flag=rules.memory_fraction_flag,
        memory_fraction_of=rules.memory_fraction_of,
        error=error,
    )


def _row(plan: CapacityPlan) -> EngineRow:
    ledger = plan.ledger
    rules, result = engine_rules(ledger.settings.engine), ledger.engine
    return EngineRow(
        engine=ledger.settings.engine,
        version=ledger.version,
        memory_fraction_flag=rules.memory_fraction_flag,
        memory_fraction_of=rules.memory_fraction_of_at(ledger.settings, ledger.version),
        memory_fraction=None if rules.memory_fraction_field is None else result.memory_fraction,
        memory_fraction_source=result.memory_fraction_source,
        capacity_setting=result.capacity_setting,
        kv_cache_dtype=ledger.kv_format,
        kv_budget_bytes=result.kv_budget_bytes,
        kv_bytes_per_token=ledger.kv_bytes_per_token,
        token_capacity=result.token_capacity,
        token_capacity_min=plan.token_capacity_min,
        token_capacity_max=plan.token_capacity_max,
        kv_budget_min_bytes=plan.kv_budget_min_bytes,
        kv_budget_max_bytes=plan.kv_budget_max_bytes,
        interval_kind=plan.interval_kind,
        max_running_requests=result.max_running_requests,
        fits=result.fits,
        launch=ledger.settings.engine_launch(),
        inputs_not_read=result.inputs_not_read,
        notes=ledger.notes,
        not_modelled=ledger.not_modelled,
    )


def held_bytes(result: EngineResult) -> int:
    """The KV memory a plan holds per rank: its budget, or its pool where a cap on tokens or blocks keeps
    the pool below the budget (a pool padded past its budget, SGLang's extra page, counts the budget)."""
    return min(result.kv_budget_bytes, result.kv_pool_bytes) if result.fits else result.kv_budget_bytes


def _with(settings: LaunchSettings, update: dict[str, int | float]) -> LaunchSettings:
    """`settings` with `update`, validated again (the engine's own ranges)."""
    return LaunchSettings.model_validate({**settings.model_dump(), **update})


def _same_budget(ledger: Ledger, target: int, solve: Callable[[LaunchSettings], CapacityPlan]) -> SameBudget:
    """`ledger`'s engine given `target` bytes of KV per rank: its absolute setting where it has one that
    reaches it, else the largest share (to 3 decimals) whose budget is not above it; re-solved either way."""
    engine = ledger.settings.engine
    field = engine_rules(engine).memory_fraction_field
    if field is None:  # no share of memory: only its absolute setting (llama.cpp's context) sizes it
        return _absolute_only(ledger, target, solve)

    def at_share(steps: int) -> CapacityPlan | None:
        try:
            return solve(_with(ledger.settings, {field: steps / SHARE_STEPS}))
        except KvtopError:  # a share the engine refuses (LMDeploy takes none of 1)
            return None

    # the largest share the engine takes (1, else 0.999): the most KV it can be given
    tops = [(steps, solved) for steps in (SHARE_STEPS, SHARE_STEPS - 1) if (solved := at_share(steps)) is not None]
    if not tops:
        return SameBudget(engine=engine, error=f"no share of {engine_rules(engine).memory_fraction_flag} solves")
    top_steps, most = max(tops, key=lambda item: item[1].ledger.engine.kv_budget_bytes)
    if most.ledger.engine.kv_budget_bytes < target:
        return _resolved(most, SameBudgetMethod.MOST, reached=False)
    update = engine_rules(engine).diagnosis.absolute_budget(ledger, target)
    if update is not None:
        try:
            return _resolved(solve(_with(ledger.settings, update)), SameBudgetMethod.ABSOLUTE, reached=True)
        except KvtopError:
            pass  # the engine refuses that setting here: search its share instead
    low, high, best = 1, top_steps, None
    while low <= high:  # the largest share whose budget is not above the target
        middle = (low + high) // 2
        solved = at_share(middle)
        if solved is not None and solved.ledger.engine.kv_budget_bytes <= target:
            best, low = solved, middle + 1
        else:
            high = middle - 1
    best = best or at_share(1)  # even the smallest share is above it: the smallest
    if best is None:
        return SameBudget(engine=engine, error=f"no share of {engine_rules(engine).memory_fraction_flag} solves")
    return _resolved(best, SameBudgetMethod.SHARE, reached=True)


def _absolute_only(ledger: Ledger, target: int, solve: Callable[[LaunchSettings], CapacityPlan]) -> SameBudget:
    """An engine with no memory share: the absolute setting that holds `target` bytes (its context), if any."""
    update = engine_rules(ledger.settings.engine).diagnosis.absolute_budget(ledger, target)
    if update is None:
        return SameBudget(engine=ledger.settings.engine, error="no setting of it reaches that budget")
    try:
        return _resolved(solve(_with(ledger.settings, update)), SameBudgetMethod.ABSOLUTE, reached=True)
    except KvtopError as error:
        return SameBudget(engine=ledger.settings.engine, error=str(error))


def not_starting(result: EngineResult) -> NotStarting | None:
    """Why `result` would not start: the context where the engine says one request at it needs more KV than the
    budget (`EngineResult.short_of_context`), the weights where no KV memory is left, else another rule, said by its
    shortfall alone (None: it starts)."""
    if result.fits:
        return None
    if result.short_of_context:
        return NotStarting.CONTEXT
    return NotStarting.WEIGHTS if result.kv_budget_bytes <= 0 else NotStarting.OTHER


def _resolved(plan: CapacityPlan, method: SameBudgetMethod, *, reached: bool) -> SameBudget:
    ledger = plan.ledger
    why = not_starting(ledger.engine)
    return SameBudget(
        engine=ledger.settings.engine,
        method=method,
        flags=tuple(ledger.settings.to_flags()),
        launch=ledger.settings.engine_launch(),
        kv_budget_bytes=held_bytes(ledger.engine),
        token_capacity=ledger.engine.token_capacity,
        token_capacity_min=plan.token_capacity_min,
        token_capacity_max=plan.token_capacity_max,
        reached=reached,
        fits=ledger.engine.fits,
        shortfall_bytes=0 if ledger.engine.fits else ledger.engine.shortfall_bytes,
        not_starting=why,
        starts_at_context=ledger.engine.estimated_max_model_len if why is NotStarting.CONTEXT else None,
    )
