"""The protocols every engine package implements: its rules (`EngineRules`), how it prices a cause and
spells a fix (`EngineDiagnosis`) and how it reads its startup log back into numbers (`EngineExplainer`).

They name the values they take from the modules below them (launch, ledger, findings, explanation…); only
what looks an engine up by id (`registry`, `modules`) and the engine packages themselves name them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from kvtop.domain.deployment import BudgetTerm, DeploymentRules
from kvtop.domain.engines.base import EngineInputs, EngineResult
from kvtop.domain.engines.measured_reads import MeasuredField
from kvtop.domain.engines.versions import ReleaseDate, ResolvedVersion
from kvtop.domain.kv import KvStorage, PoolName
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.layout import MlpSplit, ParallelLayout, PpRemainder, StageParts, VocabSplit
from kvtop.domain.model import ModelSpec

if TYPE_CHECKING:
    from kvtop.domain.calibration.inputs import EngineCalibration
    from kvtop.domain.config_override import ConfigOverride
    from kvtop.domain.diagnose_findings import LayoutOptions, LedgerRule
    from kvtop.domain.engine_architectures import EngineArchitectures
    from kvtop.domain.engine_log import EngineLog
    from kvtop.domain.engine_simulation import EngineSimulation
    from kvtop.domain.explain_request import ExplainRequest
    from kvtop.domain.explanation import Explanation, Logged, PoolSizeCheck
    from kvtop.domain.ledger_values import Ledger, WhatIf
    from kvtop.domain.log_dialect import LogDialect
    from kvtop.domain.refusals import Refusal
    from kvtop.domain.span import EngineSpanRule
    from kvtop.domain.weights import WeightRow


class EngineDiagnosis(Protocol):
    """How an engine prices a cause and spells its fixes (each package's `diagnosis` module; what it prices
    on a live node, its reserve and a restart, is `kvtop.domain.diagnose_engine.EngineNodeDiagnosis`)."""

    ledger_rules: Sequence[LedgerRule]  # the engine's own rules over a plan alone

    def restart_capacity(self, replay: WhatIf, free: Mapping[int, int]) -> int:
        """Tokens per rank a restart gets with `free` bytes free on each GPU (by GPU index)."""
        ...

    def restart_ledger(self, replay: WhatIf, free: Mapping[int, int], settings: LaunchSettings) -> Ledger | None:
        """The ledger a restart with `settings` solves with `free` bytes free on each GPU (by GPU index);
        None where the engine would refuse to start (vLLM: less free than its share asks)."""
        ...

    def spread_evidence(self, ledger: Ledger, tokens: int, ranks: str) -> str:
        """One line saying how a loss on one GPU spreads over the engine's ranks (`ranks`: '8 ranks', or '16 ranks (8
        on this node)' where its world spans nodes)."""
        ...

    def fp8_kv_dtype(self, ledger: Ledger) -> str: ...

    def layout_alternatives(self, ledger: Ledger, attn_tp: int) -> LayoutOptions:
        """Layouts over the same GPUs whose attention TP is `attn_tp` (fewer KV copies), or why the release runs none."""
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


class EngineExplainer(Protocol):
    """How an engine's startup log is read back into numbers (each package's `explain` module)."""

    def missing_facts(self, log: EngineLog) -> tuple[str, ...]:
        """Headline facts of this engine's startup log that `log` does not state."""
        ...

    def logged_token_capacity(self, log: EngineLog) -> int | None: ...

    def logged_figures(self, log: EngineLog, settings: LaunchSettings, version: ResolvedVersion | None = None) -> Logged:
        """What the log states, read without a model (a model kvtop does not model still gets its log read), by
        the rules of the release `settings` name; `version` says how that release was found (a log's own reading
        of it is an assumption where it is approximate), default: as `settings` name it."""
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
    budget_pools: frozenset[PoolName]  # the pools `solve` counts; a book with another is refused by name
    pp_remainder: PpRemainder
    # The least free GPU sizes every rank (SGLang's MIN all-reduce over the world) — else each
    # worker is sized from its own memory and the engine takes the least block count (vLLM).
    sizes_every_rank_from_least_free: bool
    # The pipeline stage whose weights the log's load line prints (vLLM: rank 0's line alone, stage 0); None: the
    # figure is every stage's (the largest rank's). Every reader of a log's weights sets `MeasuredInputs.weights_stage`
    # from it.
    logged_weights_stage: int | None
    pools_draft_kv: bool  # speculative draft layers' KV shares the target's token count
    dcp_splits_kv_heads: bool  # KV heads divide over tp ÷ dcp (else over tp, DCP or not)
    experts_over_replicas: bool  # without EP, routed experts split over tp × dp replicas (else over tp)
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
    # the rows its rules add to the weights book (`weights_built`), key → words: what a view shows for each key
    weight_row_words: Mapping[str, str]
    # the measured figures its budget rule does not read, each with why and its source (`measured_reads`)
    measured_not_read: Mapping[MeasuredField, str]

    def measured_not_read_at(
        self, settings: LaunchSettings, version: ResolvedVersion
    ) -> Mapping[MeasuredField, str]:
        """The measured figures its rule leaves unread at this launch's release (a release's rule may read more)."""
        ...

    def memory_fraction_of_at(self, settings: LaunchSettings, version: ResolvedVersion) -> str:
        """What its share is a share of at this launch's release, in words (`memory_fraction_of` unless it differs)."""
        ...

    def config_override(self, settings: LaunchSettings, version: ResolvedVersion) -> ConfigOverride | None:
        """The launch's override of the model's config, merged in before the config is read; None: none."""
        ...

    def metrics_tokens(self, name: str, labels: Mapping[str, str], value: float) -> int | None:
        """The KV tokens per rank a series of its `capacity_metrics` states (from its value or its labels)."""
        ...

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

    def pp_remainder_at(self, version: ResolvedVersion) -> PpRemainder:
        """Where this release's pipeline split puts the layers that do not divide (`pp_remainder`: the newest's)."""
        ...

    def mtp_after_pool(self, version: ResolvedVersion) -> bool:
        """Whether an MTP draft's layers load after the target's KV pool is sized at `version` (an after-pool
        term, kept out of the weights the budget subtracts)."""
        ...

    def need_reserve_terms(self, settings: LaunchSettings, version: ResolvedVersion) -> Sequence[BudgetTerm]:
        """The reserve terms held inside `EngineResult.reserve_needed_bytes` (what the engine's own rule would keep
        where a given share replaces it: SGLang's draft share of its automatic fraction), each the reserve its
        feature's after-pool terms count against in the headroom; none where the rule keeps none."""
        ...

    def kv_layers_of_stage(self, model: ModelSpec, layers: range, version: ResolvedVersion) -> Sequence[int]:
        """The layers a pipeline stage sizes its KV pools for, given the layers it holds."""
        ...

    def stage_parts(self, model: ModelSpec, pp_rank: int, pp: int, version: ResolvedVersion) -> StageParts:
        """Which of the embedding, final norm and LM head this release's class of `model` builds on a stage."""
        ...

    def check_config(self, model: ModelSpec, version: ResolvedVersion) -> None:
        """Raise where this release cannot read the config itself (its config class), before any book is built:
        the engine fails there first, whatever kvtop could or could not read of the weights."""
        ...

    def expert_parallel_without_experts(self, model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> str:
        """What this release does with an expert-parallel launch (`settings.effective_ep` > 1) of a model without
        routed experts: the note a plan run as EP 1 carries where the engine starts it and EP holds no memory;
        LayoutError, in the engine's words, where it refuses to start, or naming what kvtop does not model."""
        ...

    def expert_parallel_unread(self, model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> str | None:
        """The plan's one note where this release (or the backend the model runs on) does not read the launch's
        expert-parallel size at all, so the plan is EP off, experts or not; None where it reads it."""
        ...

    def context_length(self, model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> int:
        """The context length this launch runs with, as the engine decides it: the one figure the request cap,
        the request slots and every full-context figure read."""
        ...

    def mlp_split(self, model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> MlpSplit:
        """Over how many ranks this release splits the dense MLP and the shared experts where not over TP (an EP
        whose MLP TP group is not TP: TurboMind's); `MlpSplit()` where both split over TP. The layout carries it to
        the weights book (`ParallelLayout.mlp_split`), beside how EP divides the routed experts."""
        ...

    def vocab_split(self, model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> VocabSplit:
        """Over which group (`SplitGroup`: whole, attention TP, TP) this release's class splits the embedding and the
        LM head (LMDeploy's PyTorch engine, SGLang's DP-attention classes); `VocabSplit()` where both split over
        TP. The layout carries it to the weights book."""
        ...

    def world_ranks(self, model: ModelSpec | None, settings: LaunchSettings, version: ResolvedVersion) -> int | None:
        """The ranks of one pipeline stage where this release runs the launch's DP (or EP) ranks as one world other
        than tp × dp replicas: attention TP world ÷ dp, the MLP over tp (`ParallelLayout.world`); None where its
        ranks are tp × dp as the flags say. `model` None: from the launch alone (the placement checks before the
        model is read), None where only the model could tell."""
        ...

    def weights_built(
        self, model: ModelSpec, layout: ParallelLayout, layers: range, gpu_name: str | None, version: ResolvedVersion,
        quantization: str | None = None,
    ) -> tuple[WeightRow, ...]:
        """Rows of parameters this release's model class builds on a rank of the stage holding `layers` beyond
        the checkpoint's tensors the weights book counts (scale copies, experts held whole) and still holds after
        the load; empty for none. `quantization`: the launch's quantization flag as typed (LaunchSettings), where
        what the class builds turns on it (SGLang's NVFP4 MoE runner)."""
        ...

    def weights_released(
        self, model: ModelSpec, layout: ParallelLayout, layers: range, gpu_name: str | None, version: ResolvedVersion,
        quantization: str | None = None,
    ) -> tuple[WeightRow, ...]:
        """Rows of parameters the class builds beyond the book and the load frees again (placeholders aliased away):
        in the classes as built, never resident, so in no plan; empty for none."""
        ...

    def resolve_version(self, log: EngineLog) -> ResolvedVersion:
        """The release whose rules read `log`, and the evidence (a version line, its lines, its dates)."""
        ...

    def version_with_model(
        self, log: EngineLog, model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion
    ) -> ResolvedVersion:
        """`version` (what `resolve_version` read off the log) as the model narrows it where the log's own lines
        leave releases of different rules (LMDeploy: its printed block at each era's block length); else itself."""
        ...

    def solve(self, inputs: EngineInputs) -> EngineResult: ...

    def at_shared_capacity(self, settings: LaunchSettings, tightest: EngineResult) -> LaunchSettings:
        """Settings that hold every pipeline stage at the tightest stage's capacity."""
        ...

    def start_needs_bytes(self, total_bytes: int, fraction: float) -> int | None:
        """What an engine that asks a share of the total free at its start (vLLM) asks free of `total_bytes` at
        `fraction`; None for one that sizes from the free memory it finds (`fraction_that_starts` is its inverse)."""
        ...

    def reads_available_memory(self, version: ResolvedVersion) -> bool:
        """Whether this release reads a unified-memory device's free memory as the kernel's available memory
        (psutil: the page cache it can reclaim counts as free), not cudaMemGetInfo's free (the page cache held)."""
        ...

    def fraction_that_starts(self, total_bytes: int, free_bytes: int) -> float | None:
        """The largest memory share, as its flag takes it, whose start check `free_bytes` free of `total_bytes`
        passes, for an engine that asks a share of the total free at its start (vLLM); None for one that sizes
        from the free memory it finds."""
        ...

    def launch_refusals(self, ledger: Ledger) -> tuple[Refusal, ...]:
        """What this engine, at the ledger's release, refuses to start although kvtop sizes it
        (`kvtop.domain.refusals`); empty where it refuses nothing kvtop knows of."""
        ...
