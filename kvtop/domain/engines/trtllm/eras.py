"""TensorRT-LLM's rules that changed between releases: each era with the first release it holds for and
its source (docs/engines/trtllm.md §1, §3, §4, §6, §11), and how a log says which release printed it.

Where the spec could not pin the release a rule changed in, the era says so and gives the first
release kvtop has evidence for; `ROUNDING_ERAS` reads the releases in between as either rule.
"""

from __future__ import annotations

import struct
from typing import Literal

from kvtop.domain.engine_log import EngineLog
from kvtop.domain.engines.trtllm.log_records import TrtllmRankLog
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
from kvtop.domain.layout import PpRemainder

Backend = Literal["pytorch", "tensorrt"]
Rounding = Literal["ceil", "floor", "either"]
ProfileRule = Literal["peak", "peak_plus_temporary_pool"]
EstimationRule = Literal["dummy_requests", "dummy_requests_and_graphs"]
EstimatorHead = Literal["hidden_size", "head_dim"]

# Mapping.pp_layers (torch.tensor_split): the first num_layers % pp stages hold one layer more
PP_REMAINDER: PpRemainder = "first"

# §6: trtllm-serve's runtime when `--backend` is not given.
DEFAULT_BACKEND_ERAS: Eras[Backend] = Eras((
    Era("", "tensorrt", "trtllm-serve before 1.0: `--backend` unset serves a TensorRT engine (C++ runtime)"),
    Era("1.0.0rc0", "pytorch", "1.0: the PyTorch backend is the default of the LLM API and trtllm-serve"),
))
# §6: tokens per block of a TensorRT engine (`trtllm-build` plugin config); the PyTorch backend's
# `KvCacheConfig.tokens_per_block` is 32 in every release (llm_args.py).
ENGINE_TOKENS_PER_BLOCK_ERAS: Eras[int] = Eras((
    Era(
        "", 64, "plugin/plugin.py 2023–2024: tokens_per_block 64 (logs of v0.8–v0.13; docs/source/memory.md)"
    ),
    Era(
        "0.19.0",
        32,
        "later plugin config `_tokens_per_block = 32` (0.19 logs, case 4275); the switch after v0.13 is not pinned",
    ),
))
PYTORCH_TOKENS_PER_BLOCK = 32
# §3 step 4: what `free_gpu_memory_fraction` multiplies in the PyTorch backend's profile.
PROFILE_ERAS: Eras[ProfileRule] = Eras((
    Era("", "peak", "spring 2025 module `cal_max_tokens` (≈ v0.18–v0.19): A = (total − peak) × fraction"),
    Era(
        "0.20.0rc0",
        "peak_plus_temporary_pool",
        "mid-2025 `KvCacheCreator` (`tmp kv_mem`, ≈ v0.20+): A = (total − peak + temporary pool) × fraction",
    ),
))
# §4.1: how the final pool rounds `max_tokens` to blocks.
ROUNDING_ERAS: Eras[Rounding] = Eras((
    Era(
        "",
        "ceil",
        "resource_manager.py `calculate_max_num_blocks` (d2a5560…, mid-2025): "
        "math.ceil(max_tokens / tokens_per_block); the 1.1.0rc3 log rounds 86,711 up to 86,720",
    ),
    Era(
        "1.2.0rc0",
        "either",
        "not pinned (docs/engines/trtllm.md §12): int(max_tokens // tokens_per_block) "
        "in the 2026 tree (001541ba…); releases after 1.1 are read as either rule",
    ),
))
LAST_CEIL_RELEASE = "1.1.0"  # the latest release known to round up (explain's upper end for "either")
# §3 step 1: the temporary pool the profiling run is given (`_get_token_num_for_estimation`).
ESTIMATION_ERAS: Eras[EstimationRule] = Eras((
    Era(
        "",
        "dummy_requests",
        "mid-2025 `_get_token_num_for_estimation`: Σ ceil((len + extra) / tpb) × beam, "
        "extra = 1, + 1 with the overlap scheduler",
    ),
    Era(
        "1.3.0rc0",
        "dummy_requests_and_graphs",
        "2026 tree (00043967…): at least the CUDA-graph warm-up and "
        "max_batch_size blocks (its cap by fraction × free is not modelled); not pinned: after 1.2.0rc2, whose log shows 257 "
        "blocks at the default max_batch_size 2048 (case qwen3-8b)",
    ),
))
# §1.1: the estimator's head width (what the profiled budget is divided by).
ESTIMATOR_HEAD_ERAS: Eras[EstimatorHead] = Eras((
    Era("", "hidden_size", "spring 2025 estimator: hidden_size × kv_heads / attention heads / tp (a float)"),
    Era(
        "0.20.0rc0",
        "head_dim",
        "`KVCacheManager.get_cache_size_per_token` (mid-2025+): head_dim × kv_heads // tp",
    ),
))
# §3 step 4 / §4.2: the fraction as the engine multiplies it. The C++ runtime's KvCacheConfig holds a
# float (kDefaultGpuMemFraction = 0.9f); the 1.1-era PyTorch path passed it through the same C++ value.
FRACTION_ERAS: Eras[Literal["float32", "float64"]] = Eras((
    Era("", "float32", "C++ KvCacheConfig `float` (the 1.1.0rc3 log prints 0.8999999761581421)"),
    Era(
        "1.2.0rc0",
        "float64",
        "2026 tree: the LLM API's pydantic KvCacheConfig (a Python float) reaches "
        "`_cal_max_memory`; not pinned",
    ),
))
# §4.2: what the C++ runtime prints as the pool's tokens.
ENGINE_TOKEN_PRINT_ERAS: Eras[Literal["tokens", "blocks"]] = Eras((
    Era(
        "",
        "tokens",
        "≤ v0.8 `Using N tokens in paged KV cache.`: the tokens before block rounding (case 1400)",
    ),
    Era("0.9.0", "blocks", "v0.9+ `[MemUsageChange] Allocated … (N)`: primary blocks × tokens per block"),
))
# §18: what a TensorRT engine's C++ runtime holds before the KV sizing, besides the engine's weights.
RuntimeForm = Literal["packed_tokens", "token_logits", "executor_2024", "executor"]
ENGINE_RUNTIME_ERAS: Eras[RuntimeForm] = Eras((
    Era(
        "",
        "packed_tokens",
        "before v0.8: TensorRT's activation for the build's packed-token maximum, max_batch_size × max_input_len "
        "(build.py defaults 8 × 2,048; no packed-token default of 8,192), its widest layer's tensors (the gated MLP, "
        "layers/mlp.py of 2023); no log of the era prints what its runtime holds: assumed",
    ),
    Era(
        "0.8.0",
        "token_logits",
        "v0.8 (the batch manager shipped as a binary, no execution-context line): TensorRT's process-wide count "
        "grows by max_num_tokens × vocab × 4 B around the execution context of trtllm-build's engines (two Triton "
        "logs: 3.94 GiB at 8,192 tokens, 5.81 at 12,288, Llama-3-8B); an engine build.py made keeps the packed-token "
        "form (engine_build.runtime_form: 190 MiB for gpt2-medium's, search-index id 29338649464)",
    ),
    Era(
        "0.9.0",
        "executor_2024",
        "v0.9+ `TrtGptModelInflightBatching`: `Allocated … for execution context memory`, `… for runtime buffers`, "
        "`… for decoder`: 0.76–1.11 GiB of context, and buffers and decoder of 28.6 and 29.1 B per slot and "
        "vocabulary entry (trtllm-bench's GPT-J-6B at 0.12.0.dev2024073000, issue 1188 of November 2024); the "
        "switch from v0.8's form between v0.8 and v0.12 is not pinned",
    ),
    Era(
        "0.15.0",
        "executor",
        "the same lines, the decoder smaller: issue 4275's v0.19 start leaves about 17 B per slot and vocabulary "
        "entry; 0.15 is the first release after the last log of 29 B, the switch up to v0.19 is not pinned",
    ),
))
# PR #5933 (1.1): `kv_cache_config.max_gpu_total_bytes` caps the profiled budget.
MAX_GPU_TOTAL_BYTES_SINCE = "1.1.0rc0"
DEFAULT_FRACTION = 0.9  # §6: KvCacheConfig / trtllm-serve / C++ kDefaultGpuMemFraction

# The releases on PyPI (`tensorrt-llm`, first upload of each, UTC; dev builds left out), to map a
# log's date to a release.
CALENDAR: tuple[ReleaseDate, ...] = ReleaseDate.table("""
0.5.0 2023-10-20 0.6.1 2023-12-05 0.7.0 2023-12-20 0.7.1 2023-12-28 0.8.0 2024-02-29 0.9.0 2024-04-11
0.10.0 2024-06-05 0.11.0 2024-07-17 0.12.0 2024-08-29 0.13.0 2024-09-30 0.14.0 2024-11-01 0.15.0 2024-12-04
0.16.0 2024-12-24 0.17.0 2025-01-30 0.17.0.post1 2025-02-02 0.18.0 2025-04-02 0.18.1 2025-04-09
0.19.0rc0 2025-04-16 0.18.2 2025-04-16 0.20.0rc0 2025-04-23 0.20.0rc1 2025-04-29 0.19.0 2025-05-09
0.20.0rc2 2025-05-13 0.20.0rc3 2025-05-20 0.21.0rc0 2025-06-04 0.21.0rc1 2025-06-11 0.21.0rc2 2025-06-18
0.20.0 2025-06-19 1.0.0rc0 2025-06-25 1.0.0rc1 2025-07-01 1.0.0rc2 2025-07-08 1.0.0rc3 2025-07-16
1.0.0rc4 2025-07-22 0.21.0 2025-08-04 1.0.0rc5 2025-08-04 1.0.0rc6 2025-08-07 1.1.0rc0 2025-08-15
1.1.0rc1 2025-08-22 1.1.0rc2 2025-08-30 1.1.0rc3 2025-09-04 1.1.0rc4 2025-09-10 1.1.0rc5 2025-09-17
1.0.0 2025-09-24 1.2.0rc0 2025-09-30 1.2.0rc1 2025-10-22 1.2.0rc2 2025-11-07 1.2.0rc3 2025-11-21
1.2.0rc4 2025-11-25 1.2.0rc5 2025-12-10 1.1.0 2025-12-19 1.2.0rc6 2025-12-23 1.2.0rc7 2026-01-08
1.2.0rc8 2026-01-15 1.3.0rc0 2026-01-22 1.3.0rc1 2026-01-27 1.3.0rc2 2026-02-03 1.3.0rc3 2026-02-12
1.3.0rc4 2026-02-17 1.3.0rc5 2026-02-24 1.3.0rc6 2026-03-03 1.3.0rc7 2026-03-10 1.2.0 2026-03-12
1.3.0rc8 2026-03-17 1.3.0rc9 2026-03-24 1.3.0rc10 2026-03-31 1.3.0rc11 2026-04-09 1.3.0rc12 2026-04-17
1.2.1 2026-04-20 1.3.0rc13 2026-04-29 1.3.0rc14 2026-05-07 1.3.0rc15 2026-05-21 1.3.0rc22 2026-07-22
1.3.0rc23 2026-07-30 1.3.0rc24 2026-08-10 1.3.0rc25 2026-08-28 1.3.0rc26 2026-09-09 1.3.0rc27 2026-09-17
1.3.0rc28 2026-09-23 1.3.0rc29 2026-09-29 1.4.0rc0 2026-10-13 1.4.0rc1 2026-10-21
""")

# What a log with no version line and no date is read as, from its own wording (§4.2, §11).
PRE_09_RELEASE = "0.8.0"  # `Allocate N bytes for k/v cache.` / `Using N tokens in paged KV cache.`
CPP_2024_RELEASE = "0.19.0"  # `Number of blocks in KV cache primary pool:` (before the per-window rewrite)


default_backend = DEFAULT_BACKEND_ERAS.at
engine_tokens_per_block = ENGINE_TOKENS_PER_BLOCK_ERAS.at
profile_rule = PROFILE_ERAS.at
rounding_rule = ROUNDING_ERAS.at
estimation_rule = ESTIMATION_ERAS.at


def engine_runtime_form(version: ResolvedVersion) -> RuntimeForm:
    """What a TensorRT engine's C++ runtime holds before the KV sizing in this release (§18)."""
    return era_for(ENGINE_RUNTIME_ERAS, version).value


def engine_prints_tokens(version: ResolvedVersion) -> bool:
    """Whether the C++ runtime's logged capacity is its tokens before block rounding (≤ v0.8)."""
    return era_for(ENGINE_TOKEN_PRINT_ERAS, version).value == "tokens"


def caps_by_total_bytes(version: ResolvedVersion) -> bool:
    """Whether `max_gpu_total_bytes` exists in this release (PR #5933, 1.1)."""
    release, since = version.release, parse_release(MAX_GPU_TOTAL_BYTES_SINCE)
    return release is None or since is None or release >= since


def as_engine_fraction(fraction: float, version: ResolvedVersion, backend: Backend) -> float:
    """The fraction as the engine multiplies it: a C++ float (the C++ runtime always; the PyTorch backend
    through 1.1), else the Python float."""
    if backend == "pytorch" and era_for(FRACTION_ERAS, version).value == "float64":
        return fraction
    value: float = struct.unpack("f", struct.pack("f", fraction))[0]
    return value


def _wording_hint(log: EngineLog) -> ResolvedVersion | None:
    """A release from the log's own lines, when it states no version and no date."""
    ranks = log.ranks(TrtllmRankLog)
    if any(r.legacy_pool_bytes or r.legacy_pool_tokens for r in ranks):
        return ResolvedVersion(
            text=PRE_09_RELEASE,
            approximate=True,
            source=VersionSource.LOG,
            detail="pre-0.9 lines (`Allocate N bytes for k/v cache`, `Using N tokens in paged KV cache`): ≤ v0.8",
        )
    if any(r.primary_pool_blocks for r in ranks) and not any(r.blocks_per_sequence for r in ranks):
        return ResolvedVersion(
            text=CPP_2024_RELEASE,
            approximate=True,
            source=VersionSource.LOG,
            detail="C++ `Number of blocks in KV cache primary pool` (calculateMaxNumBlocks before the 2025 "
            "per-window rewrite, v0.9–v0.19): read as 0.19.0, the latest release seen printing it",
        )
    return None


def resolve_version(log: EngineLog) -> ResolvedVersion:
    """The release whose rules read this log: its version line, else its wording, else its dates."""
    hint = None if log.release_version or log.first_date else _wording_hint(log)
    return resolve(
        engine_name="TensorRT-LLM",
        stated=log.engine_version,
        stated_line=log.engine_version_line,
        hint=hint,
        first_date=log.first_date,
        calendar=CALENDAR,
    )
