"""predict(model, settings, device) → Ledger: both books for every rank, solved the engine's way.

The tightest rank decides: SGLang sizes every rank from the minimum free memory over the
world and the minimum token count over pipeline stages; vLLM takes the minimum block count
over its workers. Each rank's row then shows what it really holds at that shared capacity.
"""

from __future__ import annotations

from kvtop.domain.deployment import (
    BudgetTerm,
    Charge,
    SpecKind,
    TermInputs,
    resident_bytes,
    with_draft_config,
)
from kvtop.domain.engines.base import EngineInputs, EngineResult, MeasuredInputs
from kvtop.domain.engines.protocols import EngineRules
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.stated_release import stated_release
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.errors import InputError, LayoutError, UnsupportedModelError
from kvtop.domain.kv import KvBook, KvFormat, KvPool, KvStorage, kv_book
from kvtop.domain.kv_format import resolve_kv_format
from kvtop.domain.launch import LaunchSettings, spelling_of
from kvtop.domain.layout import ParallelLayout, pp_layer_range, validate_layout
from kvtop.domain.ledger_values import Ledger as Ledger
from kvtop.domain.ledger_values import RankLedger as RankLedger
from kvtop.domain.memo import Memo
from kvtop.domain.model import ModelSpec
from kvtop.domain.served_model import served_model
from kvtop.domain.stage_weights import logs_one_stage, stage_measured_weights
from kvtop.domain.weights import WeightRow, WeightsBook, forget_books, weights_book


def _respelled(err: LayoutError, engine: str) -> LayoutError:
    """The layout's refusal naming the engine's own flag first where kvtop's is its own coinage: '--dcp'
    ('--cp/--dcp' for LMDeploy's --cp); --tp, --pp, --dp and --ep are every engine's words already."""
    flag = err.field or ""
    own = spelling_of(engine, "dcp") if flag == "--dcp" else flag
    if own == flag:
        return err
    return LayoutError(err.detail, field=f"{own}/{flag}", source=err.source)  # the reason without field or file


def _unregistered_first(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> None:
    """Where the config or the layout is refused, a model class the engine's release does not register is said
    instead: the engine never reaches the heads or the config without its class (`launch_check` orders it first
    alike; Qwen2_5OmniModel on SGLang 0.5.23: "no model class" at every TP, not "28 heads" at TP 8)."""
    check = engine_rules(settings.engine).architectures.check(model, settings, version)
    if check.refused:
        raise UnsupportedModelError(f"{check.message} ({check.source})", field="--model")


def layout_from_settings(settings: LaunchSettings, model: ModelSpec | None = None) -> ParallelLayout:
    """The launch's layout from its flags, with the world its engine states (`EngineRules.world_ranks`): with the
    model where the caller has it (an engine whose backend is the model's, LMDeploy's, decides the world by it, as
    the ledger does), else from the launch alone."""
    world = engine_rules(settings.engine).world_ranks(model, settings, stated_release(settings))
    return with_world(_flag_layout(settings), world)


def _flag_layout(settings: LaunchSettings) -> ParallelLayout:
    """The layout as the launch's flags say it, before its engine states a world (`with_world`)."""
    rules = engine_rules(settings.engine)
    return ParallelLayout(
        tp=settings.tp,
        pp=settings.pp,
        dp=settings.dp,
        ep=settings.effective_ep,
        dcp=settings.dcp,
        dp_attention=settings.enable_dp_attention,
        dcp_splits_kv_heads=rules.dcp_splits_kv_heads,
        experts_over_replicas=rules.experts_over_replicas,
    )


def with_world(layout: ParallelLayout, world: int | None) -> ParallelLayout:
    """The layout with the engine's stated world (None: as it is): its DP ranks inside it, attention data-parallel."""
    if world is None:
        return layout
    return layout.model_copy(update={"world": world, "dp_attention": layout.dp > 1})


def _without_idle_ep(
    rules: EngineRules, model: ModelSpec, layout: ParallelLayout, settings: LaunchSettings, version: ResolvedVersion
) -> tuple[ParallelLayout, str | None]:
    """An expert-parallel launch of a model without routed experts, as the engine's release takes it: the layout
    at EP 1 and the note saying so where EP holds no memory; the engine's refusal (LayoutError) otherwise. A release
    that does not read the size at all is planned at EP 1 with its one note, experts or not."""
    unread = rules.expert_parallel_unread(model, settings, version) if layout.ep > 1 else None
    if unread:
        return layout.model_copy(update={"ep": 1}), unread
    if model.moe is not None or not settings.expert_parallel_asked:
        return layout, None
    note = rules.expert_parallel_without_experts(model, settings, version)
    return layout.model_copy(update={"ep": 1}), note


#: The weights row that holds what the calibrated weights term counts beyond the book (docs/calibration.md).
CALIBRATED_WEIGHTS_ROW = "calibrated_beyond_book"


def _with_calibrated_weights(weights: WeightsBook, measured: MeasuredInputs) -> WeightsBook:
    """The stage's book with the calibrated weights term's bytes beyond it as one row (an engine's loader
    holding more than the checkpoint, e.g. vLLM's MXFP4 experts; a node's own measure): the budget, the
    weights table and the rank's resident bytes then read one figure. None to add where the weights were
    measured."""
    extra = measured.weights_extra_bytes
    if not extra or measured.weights_bytes:
        return weights
    row = WeightRow(component=CALIBRATED_WEIGHTS_ROW, params=0, bytes=extra, shards=1, bytes_per_param=0.0,
                    note="the loader's bytes beyond the checkpoint: the calibrated weights term (docs/calibration.md)")  # fmt: skip
    return WeightsBook(rows=(*weights.rows, row))


def predict(
    model: ModelSpec,
    settings: LaunchSettings,
    *,
    gpu_total_bytes: int,
    gpu_name: str | None = None,
    measured: MeasuredInputs | None = None,
    load_mtp: bool = False,
    version: ResolvedVersion | None = None,
    draft: ModelSpec | None = None,
) -> Ledger:
    """Solve both books for every rank with the engine's own rules (see module docstring).

    `draft` is a speculative draft model's architecture (its weights and KV layers), when known.
    The books read the model as served (`served_model`: `--dtype`, online `--quantization` at load);
    the ledger's `model` is that served model.

    The rules are those of `settings.engine_version`'s release (unset: the latest); `version` says
    how that release was found (default: the flag that set it, or not stated).

    Remembered: the same model object with equal settings and measurements gives the same
    ledger object (diagnose re-solves its what-ifs every tick; the planner every keystroke).
    """
    if model.speculative_draft:  # a draft's config as the served model: named, never planned as a plain decoder
        raise UnsupportedModelError(model.speculative_draft, field="architectures", source=model.source)
    measured = measured or MeasuredInputs()
    settings = with_draft_config(settings, draft)  # the draft's config class, for the rules that read it
    if gpu_name is not None and settings.gpu_name != gpu_name:  # the card, for the launch rules that read it
        settings = settings.model_copy(update={"gpu_name": gpu_name})
    if version is None or version.text != settings.engine_version:
        version = stated_release(settings)
        if settings.engine_version and settings.image_release == settings.engine_version:
            said = f"{version.detail}: the launch's image {settings.image} is its tag"
            version = version.model_copy(update={"detail": said})
    key = (id(model), settings_key(settings), gpu_total_bytes, gpu_name, measured, load_mtp, version, id(draft))
    return _LEDGERS.get(
        key, model, lambda: _solve(model, settings, gpu_total_bytes, gpu_name, measured, load_mtp, version, draft)
    )


_LEDGERS: Memo[Ledger] = Memo(size=128)


def forget_solved() -> None:
    """Drop every remembered ledger and weights book, so the next `predict` solves from scratch."""
    _LEDGERS.clear()
    forget_books()


def settings_key(settings: LaunchSettings) -> tuple[object, ...]:
    """Settings as a hashable value: every declared field by name, the free-form `flags` as sorted pairs."""
    fields = tuple((name, getattr(settings, name)) for name in type(settings).model_fields if name != "flags")
    return fields + tuple(sorted(settings.flags.items()))


def _stage_measured(measured: MeasuredInputs, pp_rank: int, own_terms: bool) -> MeasuredInputs:
    """The measured inputs of one pipeline stage: its own KV memory where each stage's was measured; where each stage
    is solved with its own terms (`own_terms`), a later stage's calibrated runtime memory without what only the
    first stage holds (`CalibratedFigures.later_stage`: vLLM's cold compile's table copy,
    V1's, compile_benchmark.py; V2's, v2_graphs.py)."""
    calibrated = measured.calibrated
    if own_terms and pp_rank > 0 and calibrated is not None and calibrated.first_stage_only_bytes:
        measured = measured.model_copy(update={"calibrated": calibrated.later_stage()})
    by_stage = measured.available_kv_bytes_by_stage
    if not by_stage or pp_rank >= len(by_stage):
        return measured
    return measured.model_copy(update={"available_kv_bytes": by_stage[pp_rank]})


def _solve(
    model: ModelSpec, settings: LaunchSettings, gpu_total_bytes: int, gpu_name: str | None,
    measured: MeasuredInputs, load_mtp: bool, version: ResolvedVersion, draft: ModelSpec | None,
) -> Ledger:  # fmt: skip
    if gpu_total_bytes <= 0:
        raise InputError(f"GPU memory must be positive (got {gpu_total_bytes})", field="--gpu-memory")
    model = served_model(model, settings, version)  # every book reads the model as the launch's cast at load leaves it
    rules = engine_rules(settings.engine)
    try:
        rules.check_config(model, version)  # what the engine fails on in the config itself, before the books
    except InputError:
        _unregistered_first(model, settings, version)
        raise
    deployment = rules.deployment
    setup = deployment.setup(settings)
    layout = _flag_layout(settings)
    try:
        layout, ep_note = _without_idle_ep(rules, model, layout, settings, version)
        layout = layout.model_copy(update={"mlp_split": rules.mlp_split(model, settings, version),
                                           "vocab_split": rules.vocab_split(model, settings, version)})  # fmt: skip
        # the world at the resolved release, the model's backend deciding it (`layout_from_settings` reads the flag's)
        layout = with_world(layout, rules.world_ranks(model, settings, version))
        validate_layout(model, layout)
    except LayoutError as err:
        _unregistered_first(model, settings, version)
        raise _respelled(err, settings.engine) from None
    storage = rules.kv_storage_for(model, settings, version)
    fmt = resolve_kv_format(settings.kv_cache_dtype, model, storage, gpu_name=gpu_name)
    loads_mtp = setup.loads_mtp(model)
    mtp = load_mtp or loads_mtp
    mtp_later = loads_mtp and rules.mtp_after_pool(version)  # the draft's layers: an after-pool term
    context = rules.context_length(model, settings, version)  # the engine's: every figure reads this one
    # a draft model's own layer of KV per token: the same on every stage
    draft_pool = _draft_pool(draft, layout, fmt, storage, gpu_name) if setup.spec_kind is SpecKind.DRAFT_MODEL else None
    cache_only = deployment.cache_only_cell(model, settings, setup)  # a draft caching hidden states instead
    draft_cell = cache_only or (draft_pool.bytes_per_layer_token if draft_pool is not None else None)
    draft_shape = draft_pool.row_shape if draft_pool is not None and not cache_only else None
    stages: list[tuple[range, WeightsBook, KvBook, tuple[BudgetTerm, ...]]] = []
    plain = None  # the last stage's KV book without a draft's layers (what a host tier mirrors)
    for pp_rank in range(layout.pp):
        is_first, is_last = pp_rank == 0, pp_rank == layout.pp - 1
        layers = pp_layer_range(model.num_layers, pp_rank, layout.pp, rules.pp_remainder_at(version))
        weights = weights_book(model, layout, layers, first_stage=is_first, last_stage=is_last, load_mtp=mtp,
                               tower_split=rules.architectures.TOWER_SPLIT.for_launch(settings.flags, version.text, layout.attn_dp),
                               parts=rules.stage_parts(model, pp_rank, layout.pp, version))  # fmt: skip
        built = rules.weights_built(model, layout, layers, gpu_name, version,  # the engine's class builds more
                                    quantization=settings.quantization)
        if built:
            weights = WeightsBook(rows=(*weights.rows, *built))
        kv_layers = rules.kv_layers_of_stage(model, layers, version)  # an engine may size more than it holds
        plain = kv_book(model, layout, kv_layers, fmt, storage, gpu_name=gpu_name)
        draft_layers = deployment.draft_kv_layers(model, setup, draft, version) if is_last or not storage.draft_kv_as_layers else 0
        if not draft_layers and load_mtp and rules.pools_draft_kv:  # --load-mtp alone: the MTP layers' KV
            draft_layers = model.mtp_layers
        kv = (
            kv_book(model, layout, kv_layers, fmt, storage, draft_layers=draft_layers, draft_layer_bytes=draft_cell,
                    draft_row_shape=draft_shape,
                    gpu_name=gpu_name) if draft_layers else plain
        )  # fmt: skip
        terms = deployment.terms(
            TermInputs(
                model=model, settings=settings, setup=setup, layout=layout, weights=weights, kv=plain,
                kv_with_draft=kv, version=version, first_stage=is_first, last_stage=is_last, draft=draft,
                stage_layers=(layers.start, layers.stop),
                measured_draft_bytes=measured.draft_weights_bytes, draft_layer_bytes=draft_cell, gpu_name=gpu_name,
                gpu_total_bytes=gpu_total_bytes, gpu_total_origin=measured.gpu_total_origin,
            )
        )  # fmt: skip
        if mtp_later:  # the terms read the MTP rows (their after-pool term); the pool is sized without them
            weights = WeightsBook(rows=tuple(row for row in weights.rows if row.component != "mtp"))
        stages.append((layers, _with_calibrated_weights(weights, measured), kv, terms))
    # one stage's logged weights (vLLM's rank 0 line): each other stage's derived from it and the books
    by_stage = stage_measured_weights(measured, [w.total_bytes for _, w, _, _ in stages])
    one_stage_logged = logs_one_stage(measured, len(stages))
    stage_weights = [m.weights_bytes or w.total_bytes for m, (_, w, _, _) in zip(by_stage, stages, strict=True)]
    tightest_weights = max(stage_weights)  # every stage's figure: logged, derived from the logged stage, or its book
    tightest_terms = max((t for *_, t in stages), key=resident_bytes)

    def solve(pp_rank: int, weights: WeightsBook, kv: KvBook, terms: tuple[BudgetTerm, ...], cap: LaunchSettings) -> EngineResult:
        shared = rules.sizes_every_rank_from_least_free or (measured.weights_bytes and not one_stage_logged)
        own = stage_weights[pp_rank]  # read where not shared: the stage's logged or derived figure, else its book
        return rules.solve(
            EngineInputs(
                model=model,
                layout=layout,
                settings=cap,
                gpu_total_bytes=gpu_total_bytes,
                gpu_name=gpu_name,
                weights_bytes=tightest_weights if shared else own,
                kv=kv,
                context_length=context,
                measured=_stage_measured(by_stage[pp_rank], pp_rank, own_terms=not shared),
                pp_rank=pp_rank,
                version=version,
                terms=tightest_terms if shared else terms,
            )
        )

    results = [solve(pp, w, kv, t, settings) for pp, (_, w, kv, t) in enumerate(stages)]
    tightest = min(results, key=lambda r: (r.token_capacity, r.num_blocks or 0))
    if len(results) > 1 and tightest.fits:  # every stage at the shared capacity
        capped = rules.at_shared_capacity(settings, tightest)
        # the shared count is kvtop's, not an operator's override: what a cold start may charge beyond the plan
        # (`EngineResult.start_cache`) stays each stage's own solve's, which a fixed count would drop
        results = [solve(pp, w, kv, t, capped).model_copy(update={"start_cache": own.start_cache})
                   for pp, ((_, w, kv, t), own) in enumerate(zip(stages, results, strict=True))]  # fmt: skip
    # CUDA context, NCCL and whatever was resident before the weights: measured, or the named estimate
    context_bytes = measured.context_before_load(gpu_total_bytes)
    ranks: list[RankLedger] = []
    shared_tokens = tightest.token_capacity
    for dp_rank in range(layout.replicas):
        for pp_rank, ((layers, weights, kv, terms), result) in enumerate(zip(stages, results, strict=True)):
            first = RankLedger(
                rank=len(ranks), gpu_index=len(ranks), dp_rank=dp_rank, pp_rank=pp_rank, tp_rank=0,
                layers=(layers.start, layers.stop), weights=weights, kv=kv,
                kv_bytes_per_token=result.cell.whole_bytes if result.cell else kv.full_bytes_per_token + kv.swa_bytes_per_token,
                kv_cell=result.cell, page_size=result.page_size,
                kv_pool_bytes=result.kv_pool_bytes, kv_budget_bytes=result.kv_budget_bytes,
                state_pool_bytes=result.state_pool_bytes,
                req_to_token_bytes=result.req_to_token_bytes, reserve_bytes=result.reserve_bytes,
                context_bytes=context_bytes, token_capacity=shared_tokens, context_source=measured.context_source(),
                context_error_bytes=measured.context_error_bytes(),
                driver_reserved_bytes=measured.driver_reserved_bytes(gpu_total_bytes),
                terms=_with_cell_bytes(terms, shared_tokens + result.page_size if result.fits else 0),
            )  # fmt: skip
            for tp_rank in range(layout.stage_ranks):  # the ranks of a stage hold the same books
                # under DP attention, the DP ranks are consecutive blocks of the TP group
                dp = tp_rank // layout.attn_tp if layout.dp_attention else dp_rank
                index = len(ranks)
                ranks.append(
                    first.model_copy(
                        update={"rank": index, "gpu_index": index, "tp_rank": tp_rank, "dp_rank": dp}
                    )
                )
    engine = results[[r.token_capacity for r in results].index(min(r.token_capacity for r in results))]
    if ep_note:
        engine = engine.model_copy(update={"notes": (*engine.notes, ep_note)})
    host = deployment.host_tier(
        setup, gpu_tokens=engine.token_capacity if engine.fits else 0,
        kv_bytes_per_token=plain.full_bytes_per_token + plain.swa_bytes_per_token if plain else 0,
        page_size=engine.page_size, ranks=layout.gpus, world=layout.stage_ranks * layout.pp, version=version,
    ) if setup.host_kv is not None else None  # fmt: skip
    return Ledger(
        model=model, settings=settings, layout=layout, gpu_total_bytes=gpu_total_bytes, gpu_name=gpu_name,
        kv_format=fmt, context_length=context, engine=engine, ranks=tuple(ranks), measured=measured, load_mtp=load_mtp,
        version=version, draft=draft, setup=setup, host_tier=host,
    )  # fmt: skip


def _draft_pool(
    draft: ModelSpec | None, layout: ParallelLayout, fmt: KvFormat, storage: KvStorage, gpu_name: str | None
) -> KvPool | None:
    """A draft model's full-attention pool on the rank: one layer's KV per token and its (heads, width), from the
    draft's own heads and head size (vLLM gives each of the draft's attention layers its own KV spec: Qwen2.5-0.5B's
    2 × 64 beside Qwen2.5-3B's 2 × 128 make 49,152 B a token, the 4.49 GiB and 98,112 tokens a v0.17.1 start printed;
    search-index id 58099879597); None where the draft's config is not known, or it keeps no attention layers. A
    draft all of whose layers are sliding takes a sliding layer's cell (the same heads and width: vLLM before v0.25.0
    builds a DFlash drafter's every layer full; where an engine builds them sliding it refuses the draft by name)."""
    if draft is None:
        return None
    book = kv_book(draft, layout, range(draft.num_layers), fmt, storage, gpu_name=gpu_name)
    return book.pool("full") or book.pool("swa")


def _with_cell_bytes(terms: tuple[BudgetTerm, ...], pool_tokens: int) -> tuple[BudgetTerm, ...]:
    """The terms with each per-token term's bytes over the pool's tokens: a `kv_cell` term's, and an after-pool
    term's sized by the pool's token count (a draft's own pool allocated after the target's)."""
    per_token = (Charge.KV_CELL, Charge.AFTER_POOL)
    return tuple(
        t.model_copy(update={"bytes": t.bytes_per_token * pool_tokens})
        if t.charge in per_token and t.bytes_per_token else t
        for t in terms
    )
