"""TensorRT-LLM's rules: flags, KV storage, the profiled budget and how it spreads over ranks.

TensorRT-LLM budgets a fraction of the memory free at its profiled peak (PyTorch backend) or free
once the engine is resident (TensorRT engines), not of total memory, and MIN-reduces the token count
over every rank: one busy GPU shrinks every rank (docs/engines/trtllm.md §3–§5).
"""

from __future__ import annotations

from collections.abc import Mapping

from kvtop.domain.engine_log import EngineLog
from kvtop.domain.engines.base import EngineResult
from kvtop.domain.engines.measured_reads import MeasuredField
from kvtop.domain.engines.modules import EngineBase
from kvtop.domain.engines.protocols import EngineRules
from kvtop.domain.engines.trtllm.budget import TrtllmBudget, runtime, tokens_per_block
from kvtop.domain.engines.trtllm.eras import CALENDAR, PP_REMAINDER, resolve_version
from kvtop.domain.engines.trtllm.flags import TrtllmFlags
from kvtop.domain.engines.trtllm.kv_storage import TRTLLM_KV_STORAGE
from kvtop.domain.engines.trtllm.max_seq_len import pytorch_max_seq_len
from kvtop.domain.engines.versions import PEP440_NAMES, ReleaseNames, ResolvedVersion
from kvtop.domain.launch import EngineFlags, LaunchSettings
from kvtop.domain.layout import PpRemainder
from kvtop.domain.model import ModelSpec


class TrtllmRules(TrtllmBudget, EngineBase):
    id = "trtllm"
    display_name = "TensorRT-LLM"
    kv_storage = TRTLLM_KV_STORAGE  # kv_storage.py: checkpoint FP8 KV honoured, KV heads rounded up per rank
    pp_remainder: PpRemainder = PP_REMAINDER  # Mapping.pp_layers: torch.tensor_split, the first stages get one more
    # §5: max_tokens is MIN-reduced over every rank; a draft's KV is its own pool, added to the estimator
    # cost (§1.1), not modelled
    context_holds_driver_reserved = True
    calendar = CALENDAR  # the releases kvtop models
    memory_fraction_field = "free_gpu_memory_fraction"
    memory_fraction_flag = "--kv_cache_free_gpu_memory_fraction"
    memory_fraction_of = (  # what the share is of
        "the memory free at its profiled peak (after weights, activations, CUDA graphs); all of it is KV"
    )
    # No TensorRT-LLM release names its processes: trtllm-serve runs its ranks as MPI workers
    # (`python3 -m mpi4py.futures.server`), ranked by `rank_of_device`; this prefix names nothing it runs.
    title_prefix = "trtllm"
    default_port = 8000  # trtllm-serve --port
    cap_fields: tuple[str, ...] = ("kv_cache_max_tokens",)  # kv_cache_config.max_tokens: min(it, the fraction's tokens) (§3)
    usage_metrics: tuple[str, ...] = ("trtllm_kv_cache_utilization",)  # /prometheus/metrics (return_perf_metrics)
    # llmapi/llm_args.py TorchCompileConfig (torch_compile_config None by default; enable_inductor False); PyExecutor's
    # constructor runs model_engine.warmup (_run_torch_compile_warmup) before configure_kv_cache_capacity's baseline
    measured_not_read: Mapping[MeasuredField, str] = {
        "compile_cache": "the PyTorch backend compiles only under torch_compile_config (off by default; Inductor, "
        "whose kernels the cache keeps, only with its enable_inductor), in the warm-up before the profile's baseline, "
        "and the TensorRT backend runs no torch.compile: no warm or cold difference is modelled "
        "(docs/engines/trtllm.md §3)",
    }

    def default_page_size(self, model: ModelSpec, gpu_name: str | None, version: ResolvedVersion) -> int:
        return tokens_per_block(LaunchSettings(engine="trtllm"), version)

    def context_length(self, model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> int:
        """§33: the PyTorch backend's `_init_max_seq_len` (max_seq_len.py); a TensorRT engine's as the launch states
        it, else the config's positions (`EngineBase`'s; trtllm-build's own deduction not read)."""
        if runtime(settings, version) == "pytorch":
            return pytorch_max_seq_len(model, settings, version)
        return super().context_length(model, settings, version)

    def resolve_version(self, log: EngineLog) -> ResolvedVersion:
        return resolve_version(log)

    def at_shared_capacity(self, settings: LaunchSettings, tightest: EngineResult) -> LaunchSettings:
        """§5: every pipeline stage takes the MIN-reduced max_tokens."""
        return settings.model_copy(update={"kv_cache_max_tokens": tightest.token_capacity})

    def expert_parallel_without_experts(self, model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> str:
        """--ep_size without experts: the Mapping's rank lists only, read by no layer (dense_ep.py)."""
        from kvtop.domain.engines.trtllm.dense_ep import expert_parallel_without_experts

        return expert_parallel_without_experts(settings, version)

    def rank_of_device(self, settings: LaunchSettings, position: int) -> dict[str, int]:
        """A worker's rank from its GPU's place among the GPUs it sees (each binds `rank % gpus_per_node`):
        TensorRT-LLM's Mapping puts the TP ranks innermost (rank = pp_rank × tp + tp_rank); under attention
        DP each rank is its own DP rank."""
        tp = max(settings.tp, 1)
        parts = {"tp": position % tp, "pp": position // tp}
        if settings.enable_dp_attention:
            parts["dp"] = position % tp
        return parts


RULES: EngineRules = TrtllmRules()  # mypy checks the package against the protocols
FLAGS: EngineFlags = TrtllmFlags()
RELEASE_NAMES: ReleaseNames = PEP440_NAMES  # what --engine-version takes: PEP 440 releases
