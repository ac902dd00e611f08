"""vLLM's rules: flags, KV storage, the block budget and how it spreads over workers.

vLLM budgets a share of each GPU's *total* memory; each worker sizes its blocks from its own
memory and its own layers, and the engine takes the least block count (docs/engines/vllm.md §4).
"""

from __future__ import annotations

from kvtop.domain.engine_log import EngineLog
from kvtop.domain.engines.base import EngineDiagnosis, EngineExplainer, EngineResult, EngineRules
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.budget import VllmBudget, default_page_size
from kvtop.domain.engines.vllm.eras import resolve_version
from kvtop.domain.engines.vllm.flags import VllmFlags
from kvtop.domain.kv import KvStorage
from kvtop.domain.launch import EngineFlags, LaunchSettings
from kvtop.domain.layout import PpRemainder
from kvtop.domain.model import ModelSpec


class VllmRules(VllmBudget):
    id = "vllm"
    display_name = "vLLM"
    kv_storage = KvStorage(fp4_scales_per_head=True)  # §3: nvfp4_full(h) = h//2 + h//16 per head
    pp_remainder: PpRemainder = "second_to_last"
    sizes_every_rank_from_least_free = False
    pools_draft_kv = False
    dcp_splits_kv_heads = False  # §3: KV heads over tp, DCP or not
    context_holds_driver_reserved = False
    memory_fraction_field = "gpu_memory_utilization"
    memory_fraction_flag = "--gpu-memory-utilization"
    memory_fraction_of = (  # what the share is of
        "total GPU memory; weights, activations, CUDA graphs and KV share it"
    )

    @property
    def diagnosis(self) -> EngineDiagnosis:
        """How it prices causes and spells fixes (imported on first use: `plan` never needs it)."""
        from kvtop.domain.engines.vllm import diagnosis

        return diagnosis  # a module satisfies the protocol

    @property
    def explainer(self) -> EngineExplainer:
        """How it rebuilds a logged capacity (imported on first use)."""
        from kvtop.domain.engines.vllm import explain

        return explain

    def kv_storage_for(
        self, model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion
    ) -> KvStorage:
        return self.kv_storage  # one storage for every release

    def default_page_size(self, model: ModelSpec, gpu_name: str | None, version: ResolvedVersion) -> int:
        return default_page_size(model)

    def resolve_version(self, log: EngineLog) -> ResolvedVersion:
        return resolve_version(log)

    def at_shared_capacity(self, settings: LaunchSettings, tightest: EngineResult) -> LaunchSettings:
        """§4: every worker takes the least block count over the workers."""
        return settings.model_copy(update={"num_gpu_blocks_override": tightest.num_blocks})


RULES: EngineRules = VllmRules()  # mypy checks the package against the protocols
FLAGS: EngineFlags = VllmFlags()
