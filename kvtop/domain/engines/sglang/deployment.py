"""SGLang's deployment beside the model: speculative drafts, EPLB and DeepEP, LoRA slots, HiCache
(docs/engines/sglang.md §19).

- Speculative decoding (`--speculative-algorithm`): the draft's weights load before the KV profile, so
  they are resident (§2); the draft reuses the target's token count, so the target's cell grows by
  `draft layers ÷ layers` (§6.1); the automatic fraction keeps a reserve for the draft's graphs by era
  (§19.1). NEXTN, or EAGLE without a draft path, drafts with the model's own MTP layers.
- `--ep-num-redundant-experts R`: physical experts = logical + R, split as the logical ones
  (eplb/expert_location.py `_init_common`); they load with the weights.
- `--moe-a2a-backend deepep`: the automatic fraction keeps 2 GiB for its buffers from v0.5.15 where the decode
  graphs are on (§19.2); the buffers are allocated at the first MoE dispatch, after the pool, on every launch, so
  where no reserve holds them they are an after-the-pool term (their own sizes not modelled).
- LoRA (`--enable-lora` / `--lora-paths`): `LoRAMemoryPool.init_buffers` allocates A and B buffers for
  `--max-loras-per-batch` (default 8) slots at `--max-lora-rank`, in `ModelRunner.initialize` before
  the KV pool (§19.3).
- HiCache (`--enable-hierarchical-cache`): a pinned host pool of `--hicache-ratio` (2.0) × the device
  pool's tokens, or `--hicache-size` GB (10⁹ B) per rank, aligned to the page by era (§19.4).
"""

from __future__ import annotations

from kvtop.domain.deployment import (
    Basis,
    BudgetTerm,
    Charge,
    DeploymentSetup,
    Feature,
    HostKvRequest,
    HostTier,
    SpecKind,
    TermInputs,
    TermState,
    no_cache_only_cell,
)
from kvtop.domain.deployment_flags import (
    feature_remover,
    flag_float,
    flag_int,
    flag_set,
    flag_text,
    flag_words,
    with_flags,
    without_flags,
)
from kvtop.domain.deployment_math import (
    DRAFT_CONFIG_DETAIL,
    LORA_MODULE_NAMES,
    LORA_MODULES,
    draft_weights_bytes,
    lora_slot_bytes,
    lora_unmodelled_reason,
    redundant_expert_bytes,
)
from kvtop.domain.engines.sglang.decode_graphs_off import deepep_reserve_kept
from kvtop.domain.engines.sglang.deployment_eras import (
    DEEPEP_BUFFER_SOURCE,
    HICACHE_ALIGN_ERAS,
    HICACHE_DEFAULT_RATIO,
    HICACHE_HOST_RESERVE_BYTES,
    HICACHE_SMALLER_ERAS,
    deepep_reserve_mib,
    spec_reserve_mib,
)
from kvtop.domain.engines.sglang.draft_cell import cell_holds_draft
from kvtop.domain.engines.sglang.draft_graphs import draft_graphs_term
from kvtop.domain.engines.sglang.draft_load import DRAFT_BEFORE_POOL_ERAS, mtp_embed_head_bytes
from kvtop.domain.engines.sglang.eagle3 import SOURCE as EAGLE3_SOURCE
from kvtop.domain.engines.sglang.eagle3 import eagle3_head_bytes
from kvtop.domain.engines.sglang.multimodal import multimodal_reserve_bytes, profiled_hopper_path
from kvtop.domain.engines.sglang.spec_methods import METHOD_ERAS, NO_SPECULATION
from kvtop.domain.engines.versions import ResolvedVersion, era_for
from kvtop.domain.errors import InputError
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import ModelSpec
from kvtop.domain.redact import quoted
from kvtop.domain.spec_methods import check_method
from kvtop.domain.wording import MIB, counted

SPEC_FLAGS = ("speculative-algorithm", "speculative-draft-model-path", "speculative-draft-model",
              "speculative-num-draft-tokens", "speculative-num-steps", "speculative-eagle-topk")  # fmt: skip
EXPERT_FLAGS = (
    "enable-eplb",
    "ep-num-redundant-experts",
    "moe-a2a-backend",
    "enable-deepep-moe",
    "deepep-mode",
)
LORA_FLAGS = ("enable-lora", "lora-paths", "max-loras-per-batch", "max-lora-rank", "lora-target-modules")
HOST_FLAGS = ("enable-hierarchical-cache", "hicache-ratio", "hicache-size")
# "enable-deterministic-inference": prefill_graphs_off.DETERMINISTIC_FLAG, which imports this module
FLAGS: frozenset[str] = frozenset(
    "--" + f for f in (*SPEC_FLAGS, *EXPERT_FLAGS, *LORA_FLAGS, *HOST_FLAGS, "disable-cuda-graph",
                       "enable-deterministic-inference")
)
flags = FLAGS  # the protocol's name (DeploymentRules.flags)
flashinfer_read: str | None = None  # no release reads whether the install holds FlashInfer
_FEATURE_FLAGS = {
    Feature.SPECULATIVE: SPEC_FLAGS, Feature.EXPERT_PARALLEL: EXPERT_FLAGS, Feature.LORA: LORA_FLAGS,
    Feature.HOST_KV: HOST_FLAGS, Feature.ENCODER: (),
}  # fmt: skip
_OWN_KV_TERM = ("DFLASH", "DSPARK", "UNO", "FROZEN_KV_MTP")  # §6.1: their own cell terms, not modelled
DEFAULT_MAX_LORAS_PER_BATCH = 8  # ServerArgs.max_loras_per_batch
SOURCE_SPEC = (
    "model_runner.py (draft ModelRunner loads before the KV profile, §2); kv_cache_configurator.py §6.1"
)
SOURCE_LORA = "lora/mem_pool.py LoRAMemoryPool.init_buffers (read at v0.5.6.post2, v0.5.23)"
SOURCE_EPLB = "eplb/expert_location.py _init_common: physical = logical + ep_num_redundant_experts (v0.5.23)"


def setup(settings: LaunchSettings) -> DeploymentSetup:
    """What the launch turns on beside the model (a malformed value names the flag)."""
    typed = flag_text(settings, "speculative-algorithm") or None
    # a name the release does not take stops the launch (sglang/spec_methods.py); NEXTN is EAGLE drafting with the
    # model's own next-n layers. Checked as typed (the fold compares in capitals): a pasted key is echoed as the
    # redactor knows it, not upper-cased past it ('HF_ABCD…')
    check_method(typed, METHOD_ERAS, settings.engine_version, flag="--speculative-algorithm", fold=str.upper)
    algorithm = typed.upper() if typed is not None else None
    if algorithm == NO_SPECULATION:  # the releases that take NONE read it as no speculation (spec_methods.py)
        algorithm = None
    draft = flag_text(settings, "speculative-draft-model-path", "speculative-draft-model")
    kind = None
    if algorithm in ("NGRAM", "LOOKAHEAD"):  # LOOKAHEAD: NGRAM's name in an earlier tree (spec_methods.py)
        kind = SpecKind.NGRAM
    elif algorithm == "NEXTN" or (algorithm is not None and (draft is None or draft == settings.model)):
        kind = SpecKind.MTP  # the model's own next-n layers (or a draft kvtop was not told of)
    elif algorithm is not None:
        kind = SpecKind.DRAFT_MODEL
    backend = (flag_text(settings, "moe-a2a-backend") or "").lower() or None
    if flag_set(settings, "enable-deepep-moe"):
        backend = "deepep"
    modules = flag_words(settings, "lora-target-modules")
    for module in modules or ():
        if module not in LORA_MODULE_NAMES:
            raise InputError(f"not a LoRA target module kvtop models: {quoted(module)} (one of "
                             f"{', '.join(LORA_MODULE_NAMES)})", field="--lora-target-modules")  # fmt: skip
    host = None
    if flag_set(settings, "enable-hierarchical-cache"):
        size_gb = flag_float(settings, "hicache-size", above=-1.0) or 0.0
        if size_gb < 0:
            raise InputError(f"must be at least 0 GB (got {size_gb:g})", field="--hicache-size")
        ratio = flag_float(settings, "hicache-ratio")
        host = HostKvRequest(
            connector="HiCache", size_bytes=int(size_gb * 1e9) if size_gb > 0 else None,
            ratio_to_gpu_pool=None if size_gb > 0 else ratio or HICACHE_DEFAULT_RATIO,
            stated=size_gb > 0 or ratio is not None,
        )  # fmt: skip
    return DeploymentSetup(
        # a typed path is kept beside the model's own layers too: it is what sizes SGLang's cell (draft_cell.py)
        spec_method=algorithm, spec_kind=kind, draft_model=draft if kind in (SpecKind.DRAFT_MODEL, SpecKind.MTP) else None,
        draft_tokens=flag_int(settings, "speculative-num-draft-tokens", least=1),
        redundant_experts=flag_int(settings, "ep-num-redundant-experts") or 0,
        a2a_backend=None if backend in (None, "none") else backend,
        lora=flag_set(settings, "enable-lora") or flag_text(settings, "lora-paths") is not None,
        max_loras=flag_int(settings, "max-loras-per-batch", least=1),
        max_lora_rank=flag_int(settings, "max-lora-rank", least=1),
        lora_modules=_stacked(modules), host_kv=host,
    )  # fmt: skip


def _stacked(modules: tuple[str, ...] | None) -> tuple[str, ...] | None:
    if modules is None:
        return None
    names = {LORA_MODULE_NAMES[m] for m in modules}
    return LORA_MODULES if "all" in names else tuple(m for m in LORA_MODULES if m in names)


without = feature_remover(_FEATURE_FLAGS)


def with_setup(settings: LaunchSettings, setup: DeploymentSetup) -> LaunchSettings:
    """The planner's edit in SGLang's flags."""
    host = setup.host_kv
    if setup.spec_method is None:  # drafting off: none of its flags stays behind
        settings = without_flags(settings, SPEC_FLAGS)
    if not setup.lora:
        settings = without_flags(settings, LORA_FLAGS)
    return with_flags(settings, {
        "speculative-algorithm": setup.spec_method,
        "speculative-draft-model-path": setup.draft_model,
        "ep-num-redundant-experts": str(setup.redundant_experts) if setup.redundant_experts else None,
        "enable-lora": setup.lora,
        "max-loras-per-batch": str(setup.max_loras) if setup.lora and setup.max_loras else None,
        "max-lora-rank": str(setup.max_lora_rank) if setup.lora and setup.max_lora_rank else None,
        "enable-hierarchical-cache": host is not None,
        "hicache-size": f"{host.bytes_per_rank / 1e9:.9g}" if host and host.bytes_per_rank else None,
        "hicache-ratio": f"{host.ratio_to_gpu_pool:g}" if host and host.ratio_to_gpu_pool and host.stated else None,
    })  # fmt: skip


cache_only_cell = no_cache_only_cell  # no SGLang draft caches a layer of its own


def draft_kv_layers(model: ModelSpec, setup: DeploymentSetup, draft: ModelSpec | None, version: ResolvedVersion) -> int:
    """§6.1: the draft's layers the target's cell makes room for (EAGLE heads: one layer when not told); none where
    the release leaves the draft's pool out of the target's cell (draft_cell.py)."""
    if setup.spec_kind in (SpecKind.MTP, SpecKind.DRAFT_MODEL) and not cell_holds_draft(model, setup, version):
        return 0
    if setup.spec_kind is SpecKind.MTP:
        return model.mtp_layers
    if setup.spec_kind is SpecKind.DRAFT_MODEL and (setup.spec_method or "") not in _OWN_KV_TERM:
        return draft.num_layers if draft is not None else 1
    return 0


def terms(inputs: TermInputs) -> tuple[BudgetTerm, ...]:
    found: list[BudgetTerm] = []
    if inputs.setup.spec_kind is not None:
        found += _speculative(inputs)
    if inputs.setup.redundant_experts or inputs.setup.a2a_backend:
        found += _experts(inputs)
    if inputs.setup.lora:
        found.append(_lora(inputs))
    found += _encoder(inputs)
    return tuple(found)


def _encoder(inputs: TermInputs) -> list[BudgetTerm]:
    """§4, §19.5: a multimodal model's reserve for the encoder's embedding cache and feature pools, off the
    KV budget (the budget's own step; shown here beside the other terms, not a waterfall term)."""
    gpu = (inputs.gpu_name, inputs.gpu_total_bytes, inputs.gpu_total_origin)
    reserve = multimodal_reserve_bytes(inputs.model, inputs.settings, inputs.version, *gpu)
    if not reserve:
        return []
    profiled = profiled_hopper_path(inputs.model, inputs.version, *gpu)  # the large-Hopper Qwen3-VL path
    cache = "0 and the feature cache the large-Hopper Qwen3-VL path sets" if profiled else "100"
    return [BudgetTerm(
        feature=Feature.ENCODER, charge=Charge.RESERVE, bytes=reserve, setting="(multimodal model)",
        label="multimodal reserve: encoder cache and feature pools",
        source="mm_runtime_reservation_gb: SGLANG_VLM_CACHE_SIZE_MB (+ SGLANG_MM_FEATURE_CACHE_MB with "
        "--mm-feature-transport cuda_ipc|cuda_vmm), v0.5.18 on",
        detail=f"the default environment values assumed (SGLANG_VLM_CACHE_SIZE_MB {cache})", basis=Basis.ASSUMED,
    )]  # fmt: skip


def _speculative(inputs: TermInputs) -> list[BudgetTerm]:
    setup, model = inputs.setup, inputs.model
    method = setup.spec_method or ""
    setting = _spec_setting(setup)
    found: list[BudgetTerm] = []
    base = BudgetTerm(
        feature=Feature.SPECULATIVE, charge=Charge.RESIDENT, label="", setting=setting, source=SOURCE_SPEC
    )
    # the draft's load and its own pool: the era of DRAFT_BEFORE_POOL_ERAS at this release is their source
    drafted = _term(base, source=DRAFT_BEFORE_POOL_ERAS.era(inputs.version).source)
    if setup.spec_kind is SpecKind.MTP:
        mtp = next((row.bytes for row in inputs.weights.rows if row.component == "mtp"), 0)
        if model.mtp_layers:
            found.append(_mtp_layers(inputs, drafted, mtp))
            found += _mtp_own_copies(inputs, drafted, mtp)
        else:
            found.append(_term(base, charge=Charge.RESIDENT, label="draft weights",
                                    state=TermState.NOT_MODELLED, source=SOURCE_SPEC,
                                    detail="the config states no MTP layers and no draft model was named "
                                    "(--speculative-draft-model-path)"))  # fmt: skip
    elif setup.spec_kind is SpecKind.DRAFT_MODEL:
        found.append(_draft_weights(inputs, base))
    cell = inputs.kv_with_draft.full_bytes_per_token - inputs.kv.full_bytes_per_token
    if method in _OWN_KV_TERM:
        found.append(_term(base, charge=Charge.KV_CELL, label=f"draft KV ({method})",
                                state=TermState.NOT_MODELLED, source=SOURCE_SPEC,
                                detail=f"{method}'s own cell term (scale_kv_cell_size_per_token_for_dflash) is not "
                                "modelled"))  # fmt: skip
    elif setup.spec_kind is SpecKind.MTP and not model.mtp_layers:  # the draft's layers unknown: its cell too
        found.append(_term(base, charge=Charge.KV_CELL, label="draft KV", state=TermState.NOT_MODELLED,
                                source=SOURCE_SPEC, detail="the draft's layers are not known (no MTP layers in the "
                                "config, no --speculative-draft-model-path): the cell shown is the target's alone"))  # fmt: skip
    elif (late := _draft_pool_after(inputs, drafted)) is not None:
        found.append(late)
    elif cell:
        layers = inputs.kv_with_draft.draft_layers
        assumed = setup.spec_kind is SpecKind.DRAFT_MODEL and inputs.draft is None
        found.append(_term(
            base, charge=Charge.KV_CELL, label=f"draft KV: cell × (1 + {layers} ÷ {inputs.kv.target_layers} layers)",
            bytes_per_token=cell, basis=Basis.ASSUMED if assumed else Basis.COMPUTED, source=SOURCE_SPEC,
            detail="the draft reuses the target's token count; one draft layer assumed (EAGLE heads)" if assumed else
            "the draft reuses the target's token count (§4.3)",
        ))  # fmt: skip
    if (graphs := draft_graphs_term(inputs, base)) is not None:
        found.append(graphs)
    if inputs.settings.mem_fraction_static is None:
        found += draft_reserve_terms(inputs.settings, inputs.version)
    return found


def draft_reserve_terms(settings: LaunchSettings, version: ResolvedVersion) -> list[BudgetTerm]:
    """§19.1: the share SGLang's automatic fraction keeps for a speculative draft (SPEC_RESERVE_ERAS, by release):
    a reserve term of the automatic launch; with a given --mem-fraction-static it is inside the reserve the
    automatic rule would keep (`reserve_needed_bytes`), which the headroom splits it out of (`need_reserve_terms`)."""
    spec = setup(settings)
    if not spec.spec_method:
        return []
    mib, source = spec_reserve_mib(spec.spec_method, version)
    if not mib:
        return []
    return [BudgetTerm(feature=Feature.SPECULATIVE, charge=Charge.RESERVE, label="reserve for the draft and its CUDA graphs",
                       bytes=mib * MIB, source=source, setting=_spec_setting(spec),
                       detail=f"{mib} MiB more reserve in the automatic --mem-fraction-static")]  # fmt: skip


def _mtp_layers(inputs: TermInputs, base: BudgetTerm, mtp: int) -> BudgetTerm:
    """§19.1: the MTP draft's layers, in the weights book from v0.5.14 (the draft worker is built before the
    target's pool); before it an after-pool term, the ledger sizing the pool without them (draft_load.py)."""
    layers = counted(inputs.model.mtp_layers, "MTP layer")
    bytes_ = mtp if inputs.last_stage else 0
    if DRAFT_BEFORE_POOL_ERAS.at(inputs.version):
        return _term(base, charge=Charge.WEIGHTS, label=f"draft weights: {layers}, in the weights book", bytes=bytes_)
    return _term(base, charge=Charge.AFTER_POOL, label=f"draft weights: {layers}, loaded after the pool",
                 bytes=bytes_,
                 detail="the draft worker is built after the target's init_memory_pool: its layers come out of what "
                 "the pool leaves")  # fmt: skip


def _mtp_own_copies(inputs: TermInputs, base: BudgetTerm, mtp: int) -> list[BudgetTerm]:
    """§19.1: the MTP draft's own embedding and LM head, loaded before the target's pool from v0.5.14 and freed
    after it; before it loaded after the target's pool and freed once the draft's own pool is allocated
    (draft_load.py), a need of the headroom. The log's draft load, where read, less the MTP layers."""
    own = mtp_embed_head_bytes(inputs.weights) if inputs.last_stage else 0
    if not own:
        return []
    before = DRAFT_BEFORE_POOL_ERAS.at(inputs.version)
    charge = Charge.RESIDENT if before else Charge.AFTER_POOL
    label = "draft's own embedding and LM head " + ("(freed after the pool)" if before else
                                                    "(after the pool, freed once the draft's pool is allocated)")  # fmt: skip
    if inputs.measured_draft_bytes is not None:
        return [_term(base, charge=charge, label=label, bytes=max(inputs.measured_draft_bytes - mtp, 0),
                      basis=Basis.MEASURED,
                      detail="the draft's logged load less its MTP layers")]  # fmt: skip
    return [_term(base, charge=charge, label=label, bytes=own, basis=Basis.COMPUTED,
                  detail="the target's embedding and LM head rows: the draft builds and loads its own before "
                  "set_embed_and_head swaps in the target's")]  # fmt: skip


def _draft_pool_after(inputs: TermInputs, base: BudgetTerm) -> BudgetTerm | None:
    """§6.1, §19.1: before 0.5.14 an EAGLE/MTP draft's own KV pool (the target's token count × the draft's layers)
    is allocated after the target's pool, out of what it leaves (None: the target's cell holds it, or no draft)."""
    setup, model = inputs.setup, inputs.model
    if DRAFT_BEFORE_POOL_ERAS.at(inputs.version) or inputs.kv_with_draft.draft_layers or not inputs.last_stage:
        return None
    full = inputs.kv.pool("full")
    if setup.spec_kind is SpecKind.MTP and model.mtp_layers:
        layers, per_layer, assumed = model.mtp_layers, full.bytes_per_layer_token if full else None, False
    elif setup.spec_kind is SpecKind.DRAFT_MODEL:
        known = inputs.draft is not None and inputs.draft_layer_bytes is not None
        layers = inputs.draft.num_layers if inputs.draft is not None and known else 1
        per_layer = inputs.draft_layer_bytes if known else (full.bytes_per_layer_token if full else None)
        assumed = not known
    else:
        return None
    label = f"draft's own KV pool: the target's tokens × {counted(layers, 'draft layer')}"
    if per_layer is None:
        return _term(base, charge=Charge.AFTER_POOL, label=label, state=TermState.NOT_MODELLED,
                     detail="the target keeps no full-attention pool to size the draft's layers from")  # fmt: skip
    return _term(base, charge=Charge.AFTER_POOL, label=label, bytes_per_token=int(layers * per_layer),
                 basis=Basis.ASSUMED if assumed else Basis.COMPUTED,
                 detail="the draft worker reuses the target's memory_pool_config (its max_total_num_tokens) after "
                 "the target's pool is allocated" + ("; one draft layer of the target's shape assumed" if assumed
                                                     else ""))  # fmt: skip


def _spec_setting(spec: DeploymentSetup) -> str:
    return f"--speculative-algorithm {spec.spec_method or ''}" + (
        f" --speculative-draft-model-path {spec.draft_model}" if spec.draft_model else ""
    )


def _term(base: BudgetTerm, **update: object) -> BudgetTerm:
    """`base` with `update` (the feature, setting and source a feature's terms share)."""
    return base.model_copy(update=update)


def _draft_weights(inputs: TermInputs, base: BudgetTerm) -> BudgetTerm:
    """The draft model's weights: before the target's pool from v0.5.14, after it (out of what the fraction leaves)
    before (draft_load.py)."""
    if not DRAFT_BEFORE_POOL_ERAS.at(inputs.version):
        base = _term(base, charge=Charge.AFTER_POOL)
    label = "draft weights" + (
        f" ({inputs.draft.name}, {counted(inputs.draft.num_layers, 'layer')})" if inputs.draft else ""
    )
    if inputs.measured_draft_bytes is not None:
        return _term(base, label="draft weights", bytes=inputs.measured_draft_bytes,
                          basis=Basis.MEASURED, source=SOURCE_SPEC, detail="the draft's own weight load")  # fmt: skip
    if inputs.draft is not None and (head := eagle3_head_bytes(inputs.draft, inputs.layout, inputs.version)) is not None:
        return _term(base, label=label, bytes=head, source=f"{SOURCE_SPEC}; {EAGLE3_SOURCE}",
                     basis=Basis.COMPUTED, detail="the Eagle-3 head as SGLang builds it: fc, qkv over 2 × hidden, "
                     "hidden_norm, its own vocabulary's LM head; its embedding, shared with the target after load, "
                     "counted")  # fmt: skip
    if inputs.draft is not None:
        return _term(base, label=label,
                          bytes=draft_weights_bytes(inputs.draft, inputs.layout), source=SOURCE_SPEC,
                          basis=Basis.ASSUMED, detail=DRAFT_CONFIG_DETAIL)  # fmt: skip
    return _term(base, label="draft weights", state=TermState.NOT_MODELLED,
                      source=SOURCE_SPEC, detail="the draft model's config is not known: give it with --draft-model "
                      "(a config.json or preset) or its weights with --draft-weights")  # fmt: skip


def _experts(inputs: TermInputs) -> list[BudgetTerm]:
    setup, model = inputs.setup, inputs.model
    found: list[BudgetTerm] = []
    if setup.redundant_experts and model.moe is not None:
        physical = model.moe.num_routed_experts + setup.redundant_experts
        if physical % inputs.layout.moe_shards and inputs.layout.ep > 1:
            raise InputError(f"{model.moe.num_routed_experts} experts + {setup.redundant_experts} redundant do not "
                             f"split over EP{inputs.layout.ep}", field="--ep-num-redundant-experts")  # fmt: skip
        extra = redundant_expert_bytes(model, inputs.weights, setup.redundant_experts)
        found.append(BudgetTerm(
            feature=Feature.EXPERT_PARALLEL, charge=Charge.RESIDENT, bytes=extra, source=SOURCE_EPLB,
            label=f"redundant experts: {setup.redundant_experts} over {inputs.layout.moe_shards} ranks",
            setting=f"--ep-num-redundant-experts {setup.redundant_experts}",
            detail=f"{physical} physical experts for {model.moe.num_routed_experts} logical, loaded with the weights",
        ))  # fmt: skip
    if setup.a2a_backend == "deepep":
        found += _deepep(inputs)
    return found


def _deepep(inputs: TermInputs) -> list[BudgetTerm]:
    """§19.2: the buffers are allocated at the first MoE dispatch, after the pool, on every DeepEP launch
    (`DEEPEP_BUFFER_SOURCE`: no CUDA-graph or serving-role test). From v0.5.15 the engine's own automatic
    reserve keeps 2 GiB for them where the decode graphs are on and the node decodes (a RESERVE term, or
    inside the reserve its rule needs when a share is given); elsewhere nothing does: they come out of the
    runtime reserve (an AFTER_POOL term sized by the figure v0.5.15 adopted)."""
    mib, source = deepep_reserve_mib(inputs.version)
    setting = "--moe-a2a-backend deepep"
    if mib and deepep_reserve_kept(inputs.settings):
        if inputs.settings.mem_fraction_static is not None:
            return []  # the reserve SGLang's own rule needs (reserve_needed_bytes) counts them
        return [BudgetTerm(feature=Feature.EXPERT_PARALLEL, charge=Charge.RESERVE, bytes=mib * MIB, setting=setting,
                           label="reserve for DeepEP all-to-all buffers", source=source,
                           detail=f"{mib} MiB more reserve in the automatic --mem-fraction-static")]  # fmt: skip
    later = deepep_reserve_mib(ResolvedVersion())[0]
    why = (f"{inputs.version.label}'s automatic reserve does not count them" if not mib else
           "the automatic reserve skips them with the decode graphs off or on a PD prefill node")  # fmt: skip
    return [BudgetTerm(
        feature=Feature.EXPERT_PARALLEL, charge=Charge.AFTER_POOL, bytes=later * MIB, basis=Basis.CALIBRATED,
        label="DeepEP buffers after the pool", setting=setting, source=f"{DEEPEP_BUFFER_SOURCE}; {source}",
        detail=f"{why}; {later} MiB is the reserve SGLang v0.5.15 adopted for them "
        "(arg_groups/memory_hook.py reserve_for_deepep_a2a_mb)",
    )]  # fmt: skip


def _lora(inputs: TermInputs) -> BudgetTerm:
    setup, model = inputs.setup, inputs.model
    slots = setup.max_loras or DEFAULT_MAX_LORAS_PER_BATCH
    setting = f"--max-loras-per-batch {slots}" + (
        f" --max-lora-rank {setup.max_lora_rank}" if setup.max_lora_rank else ""
    )
    base = BudgetTerm(
        feature=Feature.LORA, charge=Charge.RESIDENT, label="", setting=setting, source=SOURCE_LORA
    )
    reason = lora_unmodelled_reason(model)
    if reason is None and setup.max_lora_rank is None:
        reason = "the rank comes from the adapters SGLang reads at start: give --max-lora-rank"
    if reason is not None:
        return _term(base, label=f"LoRA slots ({slots})", state=TermState.NOT_MODELLED, detail=reason)
    modules = setup.lora_modules or LORA_MODULES
    layers = range(model.num_layers)  # LoRAMemoryPool: base_hf_config.num_hidden_layers, every layer
    size = lora_slot_bytes(model, inputs.layout, layers, slots=slots, rank=setup.max_lora_rank or 0,
                           modules=modules, dtype_bytes=model.dtype_bytes)  # fmt: skip
    return _term(
        base, label=f"LoRA slots: {slots} × rank {setup.max_lora_rank}", bytes=size,
        basis=Basis.COMPUTED if setup.lora_modules else Basis.ASSUMED,
        detail=f"A and B buffers of {', '.join(modules)} on {model.num_layers} layers"
        + ("" if setup.lora_modules else "; every module assumed (the adapters' own set when none is given)"),
    )  # fmt: skip


def host_tier(
    setup: DeploymentSetup, *, gpu_tokens: int, kv_bytes_per_token: int, page_size: int, ranks: int, world: int,
    version: ResolvedVersion,
) -> HostTier | None:  # fmt: skip
    """§19.4 HostKVCache: the host pool's tokens from the ratio or the size, aligned to the page by era."""
    request = setup.host_kv
    if request is None or not kv_bytes_per_token:
        return None
    era = era_for(HICACHE_ALIGN_ERAS, version)
    if request.bytes_per_rank:
        size = int(request.bytes_per_rank // kv_bytes_per_token)
        setting = f"--enable-hierarchical-cache --hicache-size {request.bytes_per_rank / 1e9:g}"
    else:
        ratio = request.ratio_to_gpu_pool or HICACHE_DEFAULT_RATIO
        size = int(gpu_tokens * ratio)
        setting = f"--enable-hierarchical-cache --hicache-ratio {ratio:g}"
    size = (size // page_size + 1) * page_size if era.value == "up" else size - size % page_size
    refuses = era_for(HICACHE_SMALLER_ERAS, version).value and size <= gpu_tokens
    return HostTier(
        problem=f"the host pool ({size:,} tokens) is not larger than the GPU pool ({gpu_tokens:,}): SGLang "
        f"{version.label} refuses to start (HostKVCache asserts it); raise --hicache-size or --hicache-ratio"
        if refuses else None,
        connector="HiCache", setting=setting, bytes_per_rank=size * kv_bytes_per_token, tokens_per_rank=size,
        host_reserve_bytes=HICACHE_HOST_RESERVE_BYTES,
        gpu_tokens_per_rank=gpu_tokens, ranks=ranks, source=era.source,
        basis=Basis.COMPUTED if request.stated else Basis.ASSUMED,
        detail="pinned host memory per rank (GB = 10⁹ B); SGLang refuses to start when it exceeds the host's "
        "available memory less 10 GiB" + ("" if request.stated else "; --hicache-ratio 2.0 is SGLang's default")
        + ("; no larger than the GPU pool, so the host tier adds little (SGLang warns)"
           if size <= gpu_tokens and not refuses else ""),
    )  # fmt: skip
