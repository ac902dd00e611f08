"""An engine's rule modules that most commands never need, imported on first use, and `EngineBase`: the
defaults a package's rules class inherits.

Every engine package holds the same eight (`diagnosis`, `explain`, `span`, `calibration`, `deployment`,
`log_lines`, `demo`, `architectures`), each a module that satisfies its protocol; `plan` never imports
diagnosis, explain, its log reader or its demo behaviour.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, cast

from kvtop.domain.engines.catalogue import engine_module
from kvtop.domain.engines.measured_reads import MeasuredField, measured_not_read
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.kv import KvStorage, PoolName, refuse_uncounted_pools
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.layout import MlpSplit, ParallelLayout, PpRemainder, StageParts, VocabSplit, guarded_parts
from kvtop.domain.model import ModelSpec

if TYPE_CHECKING:
    from kvtop.domain.calibration.inputs import EngineCalibration
    from kvtop.domain.config_override import ConfigOverride
    from kvtop.domain.deployment import BudgetTerm, DeploymentRules
    from kvtop.domain.engine_architectures import EngineArchitectures
    from kvtop.domain.engine_log import EngineLog
    from kvtop.domain.engine_simulation import EngineSimulation
    from kvtop.domain.engines.base import EngineInputs, EngineResult
    from kvtop.domain.engines.protocols import EngineDiagnosis, EngineExplainer
    from kvtop.domain.ledger_values import Ledger
    from kvtop.domain.log_dialect import LogDialect
    from kvtop.domain.refusals import Refusal
    from kvtop.domain.span import EngineSpanRule
    from kvtop.domain.weights import WeightRow


class EngineModules:
    """`kvtop.domain.engines.<id>.<module>` for each rule module, imported when first asked for."""

    id: str

    def _module(self, name: str) -> ModuleType:
        return engine_module(self.id, name)

    @property
    def diagnosis(self) -> EngineDiagnosis:
        """How it prices causes and spells fixes."""
        return cast("EngineDiagnosis", self._module("diagnosis"))

    @property
    def explainer(self) -> EngineExplainer:
        """How it rebuilds a logged capacity."""
        return cast("EngineExplainer", self._module("explain"))

    @property
    def span_rule(self) -> EngineSpanRule:
        """How it spreads over nodes and pairs prefill with decode."""
        return cast("EngineSpanRule", self._module("span"))

    @property
    def calibration(self) -> EngineCalibration:
        """Its fitted pre-load terms (docs/calibration.md)."""
        return cast("EngineCalibration", self._module("calibration"))

    @property
    def deployment(self) -> DeploymentRules:
        """Its deployment beside the model: drafts, experts, LoRA, host KV."""
        return cast("DeploymentRules", self._module("deployment"))

    @property
    def log_dialect(self) -> LogDialect:
        """What its startup log looks like (its `log_lines` module's `DIALECT`)."""
        dialect: LogDialect = self._module("log_lines").DIALECT
        return dialect

    @property
    def simulation(self) -> EngineSimulation:
        """How it behaves on a demo node (its `demo` module)."""
        return cast("EngineSimulation", self._module("demo"))

    @property
    def architectures(self) -> EngineArchitectures:
        """Which model classes it registers, by release (a launch of another is refused)."""
        return cast("EngineArchitectures", self._module("architectures"))


class EngineBase(EngineModules):
    """What most engines share, so a package's rules class states only what differs from it.

    Each engine still states its id, names, storage, calendar, memory share, identity, cap fields and
    metric names (the conformance test asks every engine for them), and how it resolves its version,
    solves its budget, sizes a page and holds its pipeline stages at one capacity."""

    pp_remainder: PpRemainder = "last"  # remainder layers go to the last stages
    sizes_every_rank_from_least_free = True  # a MIN over the ranks' free memory sizes every rank
    logged_weights_stage: int | None = None  # the log's weights figure is the largest rank's (every stage's)
    pools_draft_kv = False  # a speculative draft's KV is not the target's token count
    dcp_splits_kv_heads = False  # KV heads divide over tp, DCP or not
    experts_over_replicas = False  # without EP, each DP replica splits the experts over its own TP group
    ranks_by_gpu_order = False  # titles state each worker's rank
    cap_fields: tuple[str, ...] = ()
    usage_metrics: tuple[str, ...] = ()
    capacity_metrics: tuple[str, ...] = ()
    weight_row_words: Mapping[str, str] = {}  # no rows of its own beside the book's (`weights_built`)
    # the measured figures its budget rule does not read, each with what the rule sizes from instead and its source
    # (`measured_reads`): a plan given one names it. Empty: it reads every one
    measured_not_read: Mapping[MeasuredField, str] = {}

    def metrics_tokens(self, name: str, labels: Mapping[str, str], value: float) -> int | None:
        """The KV tokens per rank one of its `capacity_metrics` series states: its value (SGLang's
        `max_total_num_tokens`); None for a series that is no capacity or no whole number."""
        if name not in self.capacity_metrics or not 0 <= value < 2**63 or value != int(value):
            return None
        return int(value)

    # the pools its budget counts (or refuses with a reason of its own); a book holding another is refused by name
    # before the budget runs (`solve`), never sized without it: per-request pools have 0 B a token, so no sum notices
    budget_pools: frozenset[PoolName] = frozenset({"full", "swa", "dsa_index", "state"})

    # the protocol's members each engine states (declared here so the defaults below can read them)
    kv_storage: KvStorage
    display_name: str
    memory_fraction_of: str

    def solve(self, inputs: EngineInputs) -> EngineResult:
        """Its budget (`solve_budget`), after every pool of the book is one it counts (`refuse_uncounted_pools`)."""
        refuse_uncounted_pools(inputs.kv, self.budget_pools, self.display_name, inputs.model.source)
        result = self.solve_budget(inputs)
        declared = self.measured_not_read_at(inputs.settings, inputs.version)
        unread = measured_not_read(inputs.measured, declared, self.display_name)
        if not unread:
            return result
        notes = (*result.notes, *(u.said for u in unread if u.said not in result.notes))
        return result.model_copy(update={"inputs_not_read": unread, "notes": notes})

    def measured_not_read_at(
        self, settings: LaunchSettings, version: ResolvedVersion
    ) -> Mapping[MeasuredField, str]:
        """What its rule leaves unread at this launch's release: the one declaration for every release."""
        return self.measured_not_read

    def memory_fraction_of_at(self, settings: LaunchSettings, version: ResolvedVersion) -> str:
        """What its share is of at this launch's release: the same words at every release."""
        return self.memory_fraction_of

    def solve_budget(self, inputs: EngineInputs) -> EngineResult:
        """The engine's own budget of one rank set (each package's budget module states it)."""
        raise NotImplementedError

    def kv_storage_for(
        self, model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion
    ) -> KvStorage:
        """One storage for every release and backend."""
        return self.kv_storage

    def start_needs_bytes(self, total_bytes: int, fraction: float) -> int | None:
        """None: its start asks no share of the total free (it sizes from the free memory it finds)."""
        return None

    def reads_available_memory(self, version: ResolvedVersion) -> bool:
        """False: cudaMemGetInfo's free, with no integrated case (the page cache counts as held): TensorRT-LLM's and
        LMDeploy's as read (calibration/host_memory.py, docs/engines/lmdeploy.md §2.2, §4); llama.cpp's not read."""
        return False

    def fraction_that_starts(self, total_bytes: int, free_bytes: int) -> float | None:
        """None: its start asks no share of the total free (it sizes from the free memory it finds)."""
        return None

    def launch_refusals(self, ledger: Ledger) -> tuple[Refusal, ...]:
        """None modelled: a launch its budget sizes is one kvtop knows it starts."""
        return ()

    def pp_remainder_at(self, version: ResolvedVersion) -> PpRemainder:
        """Where this release's split puts the remainder layers: `pp_remainder` at every release."""
        return self.pp_remainder

    def mtp_after_pool(self, version: ResolvedVersion) -> bool:
        """An MTP draft's layers are in the weights the pool is sized after, at every release."""
        return False

    def need_reserve_terms(self, settings: LaunchSettings, version: ResolvedVersion) -> Sequence[BudgetTerm]:
        """No reserve of its own rule for a feature inside the reserve it needs."""
        return ()

    def kv_layers_of_stage(self, model: ModelSpec, layers: range, version: ResolvedVersion) -> Sequence[int]:
        """Its own layers: a stage sizes KV for the layers it holds."""
        return layers

    def stage_parts(self, model: ModelSpec, pp_rank: int, pp: int, version: ResolvedVersion) -> StageParts:
        """Guarded: the embedding on the first stage, the final norm and LM head on the last."""
        return guarded_parts(pp_rank, pp)

    def expert_parallel_unread(self, model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> str | None:
        """Read: an engine that takes an expert-parallel size reads it (what it does with it is its rules')."""
        return None

    def mlp_split(self, model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> MlpSplit:
        """The dense MLP and the shared experts over TP, EP or not (EP divides the routed experts alone)."""
        return MlpSplit()

    def vocab_split(self, model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> VocabSplit:
        """Both vocab-parallel over TP (every class's VocabParallelEmbedding / ParallelLMHead)."""
        return VocabSplit()

    def version_with_model(
        self, log: EngineLog, model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion
    ) -> ResolvedVersion:
        """As the log's lines read it: the model narrows nothing."""
        return version

    def world_ranks(self, model: ModelSpec | None, settings: LaunchSettings, version: ResolvedVersion) -> int | None:
        """None: its ranks are tp × dp replicas as the flags say (DP attention, where asked, inside TP)."""
        return None

    def weights_built(
        self, model: ModelSpec, layout: ParallelLayout, layers: range, gpu_name: str | None, version: ResolvedVersion,
        quantization: str | None = None,
    ) -> tuple[WeightRow, ...]:
        """None: its model classes build what the weights book counts."""
        return ()

    def weights_released(
        self, model: ModelSpec, layout: ParallelLayout, layers: range, gpu_name: str | None, version: ResolvedVersion,
        quantization: str | None = None,
    ) -> tuple[WeightRow, ...]:
        """None: its model classes free nothing they built beyond the book."""
        return ()

    def config_override(self, settings: LaunchSettings, version: ResolvedVersion) -> ConfigOverride | None:
        """None: no flag of its launch rewrites the model's config (SGLang's --json-model-override-args does)."""
        return None

    def check_config(self, model: ModelSpec, version: ResolvedVersion) -> None:
        """Nothing it refuses from the config alone."""

    def context_length(self, model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> int:
        """The launch's context length, else the config's positions (vLLM's max_model_len default)."""
        return settings.context_length or model.max_position_embeddings

    def rank_of_device(self, settings: LaunchSettings, position: int) -> dict[str, int] | None:
        """Its workers' titles name their ranks (or `ranks_by_gpu_order` ranks them)."""
        return None

    def uncapped(self, settings: LaunchSettings) -> LaunchSettings:
        return settings.model_copy(update=dict.fromkeys(self.cap_fields))
