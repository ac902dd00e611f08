"""The interface every engine's budget rules implement, and the values they exchange."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from pydantic import BaseModel, ConfigDict

from kvtop.domain.calibration.terms import CalibratedFigures, TermSource
from kvtop.domain.deployment import Basis, BudgetTerm, Charge, DeploymentRules, resident_bytes
from kvtop.domain.engines.modules import EngineModules
from kvtop.domain.engines.versions import ReleaseDate, ResolvedVersion
from kvtop.domain.kv import KvBook, KvStorage
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.layout import ParallelLayout, PpRemainder
from kvtop.domain.model import ModelSpec
from kvtop.domain.wording import gib

if TYPE_CHECKING:
    from kvtop.domain.calibration.inputs import EngineCalibration
    from kvtop.domain.diagnose import EngineOnNode
    from kvtop.domain.diagnose_findings import Finding, LedgerRule, Thresholds
    from kvtop.domain.engine_architectures import EngineArchitectures
    from kvtop.domain.engine_log import EngineLog
    from kvtop.domain.engine_simulation import EngineSimulation
    from kvtop.domain.explain_request import ExplainRequest
    from kvtop.domain.explanation import Explanation, Logged, PoolSizeCheck
    from kvtop.domain.ledger import Ledger
    from kvtop.domain.log_dialect import LogDialect
    from kvtop.domain.refusals import Refusal
    from kvtop.domain.span import EngineSpanRule
    from kvtop.domain.whatif import Replay

GIB = 1 << 30
MIB = 1 << 20
# Memory the CUDA context and NCCL take before weights load, when nothing measured it
# (SGLang logs it as `Init torch distributed ends. mem usage=…`: ≈ 0.6–1.2 GiB on H100 nodes).
DEFAULT_CONTEXT_BYTES = 1 * GIB
# The range kvtop assumes around it where an estimate needs one (explain with --gpu): from a lone GPU
# that loads lazily to a TP8 node's NCCL buffers and custom all-reduce (assumed, not calibrated).
CONTEXT_BYTES_RANGE = (GIB // 4, 2 * GIB)


class MeasuredInputs(BaseModel):
    """Measured values that replace kvtop's predictions (from NVML, a log, or the operator)."""

    model_config = ConfigDict(frozen=True)

    gpu_total_bytes: int | None = None
    free_before_load_bytes: int | None = None  # min over ranks, after CUDA/NCCL init
    free_after_load_bytes: int | None = None  # min over ranks, once every weight is resident
    weights_bytes: int | None = None  # resident weights per rank (largest rank)
    non_kv_bytes: int | None = None  # vLLM: activation peak + non-torch + CUDA graphs (weights excluded)
    available_kv_bytes: int | None = None  # vLLM: `Available KV cache memory`, when logged
    # vLLM under PP: each stage's own `Available KV cache memory` (least over its TP ranks), in stage
    # order; every worker sizes its blocks from its own memory and its own layers, then the least wins
    available_kv_bytes_by_stage: tuple[int, ...] | None = None
    # the pre-load estimate's figures (docs/calibration.md), read where nothing above measured them
    calibrated: CalibratedFigures | None = None
    draft_weights_bytes: int | None = None  # a speculative draft's resident weights per rank (its own load)

    def free_before_load(self, gpu_total_bytes: int) -> int:
        """The memory free before the weights load (min over ranks): measured, else calibrated (CUDA's
        total less the context the corpus fits), else the GPU's total less `DEFAULT_CONTEXT_BYTES`
        (said by `FREE_BEFORE_LOAD_ESTIMATED`)."""
        if self.free_before_load_bytes is not None:
            return self.free_before_load_bytes
        if self.calibrated is not None and self.calibrated.free_before_load_bytes is not None:
            return self.calibrated.free_before_load_bytes
        return gpu_total_bytes - DEFAULT_CONTEXT_BYTES

    def free_before_load_source(self) -> TermSource:
        if self.free_before_load_bytes is not None:
            return "measured"
        if self.calibrated is not None and self.calibrated.free_before_load_bytes is not None:
            return self.calibrated.free_before_load_source
        return "assumed"

    def free_before_load_note(self) -> str | None:
        """The note a plan carries for the free memory it assumed (None: measured)."""
        if self.free_before_load_bytes is not None:
            return None
        if self.calibrated is not None and self.calibrated.free_before_load_bytes is not None:
            return FREE_BEFORE_LOAD_CALIBRATED
        return FREE_BEFORE_LOAD_ESTIMATED

    def non_kv(self, assumed_bytes: int) -> int:
        """The runtime memory a profiling engine charges besides the weights (vLLM's activation peak,
        non-torch memory and CUDA graphs; TensorRT-LLM's profiled reserve): measured, else calibrated,
        else the engine's stated assumption."""
        if self.non_kv_bytes is not None:
            return self.non_kv_bytes
        if self.calibrated is not None and self.calibrated.non_kv_bytes is not None:
            return self.calibrated.non_kv_bytes
        return assumed_bytes

    def non_kv_source(self) -> TermSource:
        if self.non_kv_bytes is not None:
            return "measured"
        if self.calibrated is not None and self.calibrated.non_kv_bytes is not None:
            return self.calibrated.non_kv_source
        return "assumed"

    def engine_total(self, gpu_total_bytes: int) -> int:
        """The total an engine multiplies its share by (vLLM): the GPU memory given, else CUDA's total
        as calibrated per GPU model (below nvidia-smi's), else the GPU's total."""
        if self.gpu_total_bytes is None and self.calibrated is not None and self.calibrated.cuda_total_bytes:
            return self.calibrated.cuda_total_bytes
        return gpu_total_bytes

    def engine_total_source(self) -> TermSource | None:
        if self.gpu_total_bytes is not None:
            return "measured"
        if self.calibrated is not None and self.calibrated.cuda_total_bytes:
            return self.calibrated.cuda_total_source
        return None

    @property
    def weights_extra_bytes(self) -> int:
        """Bytes added to the predicted weights of every rank (a node's measure or an interval's end)."""
        return self.calibrated.weights_extra_bytes if self.calibrated is not None else 0

    def free_before_load_range(self, gpu_total_bytes: int) -> tuple[int, int, int]:
        """(low, central, high) of `free_before_load`: the measured figure three times, else the estimate
        within `CONTEXT_BYTES_RANGE` of CUDA context and NCCL."""
        central = self.free_before_load(gpu_total_bytes)
        if self.free_before_load_bytes is not None:
            return central, central, central
        most, least = CONTEXT_BYTES_RANGE[1], CONTEXT_BYTES_RANGE[0]
        return max(gpu_total_bytes - most, 0), max(central, 0), max(gpu_total_bytes - least, 0)


FREE_BEFORE_LOAD_ESTIMATED = "free memory before load is estimated (GPU total − 1 GiB of CUDA context and NCCL)"
FREE_BEFORE_LOAD_CALIBRATED = (
    "free memory before load is estimated: CUDA's total less the CUDA context and NCCL by TP (the terms above, "
    "docs/calibration.md)"
)


class BudgetStep(BaseModel):
    """One line of the engine's own arithmetic, shown to the operator in order."""

    model_config = ConfigDict(frozen=True)

    label: str
    bytes: int | None = None
    value: float | None = None
    note: str = ""
    measured: bool = False
    source: TermSource | None = None  # where an input figure came from (None: the engine's arithmetic)


class EngineInputs(BaseModel):
    """Everything an engine's rules need for one rank set (the tightest rank decides)."""

    model_config = ConfigDict(frozen=True)

    model: ModelSpec
    layout: ParallelLayout
    settings: LaunchSettings
    gpu_total_bytes: int
    gpu_name: str | None = None  # e.g. "A100-80GB": some engine defaults follow the GPU model
    weights_bytes: int  # the largest rank's resident weights (predicted or measured)
    kv: KvBook  # the KV book of the rank with the most KV per token
    context_length: int
    measured: MeasuredInputs = MeasuredInputs()
    pp_rank: int = 0  # the pipeline stage these books belong to
    version: ResolvedVersion = ResolvedVersion()  # which era of the engine's rules applies
    # the deployment's terms beside the target model (draft, experts, LoRA…: kvtop.domain.deployment)
    terms: tuple[BudgetTerm, ...] = ()

    @property
    def resident_bytes(self) -> int:
        """Everything resident before the KV pool is sized: the weights and the resident terms."""
        return self.weights_bytes + resident_bytes(self.terms)

    def weight_steps(self, label: str = "− weights") -> list[BudgetStep]:
        """The budget lines that charge the weights, then each resident term by name."""
        steps = [BudgetStep(label=label, bytes=-self.weights_bytes, measured=self.measured.weights_bytes is not None)]
        for term in self.terms:
            if term.charge is Charge.RESIDENT and term.modelled and term.bytes:
                steps.append(
                    BudgetStep(label=f"− {term.label}", bytes=-term.bytes, note=term.setting,
                               measured=term.basis is Basis.MEASURED)
                )  # fmt: skip
        return steps

    def fixed_pool_overflow(self, pool_bytes: int, flag: str, notes: list[str]) -> int:
        """Bytes by which a pool sized by a flag rather than by memory (`flag`) exceeds the memory free
        once the weights are resident (0: it fits), said in `notes`. The engine does not check it
        against memory: it allocates the pool and fails at start with CUDA out of memory."""
        room = self.measured.free_before_load(self.gpu_total_bytes) - self.resident_bytes
        over = pool_bytes - room
        if over > 0:
            notes.append(
                f"{flag} asks for a {gib(pool_bytes)} pool where {gib(max(room, 0))} is free after the weights: "
                "the engine would run out of memory allocating it at start"
            )
        return max(over, 0)


class EngineResult(BaseModel):
    """What the engine would allocate and log."""

    model_config = ConfigDict(frozen=True)

    engine: str
    token_capacity: int  # the number the engine logs (0 when it does not fit)
    swa_token_capacity: int | None = None
    page_size: int
    num_blocks: int | None = None  # vLLM
    kv_budget_bytes: int  # bytes the engine hands to the KV pools
    kv_pool_bytes: int  # bytes the pools really take (padding rows, state, index included)
    state_pool_bytes: int = 0
    max_running_requests: int
    max_concurrency: float | None  # vLLM's expression; None where the engine has none
    req_to_token_bytes: int = 0
    reserve_bytes: int  # runtime reserve kept outside weights and KV
    # the reserve the engine's own rules would keep (SGLang: its automatic fraction's), where a given
    # setting can leave less; None where the budget measures what it needs (a profiling run)
    reserve_needed_bytes: int | None = None
    # memory the launch's own share hands to neither the KV pool nor the runtime: a fixed KV size below
    # what the share allows (vLLM's --kv-cache-memory-bytes leaves the rest of its utilization unused)
    unused_bytes: int = 0
    memory_fraction: float  # mem_fraction_static or gpu_memory_utilization actually used
    memory_fraction_source: str
    fits: bool
    shortfall_bytes: int = 0
    steps: tuple[BudgetStep, ...]
    notes: tuple[str, ...] = ()

    @property
    def unused_budget_bytes(self) -> int:
        """Budget no pool and no reserve takes: `unused_bytes`, plus KV budget a token or block cap (or the
        page rounding) leaves outside the pool. Never called runtime reserve: nothing claims it."""
        return self.unused_bytes + max(0, self.kv_budget_bytes - self.kv_pool_bytes)

    @property
    def reserve_short_bytes(self) -> int:
        """How far the reserve falls below what the engine's own rules keep (0: none, or not known).

        A pool that fits can still run out of memory capturing CUDA graphs or under load then."""
        return max(0, self.reserve_needed_bytes - self.reserve_bytes) if self.reserve_needed_bytes else 0


class EngineDiagnosis(Protocol):
    """How an engine prices a cause and spells its fixes (each package's `diagnosis` module)."""

    ledger_rules: Sequence[LedgerRule]  # the engine's own rules over a plan alone

    def restart_capacity(self, replay: Replay, free: Mapping[int, int]) -> int:
        """Tokens per rank a restart gets with `free` bytes free on each GPU (by GPU index)."""
        ...

    def restart_ledger(self, replay: Replay, free: Mapping[int, int], settings: LaunchSettings) -> Ledger | None:
        """The ledger a restart with `settings` solves with `free` bytes free on each GPU (by GPU index);
        None where the engine would refuse to start (vLLM: less free than its share asks)."""
        ...

    def spread_evidence(self, ledger: Ledger, tokens: int, ranks: int) -> str:
        """One line saying how a loss on one GPU spreads over the engine's ranks."""
        ...

    def fp8_kv_dtype(self, ledger: Ledger) -> str: ...

    def layout_alternatives(self, ledger: Ledger, attn_tp: int) -> list[LaunchSettings]:
        """Layouts over the same GPUs whose attention TP is `attn_tp` (fewer KV copies)."""
        ...

    def reported_kv_memory(self, ledger: Ledger, reported_kv_pool_bytes: int | None) -> int | None:
        """The KV memory to re-solve with when the engine's own report shows it kept more outside its KV
        pool than predicted (an engine that budgets a share of the total); None: the report says nothing."""
        ...

    def absolute_budget(self, ledger: Ledger, kv_bytes: int) -> dict[str, int | float] | None:
        """The settings update that gives this launch `kv_bytes` of KV per rank through an absolute setting
        of the ledger's release (bytes, tokens or blocks), or None where it has none that reaches it (a
        cap that would have to raise the budget, a release without the setting): then a share is searched."""
        ...

    def reserve_finding(self, engine: EngineOnNode, thresholds: Thresholds) -> Finding | None: ...

    def restart_finding(self, engine: EngineOnNode) -> Finding | None: ...


class EngineExplainer(Protocol):
    """How an engine's startup log is read back into numbers (each package's `explain` module)."""

    def missing_facts(self, log: EngineLog) -> tuple[str, ...]:
        """Headline facts of this engine's startup log that `log` does not state."""
        ...

    def logged_token_capacity(self, log: EngineLog) -> int | None: ...

    def logged_figures(self, log: EngineLog, settings: LaunchSettings) -> Logged:
        """What the log states, read without a model (a model kvtop does not model still gets its log read)."""
        ...

    def log_kv_dtype(self, log: EngineLog) -> str | None:
        """The KV dtype the log prints, as printed (None: it prints none)."""
        ...

    def explain(self, request: ExplainRequest) -> Explanation:
        """The log's capacity rebuilt by the engine's own rules, and whether it matches."""
        ...

    def pool_size_checks(
        self, log: EngineLog, model: ModelSpec, settings: LaunchSettings, load_mtp: bool
    ) -> tuple[PoolSizeCheck, ...]: ...

    def cause_candidates(
        self, log: EngineLog, model: ModelSpec, settings: LaunchSettings
    ) -> list[tuple[str, LaunchSettings]]:
        """Single changes worth trying when the rebuilt capacity misses the logged one: (what, settings)."""
        ...


class EngineRules(Protocol):
    """One engine's rules: how it stores KV, solves its budget and spreads it over ranks.

    Every engine package implements it (`kvtop/domain/engines/<id>/`); nothing outside a package
    asks which engine it is, it asks the rules.
    """

    id: str
    display_name: str
    kv_storage: KvStorage
    pp_remainder: PpRemainder
    # The least free GPU sizes every rank (SGLang's MIN all-reduce over the world) — else each
    # worker is sized from its own memory and the engine takes the least block count (vLLM).
    sizes_every_rank_from_least_free: bool
    pools_draft_kv: bool  # speculative draft layers' KV shares the target's token count
    dcp_splits_kv_heads: bool  # KV heads divide over tp ÷ dcp (else over tp, DCP or not)
    # The worker's context ("total − free before load") holds the driver's reserved bytes, which
    # NVML counts apart from every process.
    context_holds_driver_reserved: bool
    calendar: tuple[ReleaseDate, ...]  # the releases kvtop models, with the day each came out
    memory_fraction_flag: str  # … as the engine spells it
    memory_fraction_of: str  # what that share is a share of, in words (the engines' shares differ)
    # identity: how its processes and server look from outside (read by the process table and the demo)
    title_prefix: str  # the prefix of its process titles (`sglang::`, `VLLM::`), or one that names nothing
    default_port: int  # where its server listens when the launch does not say
    # its processes state no rank, so a process's rank is its GPU's place among the engine's GPUs
    ranks_by_gpu_order: bool
    # the settings that cap the capacity its budget would otherwise solve (the waterfall's cap term)
    cap_fields: tuple[str, ...]
    # its Prometheus gauges (as scraped from its /metrics): the KV usage share (0–1) and the token capacity
    usage_metrics: tuple[str, ...]
    capacity_metrics: tuple[str, ...]

    @property
    def memory_fraction_field(self) -> str | None:
        """The LaunchSettings field of the engine's memory share; None: it takes no share of memory
        (llama.cpp allocates the context it is asked for)."""
        ...

    @property
    def diagnosis(self) -> EngineDiagnosis: ...

    @property
    def log_dialect(self) -> LogDialect:
        """What its startup log looks like (its `log_lines` module)."""
        ...

    @property
    def simulation(self) -> EngineSimulation:
        """How it behaves on a demo node (its `demo` module)."""
        ...

    def rank_of_device(self, settings: LaunchSettings, position: int) -> dict[str, int] | None:
        """The rank of an untitled worker from its GPU's place among the GPUs it sees, for engines whose
        ranks bind devices in rank order (TensorRT-LLM's MPI workers); None where titles name the rank."""
        ...

    def uncapped(self, settings: LaunchSettings) -> LaunchSettings:
        """The launch without the settings that cap its capacity (`cap_fields`)."""
        ...

    @property
    def explainer(self) -> EngineExplainer: ...

    @property
    def span_rule(self) -> EngineSpanRule:
        """How the engine spreads over nodes and pairs prefill with decode (its `span` module)."""
        ...

    @property
    def calibration(self) -> EngineCalibration:
        """Its fitted pre-load terms (docs/calibration.md)."""
        ...

    @property
    def deployment(self) -> DeploymentRules:
        """Its deployment features beside the model: drafts, experts, LoRA, host KV (its `deployment` module)."""
        ...

    @property
    def architectures(self) -> EngineArchitectures:
        """Which model classes it registers, by release (its `architectures` module)."""
        ...

    def kv_storage_for(
        self, model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion
    ) -> KvStorage:
        """How this launch stores KV: `kv_storage`, unless the engine's backend or release changes it
        (LMDeploy: TurboMind and its PyTorch engine differ, and TurboMind stored the MLA latent twice
        before v0.12.2)."""
        ...

    def default_page_size(self, model: ModelSpec, gpu_name: str | None, version: ResolvedVersion) -> int:
        """Tokens per KV page when no flag says (the default attention backend may force one)."""
        ...

    def kv_layers_of_stage(self, model: ModelSpec, layers: range, version: ResolvedVersion) -> range:
        """The layers a pipeline stage sizes its KV pools for, given the layers it holds."""
        ...

    def resolve_version(self, log: EngineLog) -> ResolvedVersion:
        """The release whose rules read `log`, and the evidence (a version line, its lines, its dates)."""
        ...

    def solve(self, inputs: EngineInputs) -> EngineResult: ...

    def at_shared_capacity(self, settings: LaunchSettings, tightest: EngineResult) -> LaunchSettings:
        """Settings that hold every pipeline stage at the tightest stage's capacity."""
        ...

    def launch_refusals(self, ledger: Ledger) -> tuple[Refusal, ...]:
        """What this engine, at the ledger's release, refuses to start although kvtop sizes it
        (`kvtop.domain.refusals`); empty where it refuses nothing kvtop knows of."""
        ...


class EngineBase(EngineModules):
    """What most engines share, so a package's rules class states only what differs from it.

    Each engine still states its id, names, storage, calendar, memory share, identity, cap fields and
    metric names (the conformance test asks every engine for them), and how it resolves its version,
    solves its budget, sizes a page and holds its pipeline stages at one capacity."""

    pp_remainder: PpRemainder = "last"  # remainder layers go to the last stages
    sizes_every_rank_from_least_free = True  # a MIN over the ranks' free memory sizes every rank
    pools_draft_kv = False  # a speculative draft's KV is not the target's token count
    dcp_splits_kv_heads = False  # KV heads divide over tp, DCP or not
    ranks_by_gpu_order = False  # titles state each worker's rank
    cap_fields: tuple[str, ...] = ()
    usage_metrics: tuple[str, ...] = ()
    capacity_metrics: tuple[str, ...] = ()

    # the protocol's members each engine states (declared here so the defaults below can read them)
    kv_storage: KvStorage

    def kv_storage_for(
        self, model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion
    ) -> KvStorage:
        """One storage for every release and backend."""
        return self.kv_storage

    def launch_refusals(self, ledger: Ledger) -> tuple[Refusal, ...]:
        """None modelled: a launch its budget sizes is one kvtop knows it starts."""
        return ()

    def kv_layers_of_stage(self, model: ModelSpec, layers: range, version: ResolvedVersion) -> range:
        """Its own layers: a stage sizes KV for the layers it holds."""
        return layers

    def rank_of_device(self, settings: LaunchSettings, position: int) -> dict[str, int] | None:
        """Its workers' titles name their ranks (or `ranks_by_gpu_order` ranks them)."""
        return None

    def uncapped(self, settings: LaunchSettings) -> LaunchSettings:
        return settings.model_copy(update=dict.fromkeys(self.cap_fields))
