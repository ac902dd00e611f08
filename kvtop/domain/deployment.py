"""The whole budget of a deployment beside the target model, as named terms of the ledger.

A modern launch spends GPU memory on more than the model's weights and its KV pool: a speculative
draft (its weights, its KV, the engine's reserve for its graphs), redundant experts and all-to-all
buffers of expert parallelism, an encoder cache, LoRA slots; and it may keep KV in host memory.
Each engine package reads its own flags into a `DeploymentSetup` and prices every feature by its own
rules and release (`kvtop/domain/engines/<engine>/deployment.py`); a `BudgetTerm` says how the engine
charges it, so the budget, the waterfall, the planner and `plan --json` all read the same figure:

    weights     inside the weights book already (a model's own MTP layers): shown, never added twice
    resident    allocated before the KV pool is sized (draft weights, redundant experts, LoRA slots):
                every engine's pool shrinks by it as it does by the weights
    kv_cell     stored beside every cached token (a draft's KV layers): a larger cell, fewer tokens
    reserve     kept off the KV budget by the engine's own rule (SGLang's automatic share)
    after_pool  allocated after the pool: it must fit in what the pool leaves (the headroom check)
    host        host memory (offloaded KV), never the GPU's

A term kvtop cannot price for this launch or release is `not_modelled`, with the reason, never 0 said
as a fact; every figure says where it comes from (`Basis`).
"""

from __future__ import annotations

from enum import Enum
from typing import Protocol

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    computed_field,
    model_serializer,
)

from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.gpu_total_origin import GpuTotalOrigin
from kvtop.domain.kv import KvBook
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.weights import WeightsBook


class Feature(str, Enum):
    """What part of a deployment a term belongs to (one waterfall term each)."""

    SPECULATIVE = "speculative"  # a draft model or MTP layers, their KV and the engine's reserve for them
    EXPERT_PARALLEL = "expert_parallel"  # EPLB redundant experts, all-to-all (DeepEP) buffers
    ENCODER = "encoder"  # a multimodal encoder's cache and profile peak
    LORA = "lora"  # LoRA adapter slots
    HOST_KV = "host_kv"  # KV kept in host memory (HiCache, offloading connectors, swap space)

    def __str__(self) -> str:
        return self.value


#: The order features are taken off the clean prediction in the waterfall (host KV holds no GPU bytes).
GPU_FEATURES: tuple[Feature, ...] = (
    Feature.SPECULATIVE,
    Feature.EXPERT_PARALLEL,
    Feature.ENCODER,
    Feature.LORA,
)


class Charge(str, Enum):
    """How the engine charges a term (see the module docstring)."""

    WEIGHTS = "weights"
    RESIDENT = "resident"
    KV_CELL = "kv_cell"
    RESERVE = "reserve"
    AFTER_POOL = "after_pool"
    HOST = "host"


#: How each charge is said, by `plan`'s "Beside the model" and the planner alike.
CHARGE_WORDS: dict[Charge, str] = {
    Charge.WEIGHTS: "in the weights",
    Charge.RESIDENT: "before the pool",
    Charge.KV_CELL: "per cached token",
    Charge.RESERVE: "engine's reserve",
    Charge.AFTER_POOL: "after the pool",
    Charge.HOST: "host memory",
}


class Basis(str, Enum):
    """Where a term's figure comes from."""

    MEASURED = "measured"  # the engine's log or the operator said it
    COMPUTED = "computed"  # the engine's own arithmetic on stated inputs (flags, configs)
    CALIBRATED = "calibrated"  # fitted to recorded runs
    ASSUMED = "assumed"  # an input nobody stated was assumed (the detail says which)


class TermState(str, Enum):
    MODELLED = "modelled"
    NOT_MODELLED = "not_modelled"  # the feature is on, but kvtop cannot price it here (detail says why)


class BudgetTerm(BaseModel):
    """One named line of a rank's budget beside weights and KV."""

    model_config = ConfigDict(frozen=True)

    feature: Feature
    charge: Charge
    label: str  # 'draft weights (EAGLE3, 1 layer)'
    bytes: int = 0  # per rank; for `kv_cell` the bytes the pool gives up for it (0 before the solve)
    bytes_per_token: int = 0  # `kv_cell`: what each cached token costs more per rank
    basis: Basis = Basis.COMPUTED
    state: TermState = TermState.MODELLED
    setting: str = ""  # the flags that set it, as the engine spells them
    source: str = ""  # the engine's code (file, function) and the release its rule is read at
    detail: str = ""  # how the figure is made, or why it is not modelled

    @property
    def modelled(self) -> bool:
        return self.state is TermState.MODELLED


class SpecKind(str, Enum):
    """What a speculative method drafts with."""

    DRAFT_MODEL = "draft_model"  # a separate (usually small) model: EAGLE, EAGLE-3, a standalone draft
    MTP = "mtp"  # the target's own multi-token-prediction layers
    NGRAM = "ngram"  # no model: drafts from the prompt's n-grams


class HostKvRequest(BaseModel):
    """What a launch asks of host memory for KV: the size it states, each rank's own or a total the engine splits
    evenly over `split_over` ranks (which ranks is the engine's rule: its `setup` says); or a ratio. The share and
    the total are read from the one stated size.

    Its JSON (`plan --json`'s `deployment.setup.host_kv`) says the share and the total, not the size and split it
    stores: `bytes_per_rank` and `bytes_total` are computed fields, the stored two are excluded."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    connector: str  # 'HiCache', 'OffloadingConnector', 'LMCache', 'swap space', 'secondary pool'
    size_bytes: int | None = Field(default=None, exclude=True)  # the size the launch states (None: a ratio, or none)
    split_over: int | None = Field(default=None, exclude=True)  # ranks sharing `size_bytes` (vLLM's --kv-offloading-size); None: per rank
    ratio_to_gpu_pool: float | None = None  # SGLang's --hicache-ratio
    stated: bool = True  # False: the engine's default size, the launch gave none

    @computed_field  # type: ignore[prop-decorator]
    @property
    def bytes_per_rank(self) -> int | None:
        """One rank's share: the size itself, or its even split (whole bytes) over the ranks that share it."""
        if self.size_bytes is None:
            return None
        return self.size_bytes // max(self.split_over or 1, 1)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def bytes_total(self) -> int | None:
        """The total the launch states over the ranks that share it (None: it states a size per rank, or none)."""
        return self.size_bytes if self.split_over is not None else None

    @model_serializer(mode="wrap")
    def _contract_order(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        """The contract's key order: the connector, then the share and the total, then the rest (pydantic puts
        computed fields last)."""
        dumped: dict[str, object] = handler(self)
        return {key: dumped.pop(key) for key in ("connector", "bytes_per_rank", "bytes_total")} | dumped


class DeploymentSetup(BaseModel):
    """What a launch turns on beside the target model, read from its flags by the engine's own rules."""

    model_config = ConfigDict(frozen=True)

    spec_method: str | None = None  # as the engine spells it: 'EAGLE3', 'deepseek_mtp', 'ngram'
    spec_kind: SpecKind | None = None
    draft_model: str | None = None  # the draft's path or hub id, as given
    draft_tokens: int | None = None  # tokens drafted per step
    redundant_experts: int = 0  # EPLB's extra physical experts over the expert-parallel group
    a2a_backend: str | None = None  # the MoE all-to-all backend: 'deepep', …
    lora: bool = False
    max_loras: int | None = None  # LoRA slots on the GPU (None: the engine's default)
    max_lora_rank: int | None = None  # None: the adapters decide (the engine reads them at start)
    lora_modules: tuple[str, ...] | None = None  # None: the engine's default set
    host_kv: HostKvRequest | None = None

    @property
    def features(self) -> tuple[Feature, ...]:
        """The features this launch turns on, in waterfall order."""
        on = {
            Feature.SPECULATIVE: self.spec_kind is not None,
            Feature.EXPERT_PARALLEL: self.redundant_experts > 0 or self.a2a_backend is not None,
            Feature.LORA: self.lora,
            Feature.HOST_KV: self.host_kv is not None,
        }
        return tuple(feature for feature in (*GPU_FEATURES, Feature.HOST_KV) if on.get(feature))

    def loads_mtp(self, model: ModelSpec) -> bool:
        """Whether the draft is the model's own MTP layers."""
        return self.spec_kind is SpecKind.MTP and model.mtp_layers > 0


class HostTier(BaseModel):
    """KV kept in host memory, per rank: what the engine allocates there and how many tokens it holds."""

    model_config = ConfigDict(frozen=True)

    connector: str
    setting: str
    bytes_per_rank: int  # host memory the engine asks for on each rank
    pinned_bytes_per_rank: int | None = None  # what stays pinned and unreclaimable, where it differs
    tokens_per_rank: int  # KV tokens it holds per rank
    gpu_tokens_per_rank: int  # the GPU pool beside it, for scale
    ranks: int  # ranks of the engine on this layout (each holds its own host pool)
    basis: Basis = Basis.COMPUTED
    state: TermState = TermState.MODELLED
    source: str = ""
    detail: str = ""
    problem: str | None = None  # why the engine would refuse this tier at start (None: it accepts it)
    host_reserve_bytes: int = 0  # host memory the engine insists stays available beside the tier (SGLang: 10 GiB)

    @property
    def gpu_pool_multiple(self) -> float | None:
        """The tier's tokens per rank as a multiple of the GPU pool's beside it; None without a GPU pool."""
        return self.tokens_per_rank / self.gpu_tokens_per_rank if self.gpu_tokens_per_rank else None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def total_bytes(self) -> int:
        """Host memory over every rank of the engine (what the node must have free; in `plan --json`'s
        `deployment.host_tier`, as a computed field)."""
        return (self.pinned_bytes_per_rank or self.bytes_per_rank) * self.ranks


class TermInputs(BaseModel):
    """What an engine's deployment rules price a stage's terms from."""

    model_config = ConfigDict(frozen=True)

    model: ModelSpec
    settings: LaunchSettings
    setup: DeploymentSetup
    layout: ParallelLayout
    weights: WeightsBook  # this stage's weights book (MTP layers in it when the draft is MTP)
    kv: KvBook  # this stage's KV book without the draft's layers
    kv_with_draft: KvBook  # … with them
    version: ResolvedVersion
    first_stage: bool
    last_stage: bool
    stage_layers: tuple[int, int]  # [first, last) layer of this pipeline stage
    draft: ModelSpec | None = None  # the draft model's architecture, when kvtop was given its config
    measured_draft_bytes: int | None = None  # the draft's resident weights, when a log or the operator said
    draft_layer_bytes: float | None = None  # one layer of the draft model's KV per token, when its config is known
    gpu_name: str | None = None  # the GPU, where a rule depends on it (SGLang's large-Hopper Qwen3-VL path)
    gpu_total_bytes: int | None = None
    gpu_total_origin: GpuTotalOrigin | None = None  # where that total came from, as its chooser said (None: unsaid)


class DeploymentRules(Protocol):
    """One engine's deployment features: its flags, its terms and its host tier (each package's module)."""

    flags: frozenset[str]  # the engine's flags these rules read (kept verbatim in `LaunchSettings.flags`)
    # where its releases read `LaunchSettings.flashinfer` (`plan --flashinfer`), as `--flashinfer`'s help says it after
    # the engine's name ("v0.9.0 to before v0.11.1 samples with it wherever it imports"); None: no release reads it
    flashinfer_read: str | None

    def setup(self, settings: LaunchSettings) -> DeploymentSetup:
        """What the launch turns on; a malformed value is an InputError naming the flag."""
        ...

    def without(self, settings: LaunchSettings, feature: Feature) -> LaunchSettings:
        """The same launch with `feature` off (its flags removed)."""
        ...

    def with_setup(self, settings: LaunchSettings, setup: DeploymentSetup) -> LaunchSettings:
        """The launch with the deployment features of `setup`, in the engine's own flags (the planner)."""
        ...

    def draft_kv_layers(self, model: ModelSpec, setup: DeploymentSetup, draft: ModelSpec | None,
                        version: ResolvedVersion) -> int:  # fmt: skip
        """Attention layers the draft keeps KV for beside the target's, at `version` (0: none)."""
        ...

    def cache_only_cell(self, model: ModelSpec, settings: LaunchSettings, setup: DeploymentSetup) -> int | None:
        """The bytes a token a draft's cache-only layer holds on every rank, in place of a draft layer's cell (vLLM's
        extract_hidden_states caching the target's hidden states); None where the launch has none."""
        ...

    def terms(self, inputs: TermInputs) -> tuple[BudgetTerm, ...]:
        """The stage's terms, before the budget is solved."""
        ...

    def host_tier(
        self, setup: DeploymentSetup, *, gpu_tokens: int, kv_bytes_per_token: int, page_size: int, ranks: int, world: int,
        version: ResolvedVersion,
    ) -> HostTier | None:  # fmt: skip
        """The host tier of the launch, once the GPU pool is solved (None: none asked for)."""
        ...


def no_cache_only_cell(model: ModelSpec, settings: LaunchSettings, setup: DeploymentSetup) -> int | None:
    """`DeploymentRules.cache_only_cell` of an engine none of whose drafts caches a layer of its own: None."""
    return None


def no_draft_kv_layers(model: ModelSpec, setup: DeploymentSetup, draft: ModelSpec | None, version: ResolvedVersion) -> int:
    """`DeploymentRules.draft_kv_layers` of an engine whose draft kvtop names as not modelled: no layers added
    to the target's cell (its `terms` say the draft's cost is not modelled)."""
    return 0


def with_draft_config(settings: LaunchSettings, draft: ModelSpec | None) -> LaunchSettings:
    """The launch with its draft's config class in `draft_architectures` where kvtop read the draft (`draft` None:
    as it is), so an engine's rules that read the draft's config (vLLM's method detection) see what the plan loads.
    The class kvtop read (`ModelSpec.architecture`, the config's first `architectures` entry) is the one named."""
    if draft is None or settings.draft_architectures == (draft.architecture,):
        return settings
    return settings.model_copy(update={"draft_architectures": (draft.architecture,)})


def no_host_tier(
    setup: DeploymentSetup, *, gpu_tokens: int, kv_bytes_per_token: int, page_size: int, ranks: int, world: int,
    version: ResolvedVersion,
) -> HostTier | None:  # fmt: skip
    """`DeploymentRules.host_tier` of an engine that keeps no host KV tier kvtop reads from its flags."""
    return None


def resident_bytes(terms: tuple[BudgetTerm, ...]) -> int:
    """Bytes the terms hold before the KV pool is sized (the engine charges them like weights)."""
    return sum(t.bytes for t in terms if t.charge is Charge.RESIDENT and t.modelled)


def gpu_terms_beside(terms: tuple[BudgetTerm, ...]) -> tuple[BudgetTerm, ...]:
    """The modelled terms that hold GPU bytes outside the weights book and the KV pool, however the engine charges
    them (before the pool, in its reserve, after the pool): a draft's KV cell is the pool's own."""
    held = (Charge.RESIDENT, Charge.RESERVE, Charge.AFTER_POOL)
    return tuple(t for t in terms if t.charge in held and t.modelled and t.bytes)


def gpu_bytes_beside(terms: tuple[BudgetTerm, ...]) -> int:
    """What `gpu_terms_beside` holds on one rank: the planner's 'beside the model'."""
    return sum(t.bytes for t in gpu_terms_beside(terms))


def terms_of(terms: tuple[BudgetTerm, ...], feature: Feature) -> tuple[BudgetTerm, ...]:
    return tuple(t for t in terms if t.feature is feature)
