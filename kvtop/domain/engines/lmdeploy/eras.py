"""LMDeploy's rules that changed between releases, each with its first release and its source
(docs/engines/lmdeploy.md §1–§5), its release calendar, and how a log says which release printed it.

Sources are InternLM/lmdeploy's files at the named tags (`git show <tag>:<path>`) and the PRs that
changed them; a PR's first release is the first tag that contains its merge.
"""

from __future__ import annotations

from datetime import date
from typing import Literal

from kvtop.domain.engine_log import EngineLog
from kvtop.domain.engines.lmdeploy.log_records import LmdeployRankLog
from kvtop.domain.engines.versions import (
    Era,
    Eras,
    ReleaseDate,
    ResolvedVersion,
    VersionSource,
    era_for,
    parse_release,
    release_on,
    resolve,
)

# `lmdeploy serve api_server --ep/--dp`: absent through v0.7.3 (cli/utils.py has no ArgumentHelper.ep/.dp)
PARALLEL_FLAGS_ERAS: Eras[bool] = Eras((
    Era("", False, "cli/utils.py, cli/serve.py (v0.7.3): no --ep, no --dp; argparse exits on them"),
    Era("0.8.0", True, "cli/utils.py (v0.8.0) ArgumentHelper.ep (PR #3313 'add deepep') and .dp (PR #3207 "
                       "'Torch dp support'), cli/serve.py add_parser_api_server"),
))  # fmt: skip
Share = Literal["sequences", "total", "free", "object_cache"]
# §1: what TurboMind's `cache_max_entry_count` is a share of.
TURBOMIND_SHARE_ERAS: Eras[Share] = Eras((
    Era("", "sequences", "≤ v0.0.14: `cache_max_entry_count: int = 48` counts cached sequences"),
    Era("0.1.0", "total", "BlockManager::GetBlockCount: static_cast<size_t>(total * ratio) / block_size"),
    Era("0.2.2", "free", "PR #973 (2024-01-26): GetBlockCount takes free * ratio (free after the weights)"),
    Era("0.15.0", "object_cache", "PR #4717 (2026-07-14): one object-cache region of size_t(free × ratio)"),
))
# §5: TurboMind's default share: 0.5 of total (v0.1.0–v0.2.1), 0.8 of free from v0.2.2.
TURBOMIND_DEFAULT_RATIO_ERAS: Eras[float] = Eras((
    Era("", 0.5, "target_model/base.py (v0.1.0): cache_max_entry_count = 0.5"),
    Era("0.2.2", 0.8, "messages.py TurbomindEngineConfig: cache_max_entry_count = 0.8 (PR #973)"),
))
# §2.1, §5: tokens per TurboMind block.
TURBOMIND_BLOCK_LEN_ERAS: Eras[int] = Eras((
    Era("", 128, "target_model/base.py ≤ v0.2.6: cache_block_seq_len = 128"),
    Era("0.3.0", 64, "messages.py / target_model/base.py v0.3.0: cache_block_seq_len = 64 (turbomind-2.1, #1218)"),
))
# §2.2: blocks allocated per chunk: 1 (lazily, one at a time) in v0.1.0; −1 (the whole pool at start) after.
TURBOMIND_CHUNK_ERAS: Eras[int] = Eras((
    Era("", 1, "target_model/base.py v0.1.0: cache_chunk_size = 1"),
    Era("0.2.0", -1, "target_model/base.py v0.2.0: cache_chunk_size = -1 (PR #909)"),
))
# §2.1: the MLA latent (head_dim 576) is stored once (`share_kv`) from v0.12.2; twice (K and V) before.
TURBOMIND_MLA_SHARED_SINCE = Era("0.12.2", True, "PR #4373 (2026-03-02) 'Reduce MLA kv-cache memory': share_kv")
# §2.1: `quant_policy` before v0.4.0 was offline int8 KV (4 = kCacheKVInt8, calibrated per-layer scales, no
# per-token parameters); from v0.4.0 it is online int4 (4) / int8 (8) with a scale and zero per token-head.
TURBOMIND_ONLINE_KV_QUANT_SINCE = Era(
    "0.4.0", True, "PR #1377 (2024-04-11) 'Online 8/4-bit KV-cache quantization'; before, 4 = kCacheKVInt8"
)
# §4.1: the PyTorch engine quantises KV (int4/int8 with scale-zero tensors) from v0.6.2.
PYTORCH_KV_QUANT_SINCE = Era("0.6.2", True, "PR #2438 'Support pytorch engine kv int4/int8 quantization'")
# §2.2: hybrid linear attention: the pooled linear state is carved out of the budget first.
TURBOMIND_LINEAR_STATE_SINCE = Era("0.13.0", True, "SequenceManager v0.13.0: 'Adjusting block_count … linear'")
# `serve api_server --trust-remote-code` (store_true): the model's own code may load; no memory of its own. Read in
# the wheels: absent through v0.12.3, whose loaders pass trust_remote_code=True themselves (tokenizer.py:50)
TRUST_REMOTE_CODE_SINCE = Era("0.13.0", True, "cli/serve.py:84 (v0.13.0) ArgumentHelper.trust_remote_code, "
                                              "cli/utils.py:774-779 (PR #4511)")
# `serve api_server --num-gpu-blocks` (type=int, default 0: "Explicit number of GPU KV cache blocks for PyTorch engine"):
# read in the wheels, first in 0.18.0 (lmdeploy/cli/utils.py:536-539, added to serve.py:131's PyTorch group and passed
# to PytorchEngineConfig, :257); no such option in cli/ of the 0.17.0 wheel, nor at v0.10.0, v0.12.3, v0.15.0, v0.16.0
NUM_GPU_BLOCKS_FLAG_SINCE = Era("0.18.0", True, "cli/utils.py:536-539 (0.18.0 wheel) ArgumentHelper.num_gpu_blocks; "
                                                "absent from the 0.17.0 wheel's cli/")
# §15.1: loading a Hugging Face checkpoint, TurboMind's converter copies each weight through torch on the current
# (first) GPU (`export_weight`: `param.cuda().contiguous()`). Until v0.6.1 each checkpoint shard's reader ended with
# `torch.cuda.empty_cache()` (`BaseReader.clean_up`); PR #2621's loader (v0.6.2) dropped it, so torch's cache keeps the
# staging when the engine measures free memory, until `readers()` empties it again (PR #3570, first in v0.9.0). The
# largest tensor staged is the LM head's rank slice: once, or (v0.8.0, PR #3423) twice, staged transposed as a dense
# view (`output_weight.t()`, which `.cuda()` keeps) and then made contiguous. The value: copies the cache keeps.
TURBOMIND_EXPORT_STAGING_ERAS: Eras[int] = Eras((
    Era("", 0, "source_model/base.py ≤ v0.6.1: BaseReader.clean_up ends with torch.cuda.empty_cache() per shard"),
    Era("0.6.2", 1, "PR #2621 (2024-10-25) 'MoE support for turbomind': the new loader empties no cache"),
    Era("0.8.0", 2, "PR #3423 (2025-04-22) module.py Misc: save_split(output_weight.t(), split_dim=1)"),
    Era("0.9.0", 0, "PR #3570 (2025-05-19) 'perform torch.cuda.empty_cache() after conversion'"),
))
# §15.1: each layer's MLP is staged with all of these live at once (read at v0.6.2, v0.7.0, v0.7.3, main 3f414b595 of
# 2025-04-16 and v0.8.0): its three matrices read whole onto the GPU by the reader (`policy.to_cuda`, the input policy
# of a 16-bit checkpoint: `LlamaReader._ffn`/`InternLM2Reader._ffn` call `self.transform`), a clone of each made by
# its zero pad (`module.py` `Ffn._export`: `pad_out_dims(w1)`, `pad_out_dims(w3)`, `pad_in_dims(w2)`; torch's
# `constant_pad_nd` returns `clone()` when no pad is positive), and the contiguous copy of one rank slice
# (`export_weight`: `param.cuda().contiguous()` of a transposed view, one slice at a time). The value: whole
# matrices live beside that slice. The cache keeps their segments, since nothing empties it.
TURBOMIND_LAYER_STAGING_ERAS: Eras[int] = Eras((
    Era("", 0, "source_model/base.py ≤ v0.6.1: BaseReader.clean_up ends with torch.cuda.empty_cache() per shard"),
    Era("0.6.2", 6, "v0.6.2 policy.py to_cuda (the reader's copies) + module.py Ffn._export pad_out_dims/pad_in_dims "
                    "(clones) + target_model/base.py export_weight .cuda().contiguous() (one rank slice)"),
    Era("0.9.0", 0, "PR #3570 (2025-05-19) 'perform torch.cuda.empty_cache() after conversion'"),
))
# §15.7: each weight tensor its own cudaMalloc (`deviceMalloc`, utils/memory_utils.cu), rounded by the driver to
# whole pages before the count; read at v0.2.2, v0.3.0, v0.4.2, v0.5.3. True: charged (turbomind_pages.py).
TURBOMIND_WEIGHT_PAGES_ERAS: Eras[bool] = Eras((
    Era("", True, "memory_utils.cu ≤ v0.5.x deviceMalloc: one cudaMalloc per weight tensor (read at v0.2.2, v0.3.0, v0.4.2, v0.5.3)"),
    Era("0.6.0", False, "LlamaDenseWeight v0.6.0 lays scales and zeros apart (not read for pages); v0.6.4 "
                        "deviceMalloc is cudaMallocAsync from the device's pool"),
))
# §2.4: the block-size print: integer MiB (`block_size_ >> 20`) until v0.8.0, then `%.3f` MiB (main from 2025-03-24,
# builds whose version.py still says 0.7.2.post1; v0.7.3 was tagged without it, §15.4).
BLOCK_PRINT_FLOAT_SINCE = Era("0.8.0", True, "commit 63b13e834 (PR #3229, 2025-03-24): '%.3f MB'")

# §5: max_batch_size when not given: `get_max_batch_size(device)` (lmdeploy/utils.py), by GPU name.
MAX_BATCH_ERAS: Eras[tuple[tuple[str, int], ...]] = Eras((
    Era("", (), "cli/utils.py ≤ v0.5.x: --max-batch-size default 128"),
    Era("0.6.0", (("a100", 256), ("a800", 256), ("h100", 512), ("h800", 512)), "utils.py v0.6.0 get_max_batch_size"),
    Era(
        "0.10.0",
        (("a100", 384), ("a800", 384), ("h100", 1024), ("h800", 1024), ("l20y", 1024), ("h200", 1024)),
        "utils.py v0.10.0 get_max_batch_size",
    ),
))
DEFAULT_MAX_BATCH = 128

PytorchBudget = Literal["fixed_share", "share", "runtime_x7", "runtime_x2", "per_rank"]
# §4.3: how the PyTorch engine turns free memory into blocks.
PYTORCH_BUDGET_ERAS: Eras[PytorchBudget] = Eras((
    Era("", "fixed_share", "v0.2.0–v0.2.3 model_agent: gpu_mem_percent = 0.7 of free, cache_max_entry_count ignored"),
    Era("0.2.4", "share", "PR #1166: int(free × cache_max_entry_count / block_bytes)"),
    Era("0.2.6", "runtime_x7", "PR #1272: runtime = max_prefill_token_num × vocab × 7 reserved first"),
    Era("0.9.2", "runtime_x2", "PR #3745: runtime = (max_prefill_token_num + 2 × max_batches) × vocab × 2"),
    Era("0.13.0", "per_rank", "PR #4552 executor/base.py: int(free_r × ratio) // block_bytes, min over ranks"),
))
# §4.3: SSM state slots reserved before the KV budget: max_batches + this (+ prefix_cache_state_budget v0.13+).
PYTORCH_STATE_EXTRA_ERAS: Eras[int] = Eras((
    Era("", 0, "no state cache before v0.11.0"),
    Era("0.11.0", 8, "PR #4039 (Qwen3-Next): num_state_caches = max_batches + 8"),
    Era("0.12.3", 1, "PR #4437: num_state_caches = max_batches + 1"),
    Era("0.13.0", 2, "PR #4552: max_batches + 2 + prefix_cache_state_budget"),
))
# §4.1: each cache descriptor of a block rounded up to 256 B (CacheDesc.aligned_size).
PYTORCH_ALIGNED_SINCE = Era("0.11.1", True, "PR #4026 cache_engine.py: CacheDesc.aligned_size, alignment 256")
# §4.1: FP8 KV (quant_policy 16/17) in the PyTorch engine.
PYTORCH_FP8_SINCE = Era("0.14.0", True, "PR #4563: QuantPolicy.FP8 / FP8_E5M2")
# §4.1: the DSA models (config model_type) whose latent is the 656 B `fp8_ds_mla` layout when no --quant-policy is
# given; the others' is the model's bf16. Read in the v0.11.1 – v0.16.0 tags and the 0.17.0 / 0.18.0 wheels (PyPI).
PYTORCH_DSA_AUTO_FP8_ERAS: Eras[frozenset[str]] = Eras((
    Era("", frozenset(), "no DSA model before v0.11.1 (DeepseekV32ForCausalLM first in its MODULE_MAP)"),
    Era("0.11.1", frozenset({"deepseek_v32"}), "configurations/deepseek_v2.py:81-86 (v0.11.1) use_mla_fp8_cache = "
        "True; cache_engine.py:86-87 then sets quant_policy = 0 (every policy stores fp8_ds_mla)"),
    Era("0.12.2", frozenset({"deepseek_v32", "glm_moe_dsa"}), "configurations/deepseek_v32.py:32, 43 (v0.12.2): "
        "the builder of both model types, use_mla_fp8_cache = True"),
    Era("0.16.0", frozenset({"deepseek_v32"}), "deepseek_v32.py:71 (v0.16.0) mla_kv_cache_dtype = 'fp8_ds_mla'; "
        "glm_moe_dsa.py:36 'bfloat16' (PR #4737); cache_engine.py:159-167 raises for a policy other than 0 or 16"),
    Era("0.17.0", frozenset(), "PR #4896 (2026-08-24) 'bound DSA prefill score memory': deepseek_v32.py:71 (0.17.0) "
        "mla_kv_cache_dtype = 'bfloat16'; --quant-policy 16 still fp8_ds_mla (cache_engine.py:160-169; 0.18.0 "
        "executor/__init__.py:13-29)"),
))  # fmt: skip
# §4.3: the DSA indexer's prefill score workspace, reserved with the runtime before the KV share for a model whose
# builder sets `mla_index_topk` (LMDEPLOY_DSA_INDEXER_MAX_LOGITS_MB, default 512, read as its default: kvtop reads
# no environment variable of the launch). Bytes.
PYTORCH_DSA_WORKSPACE_ERAS: Eras[int] = Eras((
    Era("", 0, "no DSA score workspace reserved through v0.16.0 (executor/base.py _get_runtime_size)"),
    Era("0.17.0", 512 << 20, "PR #4896: executor/base.py:225-229, 245 (0.17.0; 0.18.0 :213-217, 233) "
                             "_get_dsa_score_workspace_size, envs.py:231 LMDEPLOY_DSA_INDEXER_MAX_LOGITS_MB = 512"),
))
DSA_MODEL_TYPES = frozenset({"deepseek_v32", "glm_moe_dsa"})  # the builders setting mla_index_topk (0.17.0, 0.18.0)
# §5: max_prefill_token_num when not given (the runtime reserve reads it).
PYTORCH_PREFILL_ERAS: Eras[int] = Eras((
    Era("", 16384, "messages.py v0.2.0 PytorchEngineConfig.max_prefill_token_num = 16384"),
    Era("0.2.4", 8192, "messages.py v0.2.4 PytorchEngineConfig.max_prefill_token_num = 8192"),
    Era("0.2.6", 4096, "messages.py v0.2.6 PytorchEngineConfig.max_prefill_token_num = 4096"),
    Era("0.6.0", 8192, "cli/utils.py v0.6.0: `serve api_server` passes --max-prefill-token-num (default 8192)"),
))
TURBOMIND_PREFILL_DEFAULT = 8192
PYTORCH_SINCE = "0.2.0"  # the PyTorch engine's first release

# Release tags and their dates (the tags of InternLM/lmdeploy to v0.16.0; 0.17.0 and 0.18.0 by their PyPI upload
# day, https://pypi.org/pypi/lmdeploy/json, read 2026-12-06: no tag of theirs in the stored clone, which ends 2026-08-22).
CALENDAR: tuple[ReleaseDate, ...] = ReleaseDate.table("""
0.0.10 2023-09-26 0.0.11 2023-10-17 0.0.12 2023-10-24 0.0.13 2023-10-30 0.0.14 2023-11-09
0.1.0 2023-12-18 0.2.0 2024-01-17 0.2.1 2024-01-19 0.2.2 2024-01-31 0.2.3 2024-02-06 0.2.4 2024-02-21
0.2.5 2024-03-05 0.2.6 2024-03-19 0.3.0 2024-04-03 0.4.0 2024-04-23 0.4.1 2024-05-07 0.4.2 2024-05-27
0.5.0 2024-07-01 0.5.1 2024-07-16 0.5.2 2024-07-26 0.5.2.post1 2024-07-26 0.5.3 2024-08-07 0.6.0 2024-09-13
0.6.1 2024-09-28 0.6.2 2024-10-29 0.6.2.post1 2024-11-07 0.6.3 2024-11-16 0.6.4 2024-12-09 0.6.5 2024-12-30
0.7.0 2025-01-15 0.7.0.post1 2025-01-25 0.7.0.post2 2025-01-27 0.7.0.post3 2025-02-10 0.7.1 2025-02-27
0.7.2 2025-03-19 0.7.2.post1 2025-03-21 0.7.3 2025-04-14 0.8.0 2025-05-04 0.9.0 2025-06-19 0.9.1 2025-07-04
0.9.2 2025-07-26 0.9.2.post1 2025-08-19 0.10.0 2025-09-09 0.10.1 2025-09-26 0.10.2 2025-10-28
0.11.0 2025-12-04 0.11.1 2025-12-24 0.12.0 2026-02-04 0.12.1 2026-02-13 0.12.2 2026-03-18 0.12.3 2026-04-08
0.13.0 2026-05-12 0.14.0 2026-06-24 0.15.0 2026-07-31 0.16.0 2026-08-19 0.17.0 2026-09-02 0.18.0 2026-09-28
""")


def since(era: Era[bool], version: ResolvedVersion) -> bool:
    """Whether a one-change rule holds at `version` (not stated: the latest, so yes)."""
    release, first = version.release, parse_release(era.since)
    return release is None or first is None or release >= first


def turbomind_share(version: ResolvedVersion) -> Era[Share]:
    return era_for(TURBOMIND_SHARE_ERAS, version)


def default_ratio(version: ResolvedVersion) -> Era[float]:
    return era_for(TURBOMIND_DEFAULT_RATIO_ERAS, version)


turbomind_block_len = TURBOMIND_BLOCK_LEN_ERAS.at


def default_max_batch(version: ResolvedVersion, gpu_name: str | None) -> tuple[int, str]:
    """`get_max_batch_size`: the first name of the era's table found in the GPU's name, else 128."""
    era = era_for(MAX_BATCH_ERAS, version)
    lowered = (gpu_name or "").lower()
    for name, size in era.value:
        if name in lowered:
            return size, f"{era.source}: {name} → {size}"
    if era.value and gpu_name is None:
        return DEFAULT_MAX_BATCH, f"{era.source}: 128 for a GPU not in its table (no GPU named: pass --gpu)"
    return DEFAULT_MAX_BATCH, f"{era.source}: 128"


def pytorch_budget(version: ResolvedVersion) -> Era[PytorchBudget]:
    return era_for(PYTORCH_BUDGET_ERAS, version)


def pytorch_prefill(version: ResolvedVersion) -> Era[int]:
    return era_for(PYTORCH_PREFILL_ERAS, version)


def pytorch_state_extra(version: ResolvedVersion) -> Era[int]:
    return era_for(PYTORCH_STATE_EXTRA_ERAS, version)


def pytorch_dsa_workspace(version: ResolvedVersion) -> Era[int]:
    return era_for(PYTORCH_DSA_WORKSPACE_ERAS, version)


def pytorch_dsa_auto_fp8(version: ResolvedVersion) -> Era[frozenset[str]]:
    return era_for(PYTORCH_DSA_AUTO_FP8_ERAS, version)


# --- which release printed a log ----------------------------------------------------------------

# What TurboMind's lines (and one of the PyTorch engine's) bound, as [first, before): a release the lines cannot come
# from is never picked.
_FLOAT_PRINT = ("0.8.0", "0.15.0")
_INTEGER_PRINT = ("0.1.0", "0.8.0")
_OLD_TRUNCATION = ("0.2.0", "0.12.0")
_NEW_TRUNCATION = ("0.12.0", "0.15.0")
_OBJECT_CACHE = ("0.15.0", None)
_DSA_WORKSPACE = ("0.17.0", None)  # the PyTorch engine's line (PYTORCH_DSA_WORKSPACE_ERAS)


def _bounds(log: EngineLog) -> list[tuple[str, str | None, str]]:
    """(first release, first release after, the line) for each line that bounds the release."""
    ranks = log.ranks(LmdeployRankLog)
    found: list[tuple[str, str | None, str]] = []
    sizes = [size for rank in ranks for size in rank.block_sizes]
    if any(size.decimals == 0 for size in sizes):
        found.append((*_INTEGER_PRINT, f"'block_size = {sizes[0].text} MB' (integer MiB, before v0.8.0)"))
    elif sizes:
        found.append((*_FLOAT_PRINT, f"'block_size = {sizes[0].text} MB' (%.3f MiB, v0.8.0 on)"))
    truncations = [t for rank in ranks for t in rank.session_truncations]
    if any(t.wording == "no_enough_blocks" for t in truncations):
        found.append((*_OLD_TRUNCATION, "'No enough blocks for session_len' (v0.2 – v0.11)"))
    if any(t.wording == "limited_memory" for t in truncations) or any(r.max_cached_tokens for r in ranks):
        found.append((*_NEW_TRUNCATION, "'max cached tokens' / 'truncated … due to limited KV cache memory' (v0.12+)"))
    if any(rank.object_cache_budgets for rank in ranks):
        found.append((*_OBJECT_CACHE, "'Object cache budget' (v0.15.0 on)"))
    if any(rank.dsa_workspaces for rank in ranks):
        found.append((*_DSA_WORKSPACE, "'Reserve … MiB for DSA prefill score workspace' (0.17.0 on)"))
    return found


def _within(release: str, bounds: list[tuple[str, str | None, str]]) -> bool:
    key = parse_release(release)
    return key is not None and all(
        key >= (parse_release(low) or key) and (high is None or key < (parse_release(high) or key))
        for low, high, _ in bounds
    )


def _latest_within(bounds: list[tuple[str, str | None, str]]) -> str | None:
    return next((entry.release for entry in reversed(CALENDAR) if _within(entry.release, bounds)), None)


def block_len_release(log: EngineLog, block_len: int) -> ResolvedVersion | None:
    """The newest release the log's lines allow whose TurboMind block is `block_len` tokens (`TURBOMIND_BLOCK_LEN_ERAS`:
    128 before v0.3.0, 64 from it); None where its lines allow none."""
    bounds = _bounds(log)
    for index, era in enumerate(TURBOMIND_BLOCK_LEN_ERAS):
        after = TURBOMIND_BLOCK_LEN_ERAS[index + 1].since if index + 1 < len(TURBOMIND_BLOCK_LEN_ERAS) else None
        within = [*bounds, (era.since or "0.0.0", after, f"a {block_len}-token block ({era.source})")]
        latest = _latest_within(within) if era.value == block_len else None
        if latest is not None:
            lines = "; ".join(line for _, _, line in within)
            return ResolvedVersion(
                text=latest, approximate=True, source=VersionSource.LOG,
                detail=f"from its lines: {lines} → the newest release they allow, {latest} (--engine-version for another)",
            )  # fmt: skip
    return None


def share_ambiguity(log: EngineLog, block_len: int) -> str | None:
    """Where the log's lines and its `block_len`-token block allow releases whose TurboMind sizes its pool from
    total memory (v0.1.0 – v0.2.1) and releases that size it from free memory (v0.2.2 on; TURBOMIND_SHARE_ERAS),
    what they cannot tell; else None."""
    bounds = _bounds(log)
    spans: dict[str, list[str]] = {}
    for entry in CALENDAR if bounds else ():
        release = ResolvedVersion(text=entry.release)
        if _within(entry.release, bounds) and turbomind_block_len(release) == block_len:
            spans.setdefault(TURBOMIND_SHARE_ERAS.at(release), []).append(entry.release)
    if "total" not in spans or "free" not in spans:
        return None
    total, free = spans["total"], spans["free"]
    return (f"which release ran: its lines allow {total[0]} – {total[-1]}, whose TurboMind takes a share of total "
            f"memory, and {free[0]} – {free[-1]}, a share of free memory after the weights (BlockManager "
            f"GetBlockCount, PR #973); they cannot tell {total[0]} from {free[-1]}: pass --engine-version")  # fmt: skip


def resolve_version(log: EngineLog) -> ResolvedVersion:
    """The release whose rules read this log: a version line; else the log's date (the release out
    then), unless its TurboMind lines rule that release out; else the newest release its lines allow."""
    bounds = _bounds(log)
    if log.release_version or not bounds:
        return resolve(
            engine_name="LMDeploy", stated=log.engine_version, stated_line=log.engine_version_line,
            hint=None, first_date=log.first_date, calendar=CALENDAR,
        )  # fmt: skip
    lines = "; ".join(line for _, _, line in bounds)
    if log.first_date:
        dated = release_on(CALENDAR, date.fromisoformat(log.first_date))
        if dated is not None and _within(dated, bounds):
            return ResolvedVersion(
                text=dated, approximate=True, source=VersionSource.LOG_DATES,
                detail=f"from the log's dates: {log.first_date} → LMDeploy {dated} or older (its lines agree: {lines})",
            )  # fmt: skip
    latest = _latest_within(bounds)
    if latest is None:
        return resolve(
            engine_name="LMDeploy", stated=None, stated_line=None, hint=None, first_date=None, calendar=CALENDAR
        )
    return ResolvedVersion(
        text=latest, approximate=True, source=VersionSource.LOG,
        detail=f"from its lines: {lines} → the newest release they allow, {latest} (--engine-version for another)",
    )  # fmt: skip

# §2: the architectures TurboMind serves (`lmdeploy/turbomind/supported_models.py`); others go to the
# PyTorch engine (`autoget_backend`). v0.14.0 (PR #4557) rebuilt TurboMind's modelling and narrowed it.
_TURBOMIND_V013 = frozenset({
    "BaiChuanForCausalLM", "BaichuanForCausalLM", "GptOssForCausalLM", "InternLMForCausalLM",
    "InternLM2ForCausalLM", "InternLM3ForCausalLM", "LlamaForCausalLM", "QWenLMHeadModel", "Qwen2ForCausalLM",
    "Qwen2MoeForCausalLM", "Qwen2VLForConditionalGeneration", "Qwen2_5_VLForConditionalGeneration",
    "Qwen3ForCausalLM", "Qwen3MoeForCausalLM", "Qwen3_5ForConditionalGeneration",
    "Qwen3_5MoeForConditionalGeneration", "MistralForCausalLM", "LlavaLlamaForCausalLM",
    "LlavaMistralForCausalLM", "LlavaForConditionalGeneration", "InternLMXComposer2ForCausalLM",
    "InternVLChatModel", "InternVLForConditionalGeneration", "InternS1ForConditionalGeneration",
    "MultiModalityCausalLM", "DeepseekV2ForCausalLM", "MiniCPMV", "ChatGLMModel",
    "ChatGLMForConditionalGeneration", "Glm4MoeLiteForCausalLM", "MixtralForCausalLM", "MolmoForCausalLM",
})  # fmt: skip
_TURBOMIND_V014 = frozenset({
    "Qwen2ForCausalLM", "Qwen2MoeForCausalLM", "Qwen2VLForConditionalGeneration",
    "Qwen2_5_VLForConditionalGeneration", "Qwen3ForCausalLM", "Qwen3MoeForCausalLM",
    "Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration",
    "InternS2PreviewForConditionalGeneration", "InternS2MobiusForConditionalGeneration", "InternVLChatModel",
    "InternVLForConditionalGeneration", "InternS1ForConditionalGeneration", "LlamaForCausalLM",
    "InternLM2ForCausalLM", "InternLM3ForCausalLM", "Glm4MoeLiteForCausalLM", "GptOssForCausalLM",
    "MixtralForCausalLM",
})  # fmt: skip
TURBOMIND_ARCHITECTURE_ERAS: Eras[frozenset[str]] = Eras((
    Era("", _TURBOMIND_V013, "turbomind/supported_models.py v0.13.0 (the list through v0.13)"),
    Era("0.14.0", _TURBOMIND_V014, "turbomind/supported_models.py v0.14.0 (PR #4557; the same through the 0.18.0 wheel)"),
))
