"""vLLM's rules: flags, KV storage, the block budget and how it spreads over workers.

vLLM budgets a share of each GPU's *total* memory; each worker sizes its blocks from its own
memory and its own layers, and the engine takes the least block count (docs/engines/vllm.md §4).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from kvtop.domain.engine_log import EngineLog
from kvtop.domain.engines.base import EngineResult
from kvtop.domain.engines.measured_reads import MeasuredField
from kvtop.domain.engines.modules import EngineBase
from kvtop.domain.engines.protocols import EngineRules
from kvtop.domain.engines.versions import PEP440_NAMES, ReleaseNames, ResolvedVersion
from kvtop.domain.engines.vllm.backends import block_size
from kvtop.domain.engines.vllm.budget import VllmBudget, start_request_bytes, starting_utilization
from kvtop.domain.engines.vllm.config_checks import check_config
from kvtop.domain.engines.vllm.extensible_kv import SOURCE as EXTENSIBLE_SOURCE
from kvtop.domain.engines.vllm.extensible_kv import extensible
from kvtop.domain.engines.vllm.flags import VllmFlags
from kvtop.domain.engines.vllm.kv_storage import KV_STORAGE, kv_storage_for
from kvtop.domain.engines.vllm.layer_build import with_layer_build
from kvtop.domain.engines.vllm.load_line import LOGGED_WEIGHTS_STAGE
from kvtop.domain.engines.vllm.mtp_build import with_mtp_build
from kvtop.domain.engines.vllm.pp_parts import stage_parts
from kvtop.domain.engines.vllm.pp_split import PP_SPLIT_ERAS
from kvtop.domain.engines.vllm.release_calendar import CALENDAR, resolve_version
from kvtop.domain.engines.vllm.weights_built import built_rows
from kvtop.domain.engines.vllm.weights_words import WEIGHT_ROW_WORDS
from kvtop.domain.kv import KvStorage
from kvtop.domain.launch import EngineFlags, LaunchSettings
from kvtop.domain.layout import MlpSplit, ParallelLayout, PpRemainder, StageParts
from kvtop.domain.model import ModelSpec
from kvtop.domain.weights import WeightRow

if TYPE_CHECKING:
    from kvtop.domain.ledger import Ledger
    from kvtop.domain.refusals import Refusal


class VllmRules(VllmBudget, EngineBase):
    id = "vllm"
    display_name = "vLLM"
    kv_storage = KV_STORAGE  # kv_storage.py
    pp_remainder: PpRemainder = "second_to_last"  # the newest release's split; by release: pp_remainder_at
    sizes_every_rank_from_least_free = False  # §4: each worker its own memory, then the least block count
    logged_weights_stage: int | None = LOGGED_WEIGHTS_STAGE  # `Model loading took` is stage 0's (load_line.py)
    # §2.3: without --enable-expert-parallel the fused MoE layer flattens TP across the DP replicas, so each expert is
    # split over tp × dp ranks (v0.13.0 / v0.33.0 fused_moe/config.py FusedMoEParallelConfig.make ->
    # flatten_tp_across_dp_and_pcp; before it FusedMoE.__init__ "Adjust TP size for DP attention": every release
    # with --data-parallel-size)
    experts_over_replicas = True
    context_holds_driver_reserved = False
    calendar = CALENDAR  # the releases kvtop models
    memory_fraction_field = "gpu_memory_utilization"
    memory_fraction_flag = "--gpu-memory-utilization"
    memory_fraction_of = (  # what the share is of
        "total GPU memory; weights, activations, CUDA graphs and KV share it"
    )
    title_prefix = "VLLM"  # `VLLM::Worker_TP1`: titles state each worker's rank
    default_port = 8000
    cap_fields: tuple[str, ...] = ("num_gpu_blocks_override",)  # --num-gpu-blocks-override: the block count, memory aside
    # §1–§2 (docs/engines/vllm.md; worker/gpu_worker.py determine_available_memory, v0.6–v0.33): the pool is
    # ceil(total × gpu_memory_utilization) less the weights and what its profile run measures (--weights-memory,
    # --non-kv-memory); the free memory at start only gates it (below the request, vLLM raises)
    measured_not_read: Mapping[MeasuredField, str] = {
        "free_before_load_bytes": "the pool is total × gpu_memory_utilization less the weights and what it profiles "
        "(docs/engines/vllm.md §2); the free memory only has to reach that request at start",
        "free_after_load_bytes": "the pool is total × gpu_memory_utilization less the weights and what it profiles, "
        "not the free memory (--weights-memory and --non-kv-memory are what it reads; docs/engines/vllm.md §2)",
    }
    # §0.34.0: the extensible KV cache sizes from the free memory at the worker's start (extensible_kv.py), so there
    # the free memory before load is read; the free memory after load still is not (the resident bytes are)
    measured_not_read_extensible: Mapping[MeasuredField, str] = {
        "free_after_load_bytes": "the extensible KV cache is the free memory at the worker's start less all that stays "
        "resident, the transient peak and a margin (--weights-memory and --non-kv-memory are what it reads, not the "
        "free memory after load; docs/engines/vllm.md §0.34.0, " + EXTENSIBLE_SOURCE + ")",
    }
    memory_fraction_of_extensible = (  # what the share is of where the extensible cache sizes (extensible_kv.py)
        "total GPU memory, yet under the extensible KV cache (v0.34.0) the free memory at the worker's start binds "
        "first at 1.0: the cache is that less all that stays resident, the transient peak and a margin of "
        "max(1 GiB, 0.75 × the peak)"
    )
    usage_metrics: tuple[str, ...] = ("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc")  # the second before v0.10
    # §7: an info gauge (value 1) whose labels are every CacheConfig field, per engine core (`engine`)
    capacity_metrics: tuple[str, ...] = ("vllm:cache_config_info",)
    weight_row_words = WEIGHT_ROW_WORDS  # the rows its rules add to the weights book, in words

    def metrics_tokens(self, name: str, labels: Mapping[str, str], value: float) -> int | None:
        """§7: `cache_config_info`'s `kv_cache_size_tokens` (PR #42206, 2026-06-12: the startup log's "GPU KV
        cache size"), else `num_gpu_blocks` × `block_size` (every release since the gauge came, PR #3100,
        2024-02): the pool's token slots, which V0 and V1 before PR #41069 (2026-04-28) log as the capacity of
        a model of one KV group. None before the profile fills `num_gpu_blocks` ("None")."""
        if name not in self.capacity_metrics:
            return None
        stated = _whole(labels.get("kv_cache_size_tokens"))
        if stated is not None:
            return stated
        blocks, size = _whole(labels.get("num_gpu_blocks")), _whole(labels.get("block_size"))
        return blocks * size if blocks is not None and size else None

    def measured_not_read_at(
        self, settings: LaunchSettings, version: ResolvedVersion
    ) -> Mapping[MeasuredField, str]:
        """§0.34.0: under the extensible KV cache the free memory at start is the headroom it sizes from (read);
        otherwise (earlier releases, or the cache off) the profiling rule reads neither free figure."""
        return self.measured_not_read_extensible if extensible(settings, version) else self.measured_not_read

    def memory_fraction_of_at(self, settings: LaunchSettings, version: ResolvedVersion) -> str:
        """§0.34.0: under the extensible KV cache the share asks ceil(total × utilization), 1.0 unstated, so the
        headroom (free at start − resident − margin) is what binds unless a smaller share is stated."""
        return self.memory_fraction_of_extensible if extensible(settings, version) else self.memory_fraction_of

    def kv_storage_for(
        self, model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion
    ) -> KvStorage:
        """The launch's KV storage (kv_storage.py, which the attention pick reads too)."""
        return kv_storage_for(model, settings, version)

    def default_page_size(self, model: ModelSpec, gpu_name: str | None, version: ResolvedVersion) -> int:
        """§3.1: the block of the backend vLLM runs with `--kv-cache-dtype auto` (an FP8 KV may differ)."""
        return block_size(model, False, gpu_name, version)[0]

    def context_length(self, model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> int:
        """§3.7: the launch's --max-model-len, else the length `_get_and_verify_max_len` derives: the config's
        positions, scaled by a rope the launch gives (rope_override.py)."""
        from kvtop.domain.engines.vllm.rope_override import max_model_len

        return max_model_len(model, settings, version)

    def expert_parallel_without_experts(self, model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> str:
        """--enable-expert-parallel without experts: refused at start (dense_ep.py)."""
        from kvtop.domain.engines.vllm.dense_ep import expert_parallel_without_experts

        return expert_parallel_without_experts(settings, version)

    def check_config(self, model: ModelSpec, version: ResolvedVersion) -> None:
        """§3.6: the configs vLLM refuses as it reads them (config_checks.py), before the books."""
        check_config(model, version)

    def pp_remainder_at(self, version: ResolvedVersion) -> PpRemainder:
        """get_pp_indices by release: the whole remainder on the last stage before v0.8.0 (pp_split.py)."""
        return PP_SPLIT_ERAS.at(version)

    def stage_parts(self, model: ModelSpec, pp_rank: int, pp: int, version: ResolvedVersion) -> StageParts:
        """The classes that build their embedding, final norm or LM head on every stage (pp_parts.py), what
        they build on each layer beside the checkpoint's tensors (layer_build.py), Kimi-K3's bf16 latent
        projections (kimi_k3.py), and Qwen3-Next/3.5's MTP fc (mtp_build.py)."""
        from kvtop.domain.engines.vllm.kimi_k3 import with_kimi_k3_build

        built = with_layer_build(stage_parts(model, pp_rank, pp, version), model, version)
        return with_mtp_build(with_kimi_k3_build(built, model, version), model, version)

    def mlp_split(self, model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> MlpSplit:
        """The dense MLP over TP, but whole on every rank where the Transformers backend replicates it
        (transformers_backend.py); EP divides the routed experts alone."""
        from kvtop.domain.engines.vllm.transformers_backend import replicated_mlp_split

        return replicated_mlp_split(model, version)

    def weights_built(
        self, model: ModelSpec, layout: ParallelLayout, layers: range, gpu_name: str | None, version: ResolvedVersion,
        quantization: str | None = None,
    ) -> tuple[WeightRow, ...]:
        """§20: MXFP4 experts padded at create_weights (weights_built.py); §3.8: attention biases a class builds
        whatever the config says, and q/k LayerNorm biases (attention_biases.py)."""
        from kvtop.domain.engines.vllm.attention_biases import attention_bias_rows, qk_norm_bias_rows

        return (built_rows(model, layout, layers, gpu_name, version, quantization)
                + attention_bias_rows(model, layout, layers)
                + qk_norm_bias_rows(model, layers))  # fmt: skip

    def resolve_version(self, log: EngineLog) -> ResolvedVersion:
        return resolve_version(log)

    def start_needs_bytes(self, total_bytes: int, fraction: float) -> int | None:
        """§2.2: it asks ceil(total × --gpu-memory-utilization) free at its start."""
        return start_request_bytes(total_bytes, fraction)

    def reads_available_memory(self, version: ResolvedVersion) -> bool:
        """From v0.11.1 the kernel's available memory on a unified device (unified_free.py)."""
        from kvtop.domain.engines.vllm.unified_free import reads_available_memory

        return reads_available_memory(version)

    def fraction_that_starts(self, total_bytes: int, free_bytes: int) -> float | None:
        """§2.2: it asks ceil(total × --gpu-memory-utilization) free at its start; the largest, in hundredths, that
        `free_bytes` holds."""
        return starting_utilization(total_bytes, free_bytes)

    def launch_refusals(self, ledger: Ledger) -> tuple[Refusal, ...]:
        """The launches it refuses at start although kvtop sizes them (refusals.py)."""
        from kvtop.domain.engines.vllm import refusals

        return refusals.launch_refusals(ledger)

    def at_shared_capacity(self, settings: LaunchSettings, tightest: EngineResult) -> LaunchSettings:
        """§4: every worker takes the least block count over the workers."""
        return settings.model_copy(update={"num_gpu_blocks_override": tightest.num_blocks})


RULES: EngineRules = VllmRules()  # mypy checks the package against the protocols
FLAGS: EngineFlags = VllmFlags()
RELEASE_NAMES: ReleaseNames = PEP440_NAMES  # what --engine-version takes: PEP 440 releases


def _whole(text: str | None) -> int | None:
    """A label's whole number ("34470"); None for "None", empty or anything else."""
    return int(text) if text and text.isdigit() and len(text) <= 12 else None
