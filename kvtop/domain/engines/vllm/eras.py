"""vLLM's rules that changed between releases: each era with the first release it holds for and its
source (docs/engines/vllm.md §2, §5, §9), and how a log says which release printed it.
"""

from __future__ import annotations

from typing import Literal

from kvtop.domain.engine_log import EngineLog
from kvtop.domain.engines.versions import (
    Era,
    Eras,
    ReleaseDate,
    ResolvedVersion,
    VersionSource,
    era_for,
    parse_release,
    resolve,
)
from kvtop.domain.engines.vllm.log_records import VllmRankLog
from kvtop.domain.engines.vllm.v0_charge import CALENDAR_BEFORE_06

DEFAULT_UTILIZATION_ERAS: Eras[float] = Eras((
    Era("", 0.9, "EngineArgs / CacheConfig.gpu_memory_utilization = 0.9"),
    Era(
        "0.20.0", 0.92, "PR #38284 (2026-04-21, first in v0.20.0): CUDA-graph memory profiling on, 0.9 → 0.92"
    ),
))

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
# `--kv-cache-memory-bytes` (§2 Override): PR #21489, merged 2025-09; v0.11.0 (2025-10-04) is the first
# release read to have it (v0.10.2 of 2025-09-13 is left out: an older server gets a searched share instead).
KV_CACHE_MEMORY_BYTES_SINCE = "0.11.0"


# Releases below are pinned where a wheel was read (v0.13.0 and v0.33.0, installed by benchmarks/engine_diff);
# where a rule changed between the two, the release is read from the PR's date and marked "not pinned".

# `--kv-cache-dtype auto` follows a ModelOpt checkpoint's `kv_cache_quant_algo` (FP8 → fp8_e4m3, §3.3).
CHECKPOINT_KV_DTYPE_ERAS: Eras[bool] = Eras((
    Era("", False, "v0.13.0: kv_cache_dtype_str_to_dtype: auto is the model dtype"),
    Era(
        "0.14.0",
        True,
        "PR #30785 (opened 2025-12-16, absent from v0.13.0): EngineArgs.create_engine_config → "
        "resolve_kv_cache_dtype_string (vllm/utils/torch_utils.py); read as first in v0.14.0, not pinned",
    ),
))
# Async scheduling on unless asked off (§3: max_concurrent_batches 2 at pp 1).
ASYNC_SCHEDULING_ERAS: Eras[bool] = Eras((
    Era("", False, "v0.13.0: SchedulerConfig.async_scheduling = False"),
    Era(
        "0.14.0",
        True,
        "PR #27614 (vLLM issue #27679): async_scheduling None → on unless incompatible (VllmConfig."
        "__post_init__); after v0.13.0, before #31998 (2026-01-08); read as first in v0.14.0, not pinned",
    ),
))
# The model runner `vllm serve` picks (VllmConfig.use_v2_model_runner, §3): at pp > 1 with async scheduling
# the V1 runner turns async scheduling off (pp batches in flight), the V2 runner keeps it (pp + 1).
ModelRunner = Literal["v1", "v2_dense", "v2"]
MODEL_RUNNER_ERAS: Eras[ModelRunner] = Eras((
    Era("", "v1", "v0.13.0: VLLM_USE_V2_MODEL_RUNNER defaults to 0 (the V1 runner)"),
    Era(
        "0.25.0",
        "v2_dense",
        "PR #44443 (merged 2026-07-02, 'Enable by default for all dense models'): V2 for models without "
        "experts; read as first in v0.25.0, not pinned",
    ),
    Era(
        "0.33.0",
        "v2",
        "v0.33.0 VllmConfig.use_v2_model_runner: V2 wherever Triton imports and no unsupported feature is asked "
        "for (every GPU install); the release that extended it to MoE models is not pinned (read as v0.33.0, "
        "the first seen with it)",
    ),
))
# Default max_num_batched_tokens of the API server on GPUs with ≥ 160 GiB (B200, B300): 16384 (§3).
LARGE_GPU_BATCH_ERAS: Eras[int | None] = Eras((
    Era("", None, "EngineArgs.get_batch_defaults: top tier ≥ 70 GiB and not A100 → 8192"),
    Era(
        "0.28.0",
        16384,
        "EngineArgs.get_batch_defaults: `device_memory >= 160 * GiB_bytes` → 16384 (present in v0.33.0; "
        "read as new in v0.28.0 from a third-party reading of arg_utils.py at v0.27.0 / v0.28.0)",
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
        "PR #35122: Platform.update_block_size_for_backend takes the chosen backend's preferred size "
        "(FLASH_ATTN_MLA / TRITON_MLA 16, FLASHMLA 64, FLASHINFER_MLA 32); read as first in v0.18.0, "
        "not pinned",
    ),
))
# FP8 KV on the Triton backends (§3.5): TRITON_MLA has none; then both need native fp8e4nv (sm89+).
TritonFp8 = Literal["attention_only", "sm89"]
TRITON_FP8_ERAS: Eras[TritonFp8] = Eras((
    Era("", "attention_only", "v0.13.0: TRITON_MLA takes only `auto` KV; TRITON_ATTN takes FP8 on any GPU"),
    Era(
        "0.23.0",
        "sm89",
        "PR #43914 (opened 2026-05-28): TritonAttentionImpl / TritonMLAImpl refuse FP8 KV below sm89; "
        "read as first in v0.23.0, not pinned",
    ),
))
# ModelOpt FP8 weights' minimum compute capability (§3.6).
MODELOPT_FP8_CAPABILITY_ERAS: Eras[tuple[int, int]] = Eras((
    Era("", (8, 9), "v0.13.0: ModelOptFp8Config.get_min_capability = 89"),
    Era(
        "0.27.0",
        (8, 0),
        "PR #50019 (opened 2026-07-27, FP8 emulation on sm80): 89 → 80; read as first in v0.27.0, not pinned",
    ),
))
# Block-FP8 MoE experts whose TP shard is not a multiple of the 128 block (§3.6): refused everywhere, or
# only where no FP8 MoE kernel takes it (sm80).
BlockFp8Shard = Literal["every_gpu", "below_sm89"]
BLOCK_FP8_SHARD_ERAS: Eras[BlockFp8Shard] = Eras((
    Era("", "every_gpu", "v0.13.0 Fp8MoEMethod.create_weights: 'not divisible by … block_n'"),
    Era(
        "0.33.0",
        "below_sm89",
        "v0.33.0 select_fp8_moe_backend (fused_moe/oracle/fp8.py): no backend on sm80; the release that "
        "dropped the create_weights check is not pinned (read as v0.33.0, the first one seen without it)",
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
        "0.23.0",
        True,
        "PR #29627: the env default becomes 1; read as first in v0.23.0 (PR #46553 dates the ROCm Llama-4 "
        "regression it caused between v0.22 and v0.23), not pinned",
    ),
))
# Hybrid Mamba models (§4.4): prefix caching off by default and v0.13's block rule, then on with
# mamba_cache_mode 'align' (Platform._align_hybrid_block_size).
HybridCacheMode = Literal["none-v0.13", "align"]
HYBRID_CACHE_MODE_ERAS: Eras[HybridCacheMode] = Eras((
    Era(
        "",
        "none-v0.13",
        "v0.13.0: ModelConfig.is_prefix_caching_supported is False for hybrids; "
        "HybridAttentionMambaModelConfig.verify_and_update_config sizes the block",
    ),
    Era(
        "0.28.0",
        "align",
        "PR #50991 (2026-08-04): prefix caching on for hybrids, mamba_cache_mode 'align' "
        "(MambaModelConfig); read as first in v0.28.0, not pinned",
    ),
))
# MLA / Mamba hybrids (Kimi-Linear): the attention block a multiple of 128 ("TRTLLM/FlashInfer MLA decode kernels
# require the physical number of kernel blocks to be aligned to 128 / kernel_block_size"), §4.4; 0 = not modelled.
MLA_HYBRID_ALIGNMENT_ERAS: Eras[int] = Eras((
    Era("", 0, "not read before v0.33.0: an MLA hybrid's block is not modelled"),
    Era("0.33.0", 128, "v0.33.0 platforms/interface.py Platform._align_hybrid_block_size (model_config.use_mla); "
        "the release that added it is not pinned"),
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
        "the release that added the classes is not pinned (read as v0.33.0)"),
))  # fmt: skip
# NemotronH's SSM state dtype when its config names none (NemotronHForCausalLMConfig, §4.4): bytes per element.
NEMOTRON_H_SSM_DTYPE_ERAS: Eras[int] = Eras((
    Era("", 2, "v0.13.0 NemotronHForCausalLMConfig: mamba_ssm_cache_dtype from the config, else float16"),
    Era(
        "0.33.0",
        4,
        "v0.33.0: DEFAULT_MAMBA_SSM_CACHE_DTYPE = float32; the release that changed it is not pinned (read "
        "as v0.33.0, the first seen with it)",
    ),
))

# Release tags and the day each was first on PyPI (UTC), to map a log's date to a release.
CALENDAR: tuple[ReleaseDate, ...] = CALENDAR_BEFORE_06 + ReleaseDate.table("""
0.6.0 2024-09-05 0.6.1 2024-09-11 0.6.1.post1 2024-09-13 0.6.1.post2 2024-09-13 0.6.2 2024-09-25
0.6.3 2024-10-14 0.6.3.post1 2024-10-17 0.6.4 2024-11-15 0.6.4.post1 2024-11-15 0.6.5 2024-12-18
0.6.6 2024-12-27 0.6.6.post1 2024-12-27 0.7.0 2025-01-27 0.7.1 2025-02-01 0.7.2 2025-02-06 0.7.3 2025-02-20
0.8.0 2025-03-18 0.8.1 2025-03-19 0.8.2 2025-03-25 0.8.3 2025-04-06 0.8.4 2025-04-15 0.8.5 2025-04-28
0.8.5.post1 2025-05-02 0.9.0 2025-05-28 0.9.0.1 2025-05-30 0.9.1 2025-06-10 0.9.2 2025-07-08
0.10.0 2025-07-25 0.10.1 2025-08-19 0.10.1.1 2025-08-20 0.10.2 2025-09-13 0.11.0 2025-10-04
0.11.1 2025-11-19 0.11.2 2025-11-20 0.12.0 2025-12-03 0.13.0 2025-12-19 0.14.0 2026-01-20 0.14.1 2026-01-24
0.15.0 2026-01-29 0.15.1 2026-02-05 0.16.0 2026-02-26 0.17.0 2026-03-07 0.17.1 2026-03-11 0.18.0 2026-03-20
0.18.1 2026-03-31 0.19.0 2026-04-03 0.19.1 2026-04-18 0.20.0 2026-04-27 0.20.1 2026-05-03 0.20.2 2026-05-10
0.21.0 2026-05-15 0.22.0 2026-05-29 0.22.1 2026-06-05 0.23.0 2026-06-13 0.24.0 2026-06-30 0.25.0 2026-07-11
0.25.1 2026-07-14 0.26.0 2026-07-25 0.27.0 2026-08-10 0.27.1 2026-08-11 0.28.0 2026-08-26 0.29.0 2026-09-09
0.30.0 2026-09-22 0.31.0 2026-10-05 0.32.0 2026-10-18 0.33.0 2026-11-02
""")

V0_RELEASE = "0.7.3"  # what a V0 log with no version line or date is read as (V0's defaults: 0.9, blocks)


def default_utilization(version: ResolvedVersion) -> tuple[float, str]:
    """vLLM's default gpu_memory_utilization for its version (not stated: the current default)."""
    era = era_for(DEFAULT_UTILIZATION_ERAS, version)
    if version.text is None:
        return (
            era.value,
            f"default {era.value:g} (0.9 before v0.21; give --engine-version for an older server)",
        )
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


def async_scheduling_default(version: ResolvedVersion) -> Era[bool]:
    return era_for(ASYNC_SCHEDULING_ERAS, version)


backend_selection = BACKEND_SELECTION_ERAS.at
model_runner = MODEL_RUNNER_ERAS.at
# Whether Llama 4's chunked layers get their own groups by default (else all layers are full).
chunked_local_hybrid = CHUNKED_LOCAL_HYBRID_ERAS.at


def _v0_lines(log: EngineLog) -> bool:
    """V0's own lines: `# GPU blocks` / `# cuda blocks` with no `GPU KV cache size`, its profiling summary, or its
    refusal `The model's max seq len (L) is larger than … stored in KV cache (N)` (V1 words it `To serve at least
    one request …`)."""
    ranks = log.ranks(VllmRankLog)
    blocks = any(r.num_gpu_blocks for r in ranks) and not any(r.kv_cache_tokens for r in ranks)
    return blocks or any(r.v0_profiles or r.token_shortfalls for r in ranks)


def resolve_version(log: EngineLog) -> ResolvedVersion:
    """The release whose rules read this log: its version line, else V0's lines, else its dates."""
    hint = None
    if not log.release_version and not log.first_date and _v0_lines(log):
        early_v1 = any(r.v1_gpu_blocks for r in log.ranks(VllmRankLog))
        hint = ResolvedVersion(
            text=V0_RELEASE,
            approximate=True,
            source=VersionSource.LOG,
            detail=(
                "early V1 lines (`kv_cache_utils.py] # GPU blocks`, before `GPU KV cache size` came): the V1 engine "
                "before v0.8.0 (opt-in), whose defaults (0.9, blocks × block size) are V0's"
                if early_v1
                else "V0 lines (`# GPU blocks`, `Memory profiling results`, or its `max seq len … larger than` "
                "refusal): the V0 engine (the default before v0.8.0)"
            ),
        )
    return resolve(
        engine_name="vLLM",
        stated=log.engine_version,
        stated_line=log.engine_version_line,
        hint=hint,
        first_date=log.first_date,
        calendar=CALENDAR,
    )
