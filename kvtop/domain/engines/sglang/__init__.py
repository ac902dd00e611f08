"""SGLang's rules: flags, KV storage, the budget solve and how it spreads over ranks.

Every rank is sized from the least free GPU of the whole world (a MIN all-reduce before weights
load and again at profiling), so one busy GPU shrinks every rank (docs/engines/sglang.md §2–§4).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from kvtop.domain.deployment import BudgetTerm
from kvtop.domain.engine_log import EngineLog
from kvtop.domain.engines.base import EngineResult
from kvtop.domain.engines.measured_reads import MeasuredField
from kvtop.domain.engines.modules import EngineBase
from kvtop.domain.engines.protocols import EngineRules
from kvtop.domain.engines.sglang.architectures import GEMMA3N_CLASSES, GEMMA4_CLASSES
from kvtop.domain.engines.sglang.blockscale_leak import leak_rows
from kvtop.domain.engines.sglang.budget import SglangBudget
from kvtop.domain.engines.sglang.deployment import draft_reserve_terms
from kvtop.domain.engines.sglang.draft_load import DRAFT_BEFORE_POOL_ERAS
from kvtop.domain.engines.sglang.dsa import dsa_kv_default_before_checkpoint
from kvtop.domain.engines.sglang.eras import default_page_size, raw_fp8_dsa_family
from kvtop.domain.engines.sglang.flags import SglangFlags
from kvtop.domain.engines.sglang.kv_checkpoint import reads_mixed_quant_file_kv
from kvtop.domain.engines.sglang.pp_layers import kv_layers_of_stage
from kvtop.domain.engines.sglang.pp_parts import stage_parts
from kvtop.domain.engines.sglang.pp_split import PP_SPLIT_ERAS
from kvtop.domain.engines.sglang.releases import CALENDAR, resolve_version
from kvtop.domain.engines.sglang.ssm_dtype import launch_ssm_dtype_bytes
from kvtop.domain.engines.sglang.weights_built import built_rows, released_rows
from kvtop.domain.engines.sglang.weights_classes import class_rows
from kvtop.domain.engines.sglang.weights_words import WEIGHT_ROW_WORDS
from kvtop.domain.engines.versions import PEP440_NAMES, ReleaseNames, ResolvedVersion
from kvtop.domain.gpus import NO_GPU, SM100_AND_NEWER
from kvtop.domain.kv import KvStorage
from kvtop.domain.launch import EngineFlags, LaunchSettings
from kvtop.domain.layout import ParallelLayout, PpRemainder, StageParts, VocabSplit
from kvtop.domain.model import ModelSpec
from kvtop.domain.weights import WeightRow

if TYPE_CHECKING:
    from kvtop.domain.config_override import ConfigOverride
    from kvtop.domain.ledger import Ledger
    from kvtop.domain.refusals import Refusal


class SglangRules(SglangBudget, EngineBase):
    id = "sglang"
    display_name = "SGLang"
    kv_storage = KvStorage(
        fp4_dequant_workspace=True,  # §6.1: one shared FP8 dequant row per token
        ds_mla_on_fp8_dsa=True,  # §6.1: FP8 KV on a DSA model is the 656 B latent (raw 576 B under trtllm)
        honours_checkpoint_kv_dtype=True,  # §10: `auto` follows kv_cache_quant_algo FP8
        checkpoint_kv_unread_by=frozenset({"LagunaForCausalLM"}),  # §10: models/laguna.py keeps no quant_config
        auto_fp8_dsa_family=SM100_AND_NEWER,  # §10: the DSA default is FP8 from SM100 (major >= 10, SM120 too)
        compressed_latent_bytes=584,  # §6.4: DeepSeek-V4's FlashMLA V4 row (dsv4.py V4_ROW)
        pool_holds_no_op_layers=True,  # §6.1: the cell counts the stage's layers, DeciLM's no-op blocks too
        # §6.1: Mllama's cross-attention layers (0.5.23 mllama.py RadixAttention is_cross_attention) hold their
        # image tokens in the same pool, a slot of every layer (cell 163,840 B for the class default, as a dense one)
        cross_attention_in_pool=True,
        # §6.1: Whisper's encoder and cross-attention layers are layers of the one pool, each the decoder's row
        # (0.5.23 configs/model_config.py num_attention_layers = encoder_layers + 2 × decoder_layers)
        encoder_decoder="one_pool",
        # Gemma-3n's KV-shared layers: 0.5.23's pool sizes every num_hidden_layers layer (no kv-sharing read in
        # model_config.py; meta-built cell 71,680 B for the class default's 35 layers, not 20). Gemma-4's too, from
        # its first release: get_hybrid_layer_ids splits the SWA and full pools over every layer of layer_types
        # (configs/model_config.py:1608-1617 at 0.5.11, :1725-1733 at 0.5.12, :2142-2157 at 0.5.18, :2754-2770 at
        # 0.5.23; every wheel 0.5.11 … 0.5.23 read: no num_kv_shared_layers in model_config.py, model_executor/ or
        # mem_cache/), each shared layer in its own kind's pool (§6.1: the DGX
        # Spark's gemma-4-E4B-it, 'swa size: 798276, full size: 997846' in 79.94 GB, 7 full and 35 sliding layers)
        shared_layers_keep_kv=frozenset({*GEMMA3N_CLASSES, *GEMMA4_CLASSES}),
    )
    pools_draft_kv = True  # §4.3: the draft reuses the target's max_total_num_tokens
    dcp_splits_kv_heads = True
    context_holds_driver_reserved = True
    calendar = CALENDAR  # the releases kvtop models
    memory_fraction_field = "mem_fraction_static"
    memory_fraction_flag = "--mem-fraction-static"
    memory_fraction_of = (  # what the share is of
        "the memory free before the weights load; weights and KV share it, the rest is its reserve"
    )
    title_prefix = "sglang"  # `sglang::scheduler_TP3`: titles state each worker's rank
    default_port = 30000
    cap_fields: tuple[str, ...] = ("max_total_tokens",)  # --max-total-tokens: min(it, what memory allows)
    # §4 (docs/engines/sglang.md; model_runner.py profile_max_num_token): the pool is the free memory after the
    # weights less pre-load × (1 − mem_fraction_static); no profile run measures a non-KV figure
    measured_not_read: Mapping[MeasuredField, str] = {
        "non_kv_bytes": "the pool is the free memory after the weights less pre-load × (1 − mem_fraction_static), "
        "with no profiled runtime figure to subtract (docs/engines/sglang.md §4)",
        # torch_compile.py: `init_memory_pool` runs before the kernel warm-up and the graph runners that compile
        "compile_cache": "the pool is sized before anything compiles (the kernel warm-up and the CUDA graph runners "
        "that run torch.compile come after `init_memory_pool`, read at 0.5.10 … 0.5.23), so a warm or cold cache "
        "moves no token (docs/engines/sglang.md §21)",
    }
    usage_metrics: tuple[str, ...] = ("sglang:token_usage",)
    capacity_metrics: tuple[str, ...] = ("sglang:max_total_num_tokens",)
    weight_row_words = WEIGHT_ROW_WORDS  # the rows its rules add to the weights book, in words

    def kv_storage_for(
        self, model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion
    ) -> KvStorage:
        """§6.1.1: from v0.5.10rc0 the trtllm DSA backends (FP8's default on Blackwell) keep the raw latent;
        §10: from v0.5.3 a DSA model's `auto` KV is SGLang's DSA default, never the checkpoint's (dsa.py); a
        MIXED_PRECISION checkpoint's KV algorithm may come from hf_quant_config.json (kv_checkpoint.py); §4.2: the
        SSM state's dtype the launch or release names (ssm_dtype.py)."""
        storage = self.kv_storage
        if reads_mixed_quant_file_kv(version):  # §10: a MIXED_PRECISION block without KV → hf_quant_config.json's
            storage = storage.model_copy(update={"reads_mixed_quant_file_kv": True})
        family = raw_fp8_dsa_family(settings, version)
        if family != NO_GPU:
            storage = storage.model_copy(update={"raw_fp8_dsa_family": family})
        if dsa_kv_default_before_checkpoint(version):
            storage = storage.model_copy(update={"dsa_default_before_checkpoint": True})
        ssm = launch_ssm_dtype_bytes(settings, version)  # §4.2: --mamba-ssm-dtype / SGLANG_MAMBA_SSM_DTYPE (ssm_dtype.py)
        if ssm is not None:
            storage = storage.model_copy(update={"launch_ssm_dtype_bytes": ssm})
        return storage

    def default_page_size(self, model: ModelSpec, gpu_name: str | None, version: ResolvedVersion) -> int:
        return default_page_size(model, gpu_name, version)[0]

    def pp_remainder_at(self, version: ResolvedVersion) -> PpRemainder:
        """get_pp_indices by release: the whole remainder on the last stage before 0.5.6 (pp_split.py)."""
        return PP_SPLIT_ERAS.at(version)

    def mtp_after_pool(self, version: ResolvedVersion) -> bool:
        """§19.1: before 0.5.14 the draft worker (its MTP layers too) is built after the target's pool (draft_load.py)."""
        return not DRAFT_BEFORE_POOL_ERAS.at(version)

    def need_reserve_terms(self, settings: LaunchSettings, version: ResolvedVersion) -> Sequence[BudgetTerm]:
        """§19.1: a given --mem-fraction-static's needed reserve is the automatic fraction's, the draft's share in it."""
        return draft_reserve_terms(settings, version) if settings.mem_fraction_static is not None else ()

    def kv_layers_of_stage(self, model: ModelSpec, layers: range, version: ResolvedVersion) -> Sequence[int]:
        """§8.3.1: a class without start_layer / end_layer sizes every stage's KV for the whole model."""
        return kv_layers_of_stage(model, layers, version)

    def stage_parts(self, model: ModelSpec, pp_rank: int, pp: int, version: ResolvedVersion) -> StageParts:
        """The classes that build their embedding, final norm or LM head on every stage (pp_parts.py), the k/v
        scales their attention layers hold and a W4A16 input scale's width (kv_scales.py), a ModelOpt
        checkpoint's quantized head (lm_head.py), what its classes build on each layer their own way: the DSA
        indexer's wk in bf16, MiniMax-M3's router in bf16, a WNA16 linear module's weight_shape and bnb 8-bit's
        host-side scales (layer_build.py), HunYuan's q/k norms only on its flag (weights_classes.py), and a
        Transformers-backend class's tower (transformers_tower.py), Kimi-K3's bf16 latent projections and MXFP4 expert
        biases (kimi_k3.py), a ModelOpt NVFP4 Qwen3.5's bf16 MTP layer (mtp_quant.py)."""
        from kvtop.domain.engines.sglang.kimi_k3 import with_kimi_k3_build
        from kvtop.domain.engines.sglang.kv_scales import with_input_scale_width, with_kv_scales
        from kvtop.domain.engines.sglang.layer_build import (
            with_host_scales,
            with_layer_build,
            with_linear_shapes,
        )
        from kvtop.domain.engines.sglang.lm_head import with_quantized_head
        from kvtop.domain.engines.sglang.mtp_quant import with_mtp_plain
        from kvtop.domain.engines.sglang.router_dtype import with_router_dtype
        from kvtop.domain.engines.sglang.transformers_tower import with_transformers_tower
        from kvtop.domain.engines.sglang.weights_classes import with_stated_qk_norm

        parts = stage_parts(model, pp_rank, pp, version)
        for build in (with_kv_scales, with_input_scale_width, with_quantized_head, with_layer_build,
                      with_linear_shapes, with_host_scales, with_transformers_tower, with_stated_qk_norm,
                      with_router_dtype, with_kimi_k3_build, with_mtp_plain):
            parts = build(parts, model, version)
        return parts

    def context_length(self, model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> int:
        """§7.1: `_derive_context_length`, whose fallback is 2048 where the config holds no context key (context_len.py)."""
        from kvtop.domain.engines.sglang.context_len import engine_context

        return engine_context(model, settings)

    def vocab_split(self, model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> VocabSplit:
        """Under --enable-dp-attention the classes of vocab_split.DP_ATTENTION_EMBEDDING_CLASSES (DeepseekV2Model's
        users, Llama4Model's …) build the embedding whole on every rank or over the attention-TP group, by release;
        the LM head over TP (vocab_split.py); the launch's SGLANG_ENABLE_EMBED_REPLICATION and --enable-dp-lm-head
        over that, where the class reads them (vocab_launch.py)."""
        from kvtop.domain.engines.sglang.vocab_launch import with_launch_switches
        from kvtop.domain.engines.sglang.vocab_split import sglang_vocab_split

        return with_launch_switches(sglang_vocab_split(model, settings, version), model, settings, version)

    def expert_parallel_without_experts(self, model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> str:
        """--ep-size without experts: asserted before 0.4.10.post2, then held by the TP group at ep == tp (dense_ep.py);
        at 1 < ep < tp what the MoE groups open by release (moe_groups.py)."""
        from kvtop.domain.engines.sglang.dense_ep import expert_parallel_without_experts

        return expert_parallel_without_experts(settings, version)

    def check_config(self, model: ModelSpec, version: ResolvedVersion) -> None:
        """§4.7: the configs its config classes and model code fail on (config_checks.py)."""
        from kvtop.domain.engines.sglang.config_checks import check_config

        check_config(model, version)

    def weights_built(
        self, model: ModelSpec, layout: ParallelLayout, layers: range, gpu_name: str | None, version: ResolvedVersion,
        quantization: str | None = None,
    ) -> tuple[WeightRow, ...]:
        """§20: NVFP4 experts' swizzled scales, a fused shared expert whole under EP (weights_built.py); one class's
        unused norms and fp32 head (weights_classes.py); 0.5.3 – 0.5.11's leaked NVFP4 block-scale placeholders
        (blockscale_leak.py). The NVFP4 MoE runner these follow reads `--quantization` (nvfp4_runner.py)."""
        return (built_rows(model, layout, layers, gpu_name, version, quantization)
                + class_rows(model, layout, layers, version)
                + leak_rows(model, layout, layers, gpu_name, version, quantization))

    def weights_released(
        self, model: ModelSpec, layout: ParallelLayout, layers: range, gpu_name: str | None, version: ResolvedVersion,
        quantization: str | None = None,
    ) -> tuple[WeightRow, ...]:
        """§20: the NVFP4 experts' swizzled placeholders 0.5.23's classes build and the load aliases away
        (weights_built.py `released_rows`)."""
        return released_rows(model, layout, layers, gpu_name, version, quantization)

    def reads_available_memory(self, version: ResolvedVersion) -> bool:
        """From 0.5.4 the kernel's available memory on a unified device (unified_free.py)."""
        from kvtop.domain.engines.sglang.unified_free import reads_available_memory

        return reads_available_memory(version)

    def resolve_version(self, log: EngineLog) -> ResolvedVersion:
        return resolve_version(log)

    def config_override(self, settings: LaunchSettings, version: ResolvedVersion) -> ConfigOverride | None:
        """`--json-model-override-args`, merged into the config as the release merges it (model_override.py)."""
        from kvtop.domain.engines.sglang.model_override import config_override

        return config_override(settings, version)

    def launch_refusals(self, ledger: Ledger) -> tuple[Refusal, ...]:
        """The launches it refuses at start although kvtop sizes them (refusals.py)."""
        from kvtop.domain.engines.sglang import refusals

        return refusals.launch_refusals(ledger)

    def at_shared_capacity(self, settings: LaunchSettings, tightest: EngineResult) -> LaunchSettings:
        """§6.5: PP ranks all-reduce the token count (MIN), then every stage re-sizes to it."""
        return settings.model_copy(update={"max_total_tokens": tightest.token_capacity})


RULES: EngineRules = SglangRules()  # mypy checks the package against the protocols
FLAGS: EngineFlags = SglangFlags()
RELEASE_NAMES: ReleaseNames = PEP440_NAMES  # what --engine-version takes: PEP 440 releases
