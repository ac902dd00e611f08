"""vLLM's rules that changed between releases: each era with the first release it holds for and its
source (docs/engines/vllm.md §2, §5, §9). The model runner's eras are in runner_eras.py, the release calendar and how
a log says which release printed it in release_calendar.py.
"""

from __future__ import annotations

from typing import Literal

from kvtop.domain.engines.versions import (
    Era,
    Eras,
    ResolvedVersion,
    era_for,
    parse_release,
)

DEFAULT_UTILIZATION_ERAS: Eras[float] = Eras((
    Era("", 0.9, "EngineArgs / CacheConfig.gpu_memory_utilization = 0.9"),
    Era(
        "0.20.0", 0.92, "PR #38284 (2026-04-21, first in v0.20.0): CUDA-graph memory profiling on, 0.9 → 0.92"
    ),
))
# From v0.34.0 the unstated utilization is extensible_kv.utilization_default's (config/cache.py:493-501
# resolved_gpu_memory_utilization: 1.0 with the extensible KV cache, else 0.92); the budget reads this table before.

TokenPrint = Literal["concurrency", "blocks"]
# `GPU KV cache size: N tokens` (§5): blocks × block size (per group, × dcp), until PR #41069
# (2026-04-28, first in v0.20.1: present in the v0.20.1 sdist, absent from v0.20.0's).
TOKEN_PRINT_ERAS: Eras[TokenPrint] = Eras((
    Era("", "blocks", "vllm/v1/core/kv_cache_utils.py: num_blocks // len(groups) × block_size (× dcp)"),
    Era("0.20.1", "concurrency", "PR #41069: int(num_blocks / blocks_per_request × max_model_len)"),
))
# Blocks the admission check holds back (§4.2): from PR #47272 (merge 76fb6d210a57, 2026-08-20; absent from v0.28.0,
# first in v0.29.0) `get_kv_cache_configs` checks one request of max_model_len, and estimates the longest that fits,
# against the KV memory less one block of the worker's groups (`check_memory`: the null block BlockPool keeps); the
# pool it allocates still takes the whole memory (v0.33.0 wheel, v1/core/kv_cache_planning.py).
ADMISSION_RESERVED_BLOCKS_ERAS: Eras[int] = Eras((
    Era("", 0, "v0.13.0 kv_cache_utils.py check_enough_kv_cache_memory: the whole available memory"),
    Era("0.29.0", 1, "PR #47272, first in v0.29.0 (absent from the v0.28.0 sdist): v0.29.0 v1/core/kv_cache_utils.py"
        ":2319-2325 check_memory = available − one block (the null block), :979-985 the same in its check"),
))
admission_reserved_blocks = ADMISSION_RESERVED_BLOCKS_ERAS.at
# How pipeline stages share the block count (§4): before v0.8.2 the executor took the least memory
# over all workers and divided by the largest stage's layers; from v0.8.2 (#14079) each worker sizes
# its blocks from its own memory and its own layers, and the least block count wins.
PER_WORKER_STAGES_SINCE = "0.8.2"
# `--kv-cache-memory-bytes` (§2 Override): PR #21489, merged 2025-09; first released in v0.10.2 (2025-09-13): its
# wheel's vllm/config/cache.py:116 `kv_cache_memory_bytes`, engine/arg_utils.py:744 the flag (:230-236 read by
# human_readable_int), v1/worker/gpu_worker.py:235-252 the KV memory it gives; the v0.10.1.1 wheel names it nowhere.
KV_CACHE_MEMORY_BYTES_SINCE = "0.10.2"


# Releases below are pinned from the released wheels (PyPI vllm-X-cp38-abi3-manylinux*.whl, read with unzip -p): each
# era names the first release whose code has it, with file:line there, and the release before that lacks it.

# `--kv-cache-dtype auto` follows a ModelOpt checkpoint's `kv_cache_quant_algo` (FP8 → fp8_e4m3, §3.3).
CHECKPOINT_KV_DTYPE_ERAS: Eras[bool] = Eras((
    Era("", False, "v0.13.0: kv_cache_dtype_str_to_dtype: auto is the model dtype"),
    Era(
        "0.14.0",
        True,
        "PR #30785, first in v0.14.0 (absent from v0.13.0's wheel): v0.14.0 engine/arg_utils.py:1398 "
        "EngineArgs.create_engine_config → resolve_kv_cache_dtype_string (utils/torch_utils.py:301)",
    ),
))
# Async scheduling on unless asked off (§3: max_concurrent_batches 2 at pp 1).
ASYNC_SCHEDULING_ERAS: Eras[bool] = Eras((
    Era("", False, "v0.13.0: SchedulerConfig.async_scheduling = False"),
    Era(
        "0.14.0",
        True,
        "PR #27614 (vLLM issue #27679), first in v0.14.0: config/scheduler.py:133 async_scheduling default None, "
        "config/vllm.py:588-628 VllmConfig.__post_init__ turns None on unless incompatible (v0.13.0 "
        "scheduler.py:133: False)",
    ),
))
# The offline `LLM(...)` class (UsageContext.LLM_CLASS) takes other max_num_batched_tokens defaults than `vllm serve`
# (OPENAI_API_SERVER) from the V1 engine on: 16384 where the server takes 8192 (V1's large row, v1_batch_tier.py: by
# the name, H100 or H200, to v0.8.4; ≥ 70 GiB at v0.8.5; ≥ 70 GiB and not an A100 from v0.9.0), 8192 where the server takes 2048; on GPUs of ≥ 160 GiB (from v0.28.0) both take 16384. Its
# max_num_seqs is the server's in every release read. V0 (before v0.8.0) sets no default by usage context (v0.7.3's
# arg_utils.py reads it only in `_override_v1_engine_args`, for VLLM_USE_V1).
LLM_CLASS_BATCH_ERAS: Eras[tuple[int, int] | None] = Eras((
    Era("", None, "V0: no batch default by usage context (v0.7.3 engine/arg_utils.py:1355-1387, V1's override only)"),
    Era(
        "0.8.0",
        (16384, 8192),
        "engine/arg_utils.py `_set_default_args_v1` (v0.8.0:1662, 1693-1704: LLM_CLASS 16384 on H100/H200 else 8192), "
        "`get_batch_defaults` (v0.11.0:1605-1624, v0.20.0:2208-2227, v0.28.0:2582-2610, v0.33.0:2973-3006: 16384 "
        "at ≥ 70 GiB not an A100, else 8192; ≥ 160 GiB: 16384, as the server's)",
    ),
))  # fmt: skip
# A start through `EngineArgs` → `LLMEngine` / `AsyncLLMEngine.from_engine_args` (UsageContext.ENGINE_CONTEXT) is in
# neither usage-context table of `_set_default_args_v1` / `get_batch_defaults`, so the scheduler's own defaults hold:
# 2048 batched tokens on every GPU, and from v0.9.2 (when max_num_seqs joined the tables) 128 seqs; before, V1 set
# max_num_seqs by the GPU for every context (the server's). V0 sets nothing by usage context (the server's defaults).
# (tokens, seqs or None: the server's)
ENGINE_CONTEXT_BATCH_ERAS: Eras[tuple[int, int | None] | None] = Eras((
    Era("", None, "V0: no batch default by usage context (v0.7.3 engine/arg_utils.py:1355-1387, V1's override only)"),
    Era(
        "0.8.0",
        (2048, None),
        "v0.8.0 engine/arg_utils.py:1705-1720 (tokens by LLM_CLASS / OPENAI_API_SERVER only; `default_max_num_seqs = "
        "1024` for every context), config.py:61,1657 (SchedulerConfig: None → _DEFAULT_MAX_NUM_BATCHED_TOKENS 2048); "
        "v0.9.1 arg_utils.py:1560-1567 seqs by the GPU for every context",
    ),
    Era(
        "0.9.2",
        (2048, 128),
        "v0.9.2 arg_utils.py:1697 (`usage_context in default_max_num_seqs`), config.py:2240 (max_num_seqs 128); "
        "v0.10.1.1 arg_utils.py:1638-1712, config/scheduler.py:185-193; v0.13.0 arg_utils.py:1941-1950 and v0.33.0 "
        ":3172-3181 (`.get(usage_context, SchedulerConfig.DEFAULT_MAX_NUM_BATCHED_TOKENS / DEFAULT_MAX_NUM_SEQS)`, "
        "config/scheduler.py:44-45 / :41-43: 2048, 128)",
    ),
))  # fmt: skip
# Before v0.11.1 ENGINE_CONTEXT's unset max_num_batched_tokens reached SchedulerConfig.__post_init__, which raises it
# to 5120 for a multimodal model and 32768 for a pooling runner (v0.8.0 config.py:1657-1687, v0.11.0
# config/scheduler.py:171-192; gone from v0.11.1's scheduler.py): a multimodal model there is not modelled
ENGINE_CONTEXT_MULTIMODAL_FLOOR_ERAS: Eras[bool] = Eras((
    Era("", True, "v0.8.0 config.py:1657-1687 … v0.11.0 config/scheduler.py:171-192: max(tokens, 5120)"),
    Era("0.11.1", False, "v0.11.1 config/scheduler.py: no multimodal floor (arg_utils.py:2009 sets the default)"),
))  # fmt: skip
# Default max_num_batched_tokens of the API server on GPUs with ≥ 160 GiB (B200, B300): 16384 (§3).
LARGE_GPU_BATCH_ERAS: Eras[int | None] = Eras((
    Era("", None, "EngineArgs.get_batch_defaults: top tier ≥ 70 GiB and not A100 → 8192"),
    Era(
        "0.28.0",
        16384,
        "first in v0.28.0: engine/arg_utils.py:2582 EngineArgs.get_batch_defaults `device_memory >= 160 * "
        "GiB_bytes` → 16384 (absent from v0.27.1's arg_utils.py)",
    ),
))
# How the attention backend and its block size are chosen (§3.1): forced by the platform, or the backend's.
BackendSelection = Literal["platform", "backend"]
BACKEND_SELECTION_ERAS: Eras[BackendSelection] = Eras((
    Era(
        "",
        "platform",
        "v0.13.0 CudaPlatform.check_and_update_config: MLA block 64 (FlashMLA) on Hopper, 128 (CUTLASS_MLA) "
        "on Blackwell, 64 for sparse MLA, else 16; DeepseekV32ForCausalLM.verify_and_update_config: "
        "fp8 → fp8_ds_mla",
    ),
    Era(
        "0.18.0",
        "backend",
        "PR #35122, first in v0.18.0: platforms/interface.py:427 Platform.update_block_size_for_backend takes "
        "the chosen backend's preferred size (FLASH_ATTN_MLA / TRITON_MLA 16, FLASHMLA 64, FLASHINFER_MLA 32), "
        "called from v1/executor/*_executor.py (absent from v0.17.1)",
    ),
))
# FP8 KV on TRITON_MLA (§3.5): none; then on any GPU; then only with native fp8e4nv (sm89+).
TritonMlaFp8 = Literal["none", "any_gpu", "sm89"]
TRITON_MLA_FP8_ERAS: Eras[TritonMlaFp8] = Eras((
    Era("", "none", "v0.13.0 v1/attention/backends/mla/triton_mla.py:31 supported_kv_cache_dtypes = ['auto'] "
        "(v0.17.1 :31 auto, bfloat16)"),
    Era("0.18.0", "any_gpu", "first in v0.18.0: triton_mla.py:32-36 supported_kv_cache_dtypes adds fp8, fp8_e4m3 "
        "(dequantized to BF16 in the kernel), no capability check"),
    Era("0.26.0", "sm89", "PR #43914's MLA half, first in v0.26.0: triton_mla.py:187-196 TritonMLAImpl refuses FP8 "
        "KV below sm89 ('native FP8 (fp8e4nv) requires SM89+'; absent from v0.25.1)"),
))  # fmt: skip
# FP8 KV on TRITON_ATTN (§3.5): taken on any GPU; then refused below sm89.
TRITON_ATTN_FP8_SM89_ERAS: Eras[bool] = Eras((
    Era("", False, "v0.13.0 TritonAttentionImpl: FP8 KV on any GPU"),
    Era("0.24.0", True, "PR #43914, first in v0.24.0: v1/attention/backends/triton_attn.py:471-481 "
        "TritonAttentionImpl.__init__ refuses FP8 KV below sm89 (absent from v0.23.0)"),
))  # fmt: skip
# ModelOpt FP8 weights' minimum compute capability (§3.6).
MODELOPT_FP8_CAPABILITY_ERAS: Eras[tuple[int, int]] = Eras((
    Era("", (8, 9), "v0.13.0: ModelOptFp8Config.get_min_capability = 89"),
    Era(
        "0.27.0",
        (8, 0),
        "PR #50019 (FP8 emulation on sm80), first in v0.27.0: quantization/modelopt.py:407-408 "
        "ModelOptFp8Config.get_min_capability 89 → 80 (v0.26.0: 89)",
    ),
))
# Block-FP8 MoE experts whose TP shard is not a multiple of the 128 block (§3.6): refused everywhere, or
# only where no FP8 MoE kernel takes it (sm80).
BlockFp8Shard = Literal["every_gpu", "below_sm89"]
BLOCK_FP8_SHARD_ERAS: Eras[BlockFp8Shard] = Eras((
    Era("", "every_gpu", "v0.13.0 Fp8MoEMethod.create_weights: 'not divisible by … block_n'"),
    Era(
        "0.29.0",
        "below_sm89",
        "first in v0.29.0: fused_moe/oracle/fp8.py:272-302 refine_fp8_moe_block_shape refines the block to "
        "gcd(block_n, block_k, shard, hidden) where that is ≥ 32, and quantization/fp8.py:566-584 "
        "Fp8MoEMethod.create_weights raises only without a refinement; the refined key is served only by "
        "Triton under supports_fp8 (experts/triton_moe.py), so sm80 finds no backend (v0.28.0 fp8.py:534-547 "
        "raises on every GPU)",
    ),
))
# Llama 4's chunked local attention under the hybrid KV cache manager (§4.1).
CHUNKED_LOCAL_HYBRID_ERAS: Eras[bool] = Eras((
    Era("", True, "PR #19351: ChunkedLocalAttentionSpec groups"),
    Era(
        "0.10.1",
        False,
        "PR #21761 (2025-07-28): VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE default 0 turns the "
        "manager off (VllmConfig.__post_init__)",
    ),
    Era(
        "0.14.0",
        True,
        "PR #29627, first in v0.14.0: envs.py:1468-1469 VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE "
        "default '1' (v0.13.0 envs.py: '0')",
    ),
))
# Hybrid Mamba models (§4.4) under --enable-prefix-caching (opt-in before v0.26.0: HYBRID_PREFIX_CACHING_DEFAULT_ERAS):
# v0.13's rule (kept only for the classes that support Mamba prefix caching, whose block aligns to the Mamba chunk: not
# modelled; dropped for the others), then mamba_cache_mode 'all' for those classes (not modelled) and 'align' for the
# others, then 'align' for every class (Platform._align_hybrid_block_size). Not the release range of the flag
# `--mamba-cache-mode` (hybrid.CACHE_MODE_SPAN, from v0.15.1 of the releases read; engine/arg_utils.py:945 at v0.15.0): these eras are the mode vLLM picks.
HybridCacheMode = Literal["none-v0.13", "align-v0.15", "all-or-align", "align"]
HYBRID_CACHE_MODE_ERAS: Eras[HybridCacheMode] = Eras((
    Era(
        "",
        "none-v0.13",
        "v0.13.0-v0.14.x: ModelConfig.is_prefix_caching_supported is False for hybrids; with --enable-prefix-caching "
        "models/config.py:332-348 (v0.14.0) MambaModelConfig keeps it only where the class supports Mamba prefix "
        "caching (then :438-459 aligns the block to the Mamba chunk), else 'disabling'; "
        "HybridAttentionMambaModelConfig :466-469 sizes the block",
    ),
    Era(
        "0.15.0",
        "align-v0.15",
        "first in v0.15.0 (config/cache.py:127 mamba_cache_mode; absent from v0.14.0): with --enable-prefix-caching "
        "models/config.py MambaModelConfig sets 'all' where the class supports Mamba prefix caching, else 'align' "
        "(v0.15.0 :335-347, v0.18.0 :370-382, v0.22.0 :353-365, v0.24.0 :420-432, v0.25.1 :561-573); 'align' takes "
        "the 'none' branch's block (models/config.py v0.15.0 :495, v0.18.0 :204; platforms/interface.py v0.22.0 "
        ":642, v0.24.0 :766, v0.25.1 :883) and 2 state blocks a request (v1/kv_cache_interface.py MambaSpec "
        "v0.15.0 :297-298, v0.24.0 :654-655, v0.25.1 :694-695)",
    ),
    Era(
        "0.26.0",
        "all-or-align",
        "first in v0.26.0: config/model.py:1896 ModelConfig.is_prefix_caching_supported is True for generative "
        "hybrids (v0.25.1 :1885 False); models/config.py:559-561 MambaModelConfig sets mamba_cache_mode 'all' "
        "where the class supports Mamba prefix caching (MAMBA_PREFIX_CACHING_ALL), else 'align'",
    ),
    Era(
        "0.28.0",
        "align",
        "PR #50991, first in v0.28.0: models/config.py:603-604 MambaModelConfig sets mamba_cache_mode 'align' "
        "for every class (v0.27.1 :616 still 'all' for the Mamba-prefix-caching classes)",
    ),
))
# Which Mamba layers export a prefill checkpoint in 'align' mode (§4.4): one more state block a request, and for GDN
# under FlashInfer's prefill a block aligned to its 64-token checkpoints.
PrefillCheckpoints = Literal["none", "mamba2", "mamba2_gdn"]
PREFILL_CHECKPOINT_ERAS: Eras[PrefillCheckpoints] = Eras((
    Era("", "none", "no layer exports one (v0.29.0-v0.31.0 kv_cache_interface.py MambaSpec has "
        "num_prefill_checkpoint_blocks, which MambaMixer2 and GDN leave 0)"),
    Era("0.32.0", "mamba2", "first in v0.32.0: layers/mamba/mamba_mixer2.py:1107 num_prefill_checkpoint_blocks=1, "
        "alignment 1 (absent from v0.31.0); kv_cache_interface.py MambaSpec.max_memory_usage_bytes 2 + checkpoints"),
    Era("0.33.0", "mamba2_gdn", "first in v0.33.0: layers/mamba/gdn/qwen_gdn_linear_attn.py:748 (FlashInfer's GDN "
        "prefill), platforms/interface.py:1089-1094 aligns the block to get_mamba_prefill_checkpoint_alignment "
        "(layers/mamba/abstract.py:98; absent from v0.32.0)"),
))  # fmt: skip
# The hybrid classes that support Mamba prefix caching (models/interfaces.py SupportsMambaPrefixCaching, read at
# v0.26.0 and v0.27.1: falcon_h1.py, granitemoehybrid.py, jamba.py, nemotron_h.py, zamba2.py; mamba.py and
# mamba2.py are attention-free, never prefix-cached): their default mamba_cache_mode is 'all' in the 'all-or-align'
# era, which kvtop does not model.
MAMBA_PREFIX_CACHING_ALL: frozenset[str] = frozenset({
    "FalconH1ForCausalLM", "GraniteMoeHybridForCausalLM", "JambaForCausalLM", "NemotronHForCausalLM",
    "NemotronHPuzzleForCausalLM", "Zamba2ForCausalLM",
})  # fmt: skip
# v0.13.0-v0.14.x: the same classes and Bamba (bamba.py:401 SupportsMambaPrefixCaching at v0.14.0; gone by v0.24.0)
# keep --enable-prefix-caching, with the block aligned to the Mamba chunk ('none-v0.13', not modelled).
MAMBA_PREFIX_CACHING_V014: frozenset[str] = MAMBA_PREFIX_CACHING_ALL | {"BambaForCausalLM"}
# MLA / Mamba hybrids (Kimi-Linear): the attention block a multiple of 128 ("TRTLLM/FlashInfer MLA decode kernels
# require the physical number of kernel blocks to be aligned to 128 / kernel_block_size"), §4.4; 0 = not modelled.
MLA_HYBRID_ALIGNMENT_ERAS: Eras[int] = Eras((
    Era("", 0, "before v0.27.0 (whose alignment has no MLA term) an MLA hybrid's block is not modelled"),
    Era("0.27.0", 128, "first in v0.27.0: platforms/interface.py:883-889 Platform._align_hybrid_block_size "
        "(model_config.use_mla: max(alignment, 128)); absent from v0.26.0's"),
))  # fmt: skip
# Lightning attention's width (LoadCasts.state_width_from_rope, docs/engines/vllm.md §4.4): vLLM's _CONFIG_REGISTRY
# has no bailing_hybrid, so a Ling-2.5 config is read through transformers 5.20.2's BailingHybridConfig (pinned by
# the 0.33.0 wheel), whose __post_init__ sets head_dim = qk_rope_head_dim; layers/mamba/linear/base.py
# LinearAttention and MambaStateShapeCalculator.linear_attention_state_shape then read that width (128 → 64 on
# Ring-V2.5's class defaults: 16 × 64 × 64 × 2 B = 131,072 B of state a layer at TP 1, the meta build's MambaSpec
# padded to 147,456). v0.13.0 has no BailingMoeV2_5ForCausalLM.
STATE_WIDTH_FROM_ROPE_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset(), "no lightning-attention class read with a narrowed head_dim before v0.33.0"),
    Era("0.33.0", frozenset({"BailingMoeV2_5ForCausalLM", "BailingMoeV3ForCausalLM"}),
        "models/bailing_moe_linear.py, models/bailing_moe_v3.py (Ling-3's KDA: BailingMoeV3KimiDeltaAttention reads "
        "config.head_dim) over transformers 5.20.2 BailingHybridConfig.__post_init__ (head_dim = qk_rope_head_dim); "
        "the classes are older (V2_5 from v0.17.0 registry.py:85, V3 from v0.28.0 :82), the narrowing is "
        "transformers': BailingHybridConfig is first in transformers 5.20.0 (absent from 5.19.0), which v0.31.0 "
        "(<5.18.0) and v0.32.0 (<5.20.0) exclude and v0.33.0 (>=5.16.1,<5.21.0) resolves to; v0.17.0-v0.19.1 "
        "(<5) never have it, v0.20.0-v0.30.0 (uncapped: >=4.56 / >=5.5.3 / >=5.10.4) only when installed after "
        "5.20.0 came: read as wide there"),
))  # fmt: skip
# NemotronH's SSM state dtype when its config names none (NemotronHForCausalLMConfig, §4.4): bytes per element.
NEMOTRON_H_SSM_DTYPE_ERAS: Eras[int] = Eras((
    Era("", 2, "v0.13.0 NemotronHForCausalLMConfig: mamba_ssm_cache_dtype from the config, else float16"),
    Era(
        "0.20.0",
        4,
        "first in v0.20.0: models/config.py:410 NemotronHForCausalLMConfig.DEFAULT_MAMBA_SSM_CACHE_DTYPE = "
        "'float32' (v0.19.1: getattr(hf_config, 'mamba_ssm_cache_dtype', 'float16'))",
    ),
))

# CacheConfig.DEFAULT_BLOCK_SIZE, the block `update_block_size_for_backend` offers the attention backends first
# (platforms/interface.py `_preferred_block_size_for_backends`: a backend that takes it keeps it, else its smallest
# size), and the floor of a hybrid's block alignment (`_align_hybrid_block_size`: max(the backend's smallest,
# cache_config.block_size))
DEFAULT_BLOCK_ERAS: Eras[int] = Eras((
    Era("", 16, "config/cache.py DEFAULT_BLOCK_SIZE = 16 (v0.13.0 … v0.33.0 :185)"),
    Era("0.34.0", 64, "v0.34.0 config/cache.py:185 DEFAULT_BLOCK_SIZE = 64; platforms/interface.py:710-733, 781-790 "
        "(FLASH_ATTN, TRITON_ATTN and the MLA backends take multiples of 16, FLASHINFER 16/32/64, FLASHINFER_MLA "
        "32/64, FLASHMLA 64: all keep 64)"),
))

def default_utilization(version: ResolvedVersion) -> tuple[float, str]:
    """vLLM's default gpu_memory_utilization for its version before v0.34.0 (from v0.34.0, and for a version not
    stated, `extensible_kv.utilization_default` decides)."""
    era = era_for(DEFAULT_UTILIZATION_ERAS, version)
    return era.value, f"default of vLLM {version.label}: {era.value:g} ({era.source})"


# Which expression `GPU KV cache size: N tokens` prints in this version (not stated: the current).
token_print_rule = TOKEN_PRINT_ERAS.at


def per_worker_stages(version: ResolvedVersion) -> bool:
    """Whether each pipeline stage is sized from its own memory and layers (v0.8.2+), or the least memory
    over all workers is divided by the largest stage's layers (before)."""
    release, since = version.release, parse_release(PER_WORKER_STAGES_SINCE)
    return release is None or since is None or release >= since


def has_kv_cache_memory_bytes(version: ResolvedVersion) -> bool:
    """Whether `--kv-cache-memory-bytes` exists in this release (not stated: the latest, so yes)."""
    release, since = version.release, parse_release(KV_CACHE_MEMORY_BYTES_SINCE)
    return release is None or since is None or release >= since


honours_checkpoint_kv_dtype = CHECKPOINT_KV_DTYPE_ERAS.at


backend_selection = BACKEND_SELECTION_ERAS.at
# Whether Llama 4's chunked layers get their own groups by default (else all layers are full).
chunked_local_hybrid = CHUNKED_LOCAL_HYBRID_ERAS.at
