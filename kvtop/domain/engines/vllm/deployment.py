"""vLLM's deployment beside the model: speculative drafts, EPLB, LoRA slots, KV offloading
(docs/engines/vllm.md §14). Read in the v0.33.0 wheel unless an era says otherwise.

- `--speculative-config '{"method": …, "model": …, "num_speculative_tokens": k}'`
  (config/speculative.py): the draft loads with the model ("Model loading took" counts it), so its
  weights are resident; its attention layers get KV specs of their own beside the target's and share
  the blocks (kv_cache_utils: EAGLE/MTP draft layers are included, docs/engines/vllm.md §4.1), on the
  last pipeline stage. `mtp` and the `*_mtp` methods draft with the model's own MTP layers; `ngram`,
  `suffix` and `ngram_gpu` with none.
- `--enable-eplb --eplb-config '{"num_redundant_experts": R}'` (older `--num-redundant-experts`):
  `n_physical_experts = n_logical + R`, `n_local = n_physical // ep` (models/deepseek_v2.py).
- `--enable-lora`: `create_lora_weights` stacks A and B for `--max-loras` (1) slots at `--max-lora-rank`
  (16) on every wrapped linear layer of the rank, at model load (lora/layers/*.py).
- `--kv-offloading-size GiB` (total over the TP ranks, config/cache.py) with the native backend becomes
  the OffloadingConnector's `cpu_bytes_to_use` (config/vllm.py `_post_init_kv_transfer_config`); the
  CPU pool holds `cpu_bytes // (world × bytes per block per worker)` blocks (v1/kv_offload/cpu/spec.py).
- V0 (before v0.11.0): `--swap-space` GiB (4) per worker of pinned CPU blocks, `int(swap // block bytes)`.
- `--kv-transfer-config` (P/D connectors) and the local calibration store: from v0.13.0 (read there and at v0.33.0)
  the worker's connector is made in `Worker.initialize_from_config` (`ensure_kv_transfer_initialized(vllm_config,
  kv_cache_config)`), after `determine_available_memory` sized the KV cache, and registers the allocated KV
  (`register_kv_caches`); up to v0.11.0 it was made in `init_device` after the init snapshot, where P2pNccl's
  constructor holds pinned host memory only, the example/SharedStorage connector nothing and LMCache a torch
  buffer no term counts. A connector's bytes are in no measured term: its start is stored under the plain
  start's key (docs/engines/vllm.md §12,
  the disaggregated start).
"""

from __future__ import annotations

import json

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
)
from kvtop.domain.deployment_flags import (
    flag_float,
    flag_int,
    flag_json,
    flag_set,
    flag_text,
    with_flags,
    without_flags,
)
from kvtop.domain.deployment_math import (
    DRAFT_CONFIG_DETAIL,
    LORA_MODULES,
    draft_weights_bytes,
    lora_slot_bytes,
    lora_unmodelled_reason,
    redundant_expert_bytes,
)
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion, era_for
from kvtop.domain.engines.vllm import dflash
from kvtop.domain.engines.vllm.dp_dispatch import gathered_batch_term
from kvtop.domain.engines.vllm.draft_parallel import check_parallel_draft, unread_field
from kvtop.domain.engines.vllm.eagle3_head import SHARED as EAGLE3_SHARED
from kvtop.domain.engines.vllm.eagle3_head import SOURCE as EAGLE3_SOURCE
from kvtop.domain.engines.vllm.eagle3_head import head_bytes, target_shaped_bytes
from kvtop.domain.engines.vllm.encoder_forward import forward_counted
from kvtop.domain.engines.vllm.encoder_profile import (
    COUNTED_FAMILIES,
    UNREAD_FLAGS,
    counted_family,
    qwen3_forward_counted,
    release_not_read,
)
from kvtop.domain.engines.vllm.hidden_states import METHOD as HIDDEN_METHOD
from kvtop.domain.engines.vllm.hidden_states import SOURCE as HIDDEN_SOURCE
from kvtop.domain.engines.vllm.hidden_states import cache_only_cell as cache_only_cell
from kvtop.domain.engines.vllm.hidden_states import cached_states
from kvtop.domain.engines.vllm.mm_limits import read_limits
from kvtop.domain.engines.vllm.rope_override import max_model_len
from kvtop.domain.engines.vllm.sampler_path import taken_span
from kvtop.domain.engines.vllm.skip_mm_profiling import FLAG as SKIP_MM_FLAG
from kvtop.domain.engines.vllm.skip_mm_profiling import SOURCE as SKIP_MM_SOURCE
from kvtop.domain.engines.vllm.skip_mm_profiling import skips_encoder
from kvtop.domain.engines.vllm.spec_methods import (
    EAGLE3,
    METHOD_ERAS,
    NO_DRAFT_METHODS,
    SPLIT_FIELDS,
    draft_tokens,
    is_mtp,
    stated_draft,
    stated_method,
)
from kvtop.domain.engines.vllm.switch_spelling import SWITCHES
from kvtop.domain.errors import InputError
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import ModelSpec
from kvtop.domain.served_model import tower_unbuilt
from kvtop.domain.spec_methods import check_method
from kvtop.domain.wording import GIB, counted, gib_setting

SPEC_FLAGS = ("speculative-config", "speculative-model", "num-speculative-tokens", *(f for f, _ in SPLIT_FIELDS))
# the switches with their `--no-` spellings (switch_spelling.SWITCH_FORMS: argparse's BooleanOptionalAction from v0.8.5)
EXPERT_FLAGS = ("enable-eplb", "no-enable-eplb", "eplb-config", "num-redundant-experts", "all2all-backend")
LORA_FLAGS = ("enable-lora", "no-enable-lora", "max-loras", "max-lora-rank", "fully-sharded-loras",
              "no-fully-sharded-loras", "max-cpu-loras")
HOST_FLAGS = ("kv-offloading-size", "kv-offloading-backend", "swap-space")
FLAGS: frozenset[str] = frozenset("--" + f for f in (*SPEC_FLAGS, *EXPERT_FLAGS, *LORA_FLAGS, *HOST_FLAGS))
# the protocol's name (DeploymentRules.flags), what the copied line keeps verbatim: not the switches, which vLLM's own
# list writes in the form the release parses (switch_spelling.py: `--enable-lora False` no release takes)
flags = frozenset(flag for flag in FLAGS if flag[2:].removeprefix("no-") not in SWITCHES)
# the releases where an importable FlashInfer is the sampler's path (sampler_path.FLASHINFER_TAKEN_ERAS)
flashinfer_read: str | None = f"{taken_span()} samples with it wherever it imports"
_FEATURE_FLAGS = {
    Feature.SPECULATIVE: SPEC_FLAGS, Feature.EXPERT_PARALLEL: EXPERT_FLAGS, Feature.LORA: LORA_FLAGS,
    Feature.HOST_KV: HOST_FLAGS, Feature.ENCODER: (),
}  # fmt: skip
NO_KV_METHODS = ("medusa", "mlp_speculator")  # heads without attention: no KV of their own
DEFAULT_MAX_LORAS = 1  # LoRAConfig.max_loras
DEFAULT_MAX_LORA_RANK = 16  # LoRAConfig.max_lora_rank
DEFAULT_SWAP_SPACE_GIB = 4  # V0 CacheConfig.swap_space
LMCACHE_DEFAULT_CPU_BYTES = 5 * 10**9  # LMCache's max_local_cpu_size default (5.0 GB per worker)
# LMCache's GPU staging buffer: VLLMPagedMemGPUConnectorV2 (lmcache/v1/gpu_connector.py, read at LMCache 0.3.2, the
# release of vllm#21348's date) holds one chunk of the rank's KV, [K/V, layers, chunk_size, KV heads × head dim] in the
# KV dtype: chunk_size (256 by default) × the rank's KV bytes per token. The worker side of the connector is made in
# init_device (ensure_kv_transfer_initialized), after the memory snapshot and before the weights; memory_profiling counts
# the torch peak from after the load and the weights by what load_model allocated, so no term of vLLM's budget holds it
# (gpu_worker.py determine_available_memory, utils memory_profiling, read at v0.9.2): it sits beside the pool, 12.3 MB a
# rank for Qwen3-235B-A22B at TP 4, and moves no KV figure.
LMCACHE_CHUNK_TOKENS = 256  # LMCacheEngineConfig.chunk_size's default (LMCACHE_CHUNK_SIZE sets it)
LMCACHE_GPU_BUFFER = "its GPU staging buffer of 256 tokens' KV"
SOURCE_SPEC = (
    "config/speculative.py; v1/spec_decode (draft loaded with the model, its layers in the KV specs)"
)
SOURCE_ENCODER = "v1/worker/gpu_model_runner.py profile_run (encoder budget)"
SOURCE_LORA = "lora/layers/base_linear.py, column_parallel_linear.py create_lora_weights (v0.33.0)"
SOURCE_EPLB = "models/deepseek_v2.py: n_physical_experts = n_logical + n_redundant (v0.33.0)"
# V0's CPU swap pool: pinned blocks per worker; the V1 engine (v0.11.0 on) has none
SWAP_ERAS: Eras[bool] = Eras((
    Era("", True, "worker/cache_engine.py (V0): num_cpu_blocks = int(swap_space_bytes // cache_block_size)"),
    Era("0.11.0", False, "V1 only (V0 removed): --swap-space allocates no KV pool"),
))


def setup(settings: LaunchSettings) -> DeploymentSetup:
    """What the launch turns on beside the model (a malformed value names the flag)."""
    method = stated_method(settings)  # --speculative-config with --spec-method / --spec-model / --spec-tokens merged
    draft = stated_draft(settings)
    # a method the release's SpeculativeMethod lacks stops vLLM in validation (vllm/spec_methods.py)
    check_method(method, METHOD_ERAS, settings.engine_version, flag="--speculative-config")
    tokens = draft_tokens(settings)
    kind = None
    if method in NO_DRAFT_METHODS:
        kind = SpecKind.NGRAM
    elif method is not None and is_mtp(method):
        kind = SpecKind.MTP
    elif method is not None:
        kind = SpecKind.DRAFT_MODEL
    eplb = flag_json(settings, "eplb-config", '{"num_redundant_experts": 32}')
    redundant = eplb.get("num_redundant_experts", flag_int(settings, "num-redundant-experts") or 0)
    if not isinstance(redundant, int) or isinstance(redundant, bool) or redundant < 0:
        raise InputError(
            f"num_redundant_experts must be a whole number ≥ 0 (got {redundant!r})", field="--eplb-config"
        )
    if redundant and not flag_set(settings, "enable-eplb"):
        raise InputError("vLLM refuses redundant experts without --enable-eplb", field="--eplb-config")
    backend = (flag_text(settings, "all2all-backend") or "").lower() or None
    return DeploymentSetup(
        spec_method=method, spec_kind=kind, draft_model=draft if draft and kind is SpecKind.DRAFT_MODEL else None,
        draft_tokens=tokens, redundant_experts=redundant,
        a2a_backend=backend if backend and backend.startswith("deepep") else None,
        lora=flag_set(settings, "enable-lora"), max_loras=flag_int(settings, "max-loras", least=1),
        max_lora_rank=flag_int(settings, "max-lora-rank", least=1), host_kv=_host_request(settings),
    )  # fmt: skip


def _offloading(connector: str, total_bytes: int, settings: LaunchSettings) -> HostKvRequest:
    """A total the launch states over its workers (--kv-offloading-size, `cpu_bytes_to_use`): vLLM splits it evenly
    over one engine's TP × PP workers, each DP replica having its own (v1/kv_offload/cpu/spec.py: num_chunks =
    cpu_bytes_to_use // (world × bytes per block), v0.33.0)."""
    return HostKvRequest(connector=connector, size_bytes=total_bytes, split_over=settings.tp * settings.pp)


def _host_request(settings: LaunchSettings) -> HostKvRequest | None:
    size = flag_float(settings, "kv-offloading-size")
    if size is not None:
        backend = (flag_text(settings, "kv-offloading-backend") or "native").lower()
        if backend == "lmcache":
            return HostKvRequest(connector="LMCache (multi-process server)", stated=False)
        return _offloading("OffloadingConnector", int(size * GIB), settings)
    transfer = flag_json(settings, "kv-transfer-config", '{"kv_connector": "OffloadingConnector"}')
    connector = str(transfer.get("kv_connector") or "")
    extra = transfer.get("kv_connector_extra_config")
    extra = extra if isinstance(extra, dict) else {}
    if connector in ("OffloadingConnector", "SimpleCPUOffloadConnector"):
        cpu_bytes = extra.get("cpu_bytes_to_use")
        if isinstance(cpu_bytes, (int, float)) and cpu_bytes > 0:
            return _offloading(connector, int(cpu_bytes), settings)
        return HostKvRequest(connector=connector, stated=False)
    if connector.startswith("LMCache"):
        return HostKvRequest(connector=connector, size_bytes=LMCACHE_DEFAULT_CPU_BYTES, stated=False)
    swap = flag_float(settings, "swap-space", above=-1.0)
    if swap is not None and swap > 0:
        return HostKvRequest(connector="swap space", size_bytes=int(swap * GIB))
    return None


def without(settings: LaunchSettings, feature: Feature) -> LaunchSettings:
    stripped = without_flags(settings, _FEATURE_FLAGS[feature])
    if feature is Feature.HOST_KV and _host_request(stripped) is not None:  # an offloading connector
        stripped = without_flags(stripped, ("kv-transfer-config",))
    return stripped


def with_setup(settings: LaunchSettings, setup: DeploymentSetup) -> LaunchSettings:
    """The planner's edit in vLLM's flags."""
    spec = None
    if setup.spec_method:
        spec = {"method": setup.spec_method, "num_speculative_tokens": setup.draft_tokens or 1}
        if setup.draft_model:
            spec["model"] = setup.draft_model
    host = setup.host_kv
    world = settings.tp * settings.pp  # --kv-offloading-size is over one engine's TP × PP workers
    host_gib = None
    if host is not None and host.size_bytes:
        # the total a launch stated over these workers, else one worker's share × them
        total = host.bytes_total if host.split_over == world else (host.bytes_per_rank or 0) * world
        host_gib = (total or 0) / GIB
    return with_flags(settings, {
        "speculative-config": json.dumps(spec) if spec else None,
        "enable-eplb": setup.redundant_experts > 0,
        "no-enable-eplb": None,  # the setup states the switch: its `--no-` spelling goes
        "no-enable-lora": None,
        "eplb-config": json.dumps({"num_redundant_experts": setup.redundant_experts}) if setup.redundant_experts else None,
        "num-redundant-experts": None,  # the older spelling: the config above states it now
        "speculative-model": None,  # the older spellings: the speculative config above states them now
        "num-speculative-tokens": None,
        **{flag: None for flag, _ in SPLIT_FIELDS},  # v0.22.0's split spellings: the config above states them
        "enable-lora": setup.lora,
        "max-loras": str(setup.max_loras) if setup.lora and setup.max_loras else None,
        "max-lora-rank": str(setup.max_lora_rank) if setup.lora and setup.max_lora_rank else None,
        "kv-offloading-size": f"{host_gib:g}" if host_gib else None,
    })  # fmt: skip


def draft_kv_layers(model: ModelSpec, setup: DeploymentSetup, draft: ModelSpec | None, version: ResolvedVersion) -> int:
    """The draft's attention layers that get KV specs of their own (on the last stage)."""
    if setup.spec_kind is SpecKind.MTP:
        return model.mtp_layers
    if setup.spec_kind is SpecKind.DRAFT_MODEL and setup.spec_method not in NO_KV_METHODS:
        return draft.num_layers if draft is not None else 1
    return 0


def terms(inputs: TermInputs) -> tuple[BudgetTerm, ...]:
    found: list[BudgetTerm] = []
    setup = inputs.setup
    if setup.spec_kind is not None:
        found += _speculative(inputs)
    if setup.redundant_experts and inputs.model.moe is not None:
        moe = inputs.model.moe
        found.append(BudgetTerm(
            feature=Feature.EXPERT_PARALLEL, charge=Charge.RESIDENT, source=SOURCE_EPLB,
            label=f"redundant experts: {setup.redundant_experts} over {inputs.layout.moe_shards} ranks",
            bytes=redundant_expert_bytes(inputs.model, inputs.weights, setup.redundant_experts),
            setting=f"--enable-eplb --eplb-config '{{\"num_redundant_experts\": {setup.redundant_experts}}}'",
            detail=f"{moe.num_routed_experts + setup.redundant_experts} physical experts for {moe.num_routed_experts} "
            "logical, loaded with the weights",
        ))  # fmt: skip
    if setup.a2a_backend:
        found.append(BudgetTerm(
            feature=Feature.EXPERT_PARALLEL, charge=Charge.RESIDENT, label=f"{setup.a2a_backend} all-to-all buffers",
            state=TermState.NOT_MODELLED, setting=f"--all2all-backend {setup.a2a_backend}",
            source="distributed/device_communicators/all2all.py",
            detail="allocated before the profile run and measured there as non-torch memory; not modelled apart",
        ))  # fmt: skip
    gathered = gathered_batch_term(inputs)  # DP replicas of a MoE model (dp_dispatch.py)
    if gathered is not None:
        found.append(gathered)
    if setup.lora:
        found.append(_lora(inputs))
    if (inputs.model.multimodal or inputs.model.vision is not None) and not tower_unbuilt(
        inputs.model, inputs.settings, inputs.version
    ):  # served text-only (--language-model-only, text_only.py): no tower built, no encoder profiled
        found.append(_encoder(inputs))
    return tuple(found)


def _encoder(inputs: TermInputs) -> BudgetTerm:
    """The encoder's part of vLLM's profile run. For the families `encoder_profile.py` counts, the encoder cache
    (its outputs and dummy pixels) kept through the text run is in the activation peak, and the term names what is
    still not: the encoder's own forward before it, counted for Qwen2.5-VL where read (encoder_forward.py), for
    Qwen3.5 wherever its family is counted and for Qwen3-VL from v0.17.0 (encoder_forward_qwen3.py,
    encoder_profile.qwen3_forward_counted). For the
    others neither is modelled. None of it where `--skip-mm-profiling` leaves it out (skip_mm_profiling.py)."""
    towers = _towers(inputs.model)
    if skips_encoder(inputs.version, inputs.gpu_name, inputs.settings):
        return BudgetTerm(
            feature=Feature.ENCODER, charge=Charge.RESERVE, label=f"{towers} profile skipped", setting=SKIP_MM_FLAG,
            source=SKIP_MM_SOURCE, detail="vLLM's profile run leaves the encoder's dummy batch and encoder cache out, "
            "so its peak (and kvtop's) is the text model's; the encoder's memory at serving is left to the operator",
        )  # fmt: skip
    context = max_model_len(inputs.model, inputs.settings, inputs.version)
    family = counted_family(inputs.model, inputs.version, inputs.settings.flags, context)
    if family is not None and (forward_counted(inputs.model, inputs.version)
                               or qwen3_forward_counted(inputs.model, inputs.version)):
        return BudgetTerm(
            feature=Feature.ENCODER, charge=Charge.RESERVE, label=f"{towers} forward and encoder cache in the profile run",
            state=TermState.MODELLED, source=SOURCE_ENCODER,
            detail=f"counted inside the activation peak: the larger of the tower's forward over {family}'s dummy batch "
            "(encoder_forward.py) and the text run with the encoder cache it keeps (encoder_profile.py)",
        )  # fmt: skip
    if family is not None:
        return BudgetTerm(
            feature=Feature.ENCODER, charge=Charge.RESERVE, label=f"{towers} forward in the profile run",
            state=TermState.NOT_MODELLED, source=SOURCE_ENCODER,
            detail=f"the encoder cache vLLM keeps through the text run ({family}'s dummy "
            "batch: its outputs and pixels) is counted inside the activation peak (encoder_profile.py); the "
            "encoder's own forward before it is not",
        )  # fmt: skip
    limits = read_limits(inputs.settings.flags, inputs.version).unread
    unread = f"; {limits}, so the encoder cache is not counted and a text-only launch not refused" if limits else ""
    release = release_not_read(inputs.model, inputs.version)
    unread += f"; {release}" if release else ""
    return BudgetTerm(
        feature=Feature.ENCODER, charge=Charge.RESERVE, label=f"encoder cache and {towers} profile peak",
        state=TermState.NOT_MODELLED, source=SOURCE_ENCODER,
        detail="vLLM measures them in its profile run, inside the activation peak; kvtop's non-KV estimate does not "
        f"split them out (it counts the encoder cache only for {', '.join(COUNTED_FAMILIES)}, on releases it read, "
        f"without {' / '.join('--' + name for name in UNREAD_FLAGS)} or a dummy size in --limit-mm-per-prompt: "
        f"encoder_profile.py){unread}",
    )  # fmt: skip


def _towers(model: ModelSpec) -> str:
    """The encoder towers the config names, in words: its `vision_config` and `audio_config` sections (an audio-only
    model such as Qwen2-Audio has no vision tower), less a part the launch leaves unbuilt (`tower_parts`);
    "encoder" where it names neither."""
    unbuilt = model.tower.unbuilt_part if model.tower is not None else None
    kinds = [kind for kind, held in (("vision", model.vision is not None), ("audio", model.audio_tower))
             if held and kind != unbuilt]  # fmt: skip
    return f"{' and '.join(kinds)} tower" + ("s" if len(kinds) > 1 else "") if kinds else "encoder"


def _speculative(inputs: TermInputs) -> list[BudgetTerm]:
    setup, model = inputs.setup, inputs.model
    # a parallel-drafting EAGLE head (P-EAGLE) is sized from its config alone, else refused (draft_parallel.py)
    check_parallel_draft(inputs.settings, setup.spec_method, inputs.draft is not None, inputs.version)
    dflash.check_windows(inputs.draft, setup.spec_method, inputs.version)  # mixed windows: refused by name
    setting = f"--speculative-config method={setup.spec_method}" + (
        f" model={setup.draft_model}" if setup.draft_model else ""
    )
    found: list[BudgetTerm] = []
    if setup.spec_method == HIDDEN_METHOD:  # no weights; a cache-only layer of hidden states (hidden_states.py)
        return _hidden_states(inputs, setting)
    if setup.spec_kind is SpecKind.NGRAM:
        return [BudgetTerm(feature=Feature.SPECULATIVE, charge=Charge.RESIDENT, label=f"{setup.spec_method}: no draft "
                           "model, no draft KV", setting=setting, source=SOURCE_SPEC,
                           detail=unread_field(inputs.settings, setup.spec_method, inputs.version))]  # fmt: skip
    if setup.spec_kind is SpecKind.MTP:
        if model.mtp_layers:
            mtp = next((row.bytes for row in inputs.weights.rows if row.component == "mtp"), 0)
            found.append(BudgetTerm(feature=Feature.SPECULATIVE, charge=Charge.WEIGHTS, bytes=mtp, setting=setting,
                                    label=f"draft weights: {counted(model.mtp_layers, 'MTP layer')}, in the weights book",
                                    source=SOURCE_SPEC))  # fmt: skip
        else:
            found.append(BudgetTerm(feature=Feature.SPECULATIVE, charge=Charge.RESIDENT, label="draft weights",
                                    state=TermState.NOT_MODELLED, setting=setting, source=SOURCE_SPEC,
                                    detail="the config states no MTP layers (num_nextn_predict_layers)"))  # fmt: skip
    else:
        found.append(_draft_weights(inputs, setting))
    cell = inputs.kv_with_draft.full_bytes_per_token - inputs.kv.full_bytes_per_token
    if cell:
        with_draft, plain = inputs.kv_with_draft.pool("full"), inputs.kv.pool("full")
        extra = (with_draft.layers if with_draft else 0) - (plain.layers if plain else 0)
        assumed = setup.spec_kind is SpecKind.DRAFT_MODEL and inputs.draft is None
        found.append(BudgetTerm(
            feature=Feature.SPECULATIVE, charge=Charge.KV_CELL, bytes_per_token=cell, setting=setting, source=SOURCE_SPEC,
            label=f"draft KV: {counted(extra, 'layer')} beside the target's", basis=Basis.ASSUMED if assumed else Basis.COMPUTED,
            detail="one draft layer assumed (EAGLE heads), with the target's KV heads" if assumed
            else "the draft's layers share the target's blocks",
        ))  # fmt: skip
    return found


def _hidden_states(inputs: TermInputs, setting: str) -> list[BudgetTerm]:
    """extract_hidden_states: ExtractHiddenStatesModel loads no weights and caches the target's hidden states a
    token in one cache-only layer of the target's KV group (hidden_states.py); refused where kvtop cannot plan it."""
    states = cached_states(inputs.settings, inputs.model, inputs.version)
    cell = inputs.kv_with_draft.full_bytes_per_token - inputs.kv.full_bytes_per_token
    return [
        BudgetTerm(feature=Feature.SPECULATIVE, charge=Charge.RESIDENT, label=f"{HIDDEN_METHOD}: no draft weights",
                   setting=setting, source=HIDDEN_SOURCE, detail="ExtractHiddenStatesModel.load_weights loads none"),
        BudgetTerm(feature=Feature.SPECULATIVE, charge=Charge.KV_CELL, bytes_per_token=cell, setting=setting,
                   label=f"hidden-state cache: {counted(states, 'aux layer')} × {inputs.model.hidden_size} a token",
                   source=HIDDEN_SOURCE, detail="one cache-only layer in the target's KV group, in the model's dtype, "
                   "whole on every rank"),
    ]  # fmt: skip


def _draft_weights(inputs: TermInputs, setting: str) -> BudgetTerm:
    base = BudgetTerm(feature=Feature.SPECULATIVE, charge=Charge.RESIDENT, label="draft weights", setting=setting,
                      source=SOURCE_SPEC)  # fmt: skip
    if inputs.measured_draft_bytes is not None:
        return base.model_copy(update={"bytes": inputs.measured_draft_bytes, "basis": Basis.MEASURED})
    drafter = dflash.drafter_bytes(inputs.draft, inputs.layout, inputs.version) if inputs.draft is not None else None
    if inputs.draft is not None and drafter is not None:  # a DFlash drafter as vLLM loads it (dflash.py)
        return base.model_copy(update={
            "label": f"draft weights ({inputs.draft.name}, DFlash drafter, {counted(inputs.draft.num_layers, 'layer')})",
            "bytes": drafter, "basis": Basis.ASSUMED, "source": dflash.SOURCE, "detail": dflash.SHARED,
        })  # fmt: skip
    head = head_bytes(inputs.draft, inputs.layout, inputs.version) if inputs.draft is not None else None
    if inputs.draft is not None and head is not None:  # an EAGLE-3 head as vLLM loads it (eagle3_head.py)
        return base.model_copy(update={
            "label": f"draft weights ({inputs.draft.name}, EAGLE-3 head, {counted(inputs.draft.num_layers, 'layer')})",
            "bytes": head, "basis": Basis.ASSUMED, "source": EAGLE3_SOURCE, "detail": EAGLE3_SHARED,
        })  # fmt: skip
    if inputs.draft is not None:
        return base.model_copy(update={
            "label": f"draft weights ({inputs.draft.name}, {counted(inputs.draft.num_layers, 'layer')})",
            "bytes": draft_weights_bytes(inputs.draft, inputs.layout),
            "basis": Basis.ASSUMED,
            "detail": DRAFT_CONFIG_DETAIL,
        })  # fmt: skip
    unknown = "the draft model's config is not known: give it with --draft-model or its weights with --draft-weights"
    if inputs.setup.spec_method == EAGLE3:  # vLLM builds a head of one layer + fc: assumed in the target's shape,
        # as its one draft KV layer is (draft_kv_layers); the weights term's interval keeps its size (unsized_error)
        return base.model_copy(update={
            "label": "draft weights (EAGLE-3 head assumed: 1 layer in the target's shape)",
            "bytes": target_shaped_bytes(inputs.model, inputs.layout.tp), "basis": Basis.ASSUMED,
            "source": EAGLE3_SOURCE, "detail": f"{unknown}; {EAGLE3_SHARED}",
        })  # fmt: skip
    return base.model_copy(update={"state": TermState.NOT_MODELLED, "detail": unknown})


def _lora(inputs: TermInputs) -> BudgetTerm:
    setup, model = inputs.setup, inputs.model
    slots = setup.max_loras or DEFAULT_MAX_LORAS
    rank = setup.max_lora_rank or DEFAULT_MAX_LORA_RANK
    base = BudgetTerm(feature=Feature.LORA, charge=Charge.RESIDENT, label=f"LoRA slots: {slots} × rank {rank}",
                      setting=f"--enable-lora --max-loras {slots} --max-lora-rank {rank}", source=SOURCE_LORA)  # fmt: skip
    reason = lora_unmodelled_reason(model)
    if reason is None and flag_set(inputs.settings, "fully-sharded-loras"):
        reason = "--fully-sharded-loras splits the slots differently: not modelled"
    if reason is not None:
        return base.model_copy(update={"state": TermState.NOT_MODELLED, "detail": reason})
    layers = range(*inputs.stage_layers)  # the wrapped linear layers of this rank's stage
    size = lora_slot_bytes(model, inputs.layout, layers, slots=slots, rank=rank, modules=LORA_MODULES,
                           dtype_bytes=model.dtype_bytes)  # fmt: skip
    return base.model_copy(update={
        "bytes": size, "detail": f"A and B of {', '.join(LORA_MODULES)} on the rank's {len(layers)} layers",
    })  # fmt: skip


def host_tier(
    setup: DeploymentSetup, *, gpu_tokens: int, kv_bytes_per_token: int, page_size: int, ranks: int, world: int,
    version: ResolvedVersion,
) -> HostTier | None:  # fmt: skip
    request = setup.host_kv
    if request is None or not kv_bytes_per_token:
        return None
    block_bytes = kv_bytes_per_token * page_size
    if request.connector == "swap space":
        era = era_for(SWAP_ERAS, version)
        per_rank = request.bytes_per_rank or DEFAULT_SWAP_SPACE_GIB * GIB
        blocks = per_rank // block_bytes if era.value else 0
        return HostTier(
            connector="swap space (V0)", setting=f"--swap-space {gib_setting(per_rank)}", bytes_per_rank=per_rank,
            tokens_per_rank=blocks * page_size, gpu_tokens_per_rank=gpu_tokens, ranks=ranks, source=era.source,
            state=TermState.MODELLED if era.value else TermState.NOT_MODELLED,
            detail="pinned CPU blocks for preempted requests' KV, per worker" if era.value
            else "the V1 engine keeps no swap pool",
        )  # fmt: skip
    if request.bytes_total:  # over the TP × PP workers of one engine (each DP replica has its own)
        # one worker's share (`_offloading`); its whole blocks are spec.py's num_chunks
        per_rank = request.bytes_per_rank or 0
        blocks = per_rank // block_bytes
        return HostTier(
            connector=request.connector, setting=f"--kv-offloading-size {gib_setting(request.bytes_total)}",
            bytes_per_rank=per_rank, tokens_per_rank=blocks * page_size, gpu_tokens_per_rank=gpu_tokens, ranks=ranks,
            source="v1/kv_offload/cpu/spec.py: num_chunks = cpu_bytes_to_use // (world × bytes per block) (v0.33.0)",
            detail="the size is over every TP rank; one block per chunk, before the chunk's alignment padding",
        )  # fmt: skip
    per_rank = request.bytes_per_rank or 0
    staging = LMCACHE_CHUNK_TOKENS * kv_bytes_per_token  # the GPU buffer of one chunk's KV on the rank
    return HostTier(
        connector=request.connector, setting="--kv-transfer-config", bytes_per_rank=per_rank,
        tokens_per_rank=per_rank // kv_bytes_per_token if per_rank else 0, gpu_tokens_per_rank=gpu_tokens,
        ranks=ranks, basis=Basis.ASSUMED, state=TermState.MODELLED if per_rank else TermState.NOT_MODELLED,
        source="LMCache config max_local_cpu_size" if per_rank else "kv_connector_extra_config",
        detail=f"LMCache's default 5 GB of local CPU cache per worker assumed (LMCACHE_MAX_LOCAL_CPU_SIZE sets it); "
               f"{LMCACHE_GPU_BUFFER} ({staging / 1e6:.1f} MB a rank here) is made before vLLM's profile and "
               f"charged to no term of its KV budget" if per_rank else "the connector's CPU size is not stated: not modelled",
    )  # fmt: skip
