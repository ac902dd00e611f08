"""`kvtop explain` for LMDeploy: rebuild the block count a log printed (docs/engines/lmdeploy.md §7, §8).

TurboMind prints its block size and count (`[BlockManager] block_size = … MB`, `max_block_count = N`)
but, before v0.15, not the free memory it divided: the geometry is checked against the printed block
size, and the count is rebuilt when the free memory is given (`--free-after-load`), or from the total
for v0.1.0–v0.2.1 (a share of total memory), or at once for a block-count `cache_max_entry_count`.
Otherwise the log does not allow a match, and kvtop says which free memory the count implies. The
PyTorch engine prints its `CacheConfig(… num_gpu_blocks=N …)`, and at DEBUG the free memory it saw.
"""

from __future__ import annotations

import math

from kvtop.domain.engine_log import EngineLog, Measured
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.cause_search import changed
from kvtop.domain.engines.lmdeploy.budget_pytorch import block_bytes as pytorch_block_bytes
from kvtop.domain.engines.lmdeploy.eras import (
    PYTORCH_ALIGNED_SINCE,
    block_len_release,
    default_ratio,
    resolve_version,
    share_ambiguity,
    since,
    turbomind_block_len,
    turbomind_share,
)
from kvtop.domain.engines.lmdeploy.flags import quant_policy
from kvtop.domain.engines.lmdeploy.log_records import LmdeployRankLog
from kvtop.domain.engines.lmdeploy.memory import resolve_backend
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.errors import KvtopError
from kvtop.domain.explain_estimate import EstimateRun, free_before_load_estimate, rebuild_with_estimate
from kvtop.domain.explain_request import ExplainRequest
from kvtop.domain.explanation import (
    PLACEHOLDER_GPU_BYTES,
    Explanation,
    Logged,
    PoolPart,
    PoolSizeCheck,
    judge,
)
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.model import ModelSpec
from kvtop.domain.wording import gib, gib_figure, gib_range

record_type = LmdeployRankLog
_FREE_MISSING = (
    "the free memory TurboMind divided (least over the TP ranks, after the weights): it prints none before "
    "v0.15; pass --free-after-load (e.g. from nvidia-smi or torch.cuda.mem_get_info once the weights are in)"
)
_PYTORCH_FREE_MISSING = (
    "the free memory the PyTorch engine divided: `minimal free gpu memory: X mb` (printed with --log-level DEBUG), "
    "or --free-after-load"
)
_TOTAL_MISSING = "the GPU's total memory (v0.1.0–v0.2.1 take a share of total memory): pass --gpu-memory or --gpu"


def _version(log: EngineLog, settings: LaunchSettings) -> ResolvedVersion:
    return ResolvedVersion(text=settings.engine_version) if settings.engine_version else resolve_version(log)


def _ranks(log: EngineLog) -> tuple[LmdeployRankLog, ...]:
    return log.ranks(LmdeployRankLog)


def _counts(log: EngineLog) -> list[int]:
    return [count for rank in _ranks(log) for count in rank.max_block_counts]


def _cache_config_blocks(log: EngineLog) -> tuple[int, int | None] | None:
    """(num_gpu_blocks, block_size) of the PyTorch engine's first `CacheConfig(…)`."""
    config = log.first(LmdeployRankLog, lambda r: r.cache_configs[0] if r.cache_configs else None)
    return (config.num_gpu_blocks, config.block_size) if config else None


def _block_len(log: EngineLog, settings: LaunchSettings, version: ResolvedVersion) -> int:
    config = _cache_config_blocks(log)
    if config and config[1]:
        return config[1]
    return settings.page_size or turbomind_block_len(version)


def missing_facts(log: EngineLog) -> tuple[str, ...]:
    """Headline facts the log does not state."""
    facts = {
        "block_size": log.first(LmdeployRankLog, lambda r: r.block_sizes or r.cache_configs or None),
        "max_block_count": log.first(LmdeployRankLog, lambda r: r.max_block_counts or r.cache_configs or None),
        "free_memory": log.first(LmdeployRankLog, lambda r: r.free_memory or r.object_cache_budgets or None),
    }
    absent = [name for name, value in facts.items() if value is None]
    return (*absent, *(() if log.server_args else ("engine_config",)))


def logged_token_capacity(log: EngineLog, settings: LaunchSettings | None = None) -> int | None:
    """The one answer to "what capacity did this log state" (`explain`'s `Logged` and `--engine-log` both read it,
    through `_stated`): v0.12+'s `max cached tokens: N` (the least over the ranks), else the PyTorch engine's
    `CacheConfig(… num_gpu_blocks=N …)` or TurboMind's `max_block_count = N` (least over the ranks) × the block
    length. Without `settings`, the log alone: its printed `cache_block_seq_len`, else the release's default."""
    if settings is None:
        block = log.server_args.get("cache_block_seq_len")
        settings = LaunchSettings(engine="lmdeploy", page_size=block if isinstance(block, int) and block > 0 else None)
    return _stated(log, _block_len(log, settings, _version(log, settings)))[0]


def log_kv_dtype(log: EngineLog) -> str | None:
    """LMDeploy states its KV quantisation as `quant_policy` in its printed config (read as settings)."""
    return None


def _stated(log: EngineLog, block_len: int) -> tuple[int | None, int | None]:
    """(tokens, blocks) the log states (`logged_token_capacity`)."""
    counts = _counts(log)
    config = _cache_config_blocks(log)
    blocks = config[0] if config else (min(counts) if counts else None)
    tokens = blocks * block_len if blocks is not None else None
    cached = [count for rank in _ranks(log) for count in rank.max_cached_tokens]
    if cached:
        tokens = min(cached)
        if blocks is None and tokens % block_len == 0:
            blocks = tokens // block_len
    return tokens, blocks


def _logged(log: EngineLog, block_len: int, free: Measured | None) -> Logged:
    """The blocks and tokens the log states: v0.12+'s `max cached tokens: N` is the engine's own token figure
    (blocks × block length × attention CP, §2.3); before it, the blocks × the block length."""
    counts = _counts(log)
    cached = [count for rank in _ranks(log) for count in rank.max_cached_tokens]
    tokens, blocks = _stated(log, block_len)
    return Logged(
        token_capacity=tokens, num_gpu_blocks=blocks,
        free_after_load_bytes=free.value_bytes if free else None,
        ranks_seen=max(len(counts), len(cached), sum(len(r.cache_configs) for r in _ranks(log))),
    )  # fmt: skip


def logged_figures(log: EngineLog, settings: LaunchSettings, version: ResolvedVersion | None = None) -> Logged:
    """What the log states, read without a model. The block length follows the release `settings` name, else the
    log's own (`_version`); `version` (how a reader found it) is not needed: no reading here rests on an assumption."""
    release = _version(log, settings)
    return _logged(log, _block_len(log, settings, release), _logged_free(log))


def _logged_free(log: EngineLog) -> Measured | None:
    """The free memory the engine printed: v0.15+ TurboMind's object-cache line, the PyTorch engine's DEBUG line."""
    budget = log.first(LmdeployRankLog, lambda r: r.object_cache_budgets[0] if r.object_cache_budgets else None)
    if budget is not None:
        return budget.free
    return log.first(LmdeployRankLog, lambda r: r.free_memory[0] if r.free_memory else None)


def _truncation_notes(log: EngineLog, logged: Logged) -> list[str]:
    """TurboMind's printed `session_len` truncation states the token capacity: say whether it agrees."""
    cut = log.first(LmdeployRankLog, lambda r: r.session_truncations[0] if r.session_truncations else None)
    if cut is None or logged.token_capacity is None:
        return []
    asked = f"{cut.requested:,} → " if cut.requested else ""
    agrees = "= the blocks × block length" if cut.truncated == logged.token_capacity else (
        f"≠ the blocks × block length {logged.token_capacity:,}")  # fmt: skip
    return [f"the log truncates session_len {asked}{cut.truncated:,} {agrees}"]


def _implied_free(blocks: int, block_bytes: int, ratio: float) -> str:
    """TurboMind's `size_t(free × ratio) // block = N` read backwards: free ∈ [N·B/r, (N+1)·B/r)."""
    low, high = math.ceil(blocks * block_bytes / ratio), math.ceil((blocks + 1) * block_bytes / ratio)
    digits = 2 if gib_figure(low) != gib_figure(high) else 3  # a block under 0.01 GiB: not '59.79–59.79 GiB'
    return (f"{blocks:,} blocks of {block_bytes:,} B at ratio {ratio:g} imply {gib_range(low, high, digits)} free "
            "after the weights (least over the ranks)")  # fmt: skip


def explain(request: ExplainRequest) -> Explanation:
    """The logged capacity rebuilt by this engine's rules from the log's own figures (`ExplainRequest`)."""
    log, model, settings, gpu_total_bytes, gpu_name, given, load_mtp = request.log, request.model, request.settings, request.gpu_total_bytes, request.gpu_name, request.given, request.load_mtp
    # the release the request resolved (the command: the flag's, else the log's); the log's only where none was
    version = request.version if request.version.text is not None else resolve_version(log)
    settings = settings.model_copy(update={"engine_version": version.text})
    backend, _ = resolve_backend(model, settings, version)
    block_len = _block_len(log, settings, version)
    if settings.page_size is None:
        settings = settings.model_copy(update={"page_size": block_len})
    printed_free = _logged_free(log)
    logged = _logged(log, block_len, printed_free)
    notes: list[str] = _truncation_notes(log, logged)
    ratio = settings.cache_max_entry_count or (default_ratio(version).value if backend == "turbomind" else 0.8)
    share = turbomind_share(version).value if backend == "turbomind" else "free"
    missing: list[str] = []
    if logged.token_capacity is None:
        missing.append("`[BlockManager] max_block_count = N` (TurboMind) or `CacheConfig(… num_gpu_blocks=N …)`")
    free: Measured | int | None = printed_free
    if given.free_after_load_bytes is not None:
        free = given.free_after_load_bytes
        notes.append(f"free after the weights: --free-after-load {gib(given.free_after_load_bytes)}, not the log")
    needs_free = ratio < 1 and share != "total" and not settings.num_gpu_blocks_override
    if needs_free and free is None and gpu_total_bytes is not None and not missing:
        # TurboMind before v0.15 prints no free memory: estimated as `plan` does, the weights predicted
        run = EstimateRun(model, settings, gpu_total_bytes, gpu_name, load_mtp, desktop=given.desktop,
                          gpu_total_origin=request.gpu_total_origin)
        estimate = free_before_load_estimate(run)
        at = lambda pre: MeasuredInputs(free_before_load_bytes=pre)  # noqa: E731
        return _release_untold(request, rebuild_with_estimate("lmdeploy", logged, run, estimate, at, tuple(notes)))
    if needs_free and free is None:
        missing.append(_FREE_MISSING if backend == "turbomind" else _PYTORCH_FREE_MISSING)
    if ratio < 1 and share == "total" and gpu_total_bytes is None:
        missing.append(_TOTAL_MISSING)
    if missing:
        geometry = _geometry_ledger(model, settings, gpu_name)
        block = _block_bytes_for_implied(log, geometry)
        if logged.num_gpu_blocks and needs_free and backend == "turbomind" and ratio < 1 and block:
            notes.append(_implied_free(logged.num_gpu_blocks, block, ratio))
        return Explanation(
            engine="lmdeploy", logged=logged, verdict="insufficient", missing=tuple(missing), notes=tuple(notes),
            kv_bytes_per_token=geometry.kv_bytes_per_token if geometry else None,
        )  # fmt: skip
    total = gpu_total_bytes or PLACEHOLDER_GPU_BYTES

    def solve(free_bytes: int | None) -> Ledger:
        measured = MeasuredInputs(free_after_load_bytes=free_bytes)
        return predict(model, settings, gpu_total_bytes=total, gpu_name=gpu_name, measured=measured, load_mtp=load_mtp)

    room: int | None
    if isinstance(free, Measured):
        central, low, high = solve(free.value_bytes), solve(free.low_bytes), solve(free.high_bytes)
        room = free.high_bytes
    else:
        central = solve(free)
        low = high = central
        room = free if isinstance(free, int) else None
    result = judge(
        "lmdeploy", logged, central, low.token_capacity, high.token_capacity, settings, room, gpu_total_bytes,
        kv_memory_logged=False,
    )  # fmt: skip
    return _release_untold(request, result.model_copy(update={"notes": tuple(notes)}))


def _release_untold(request: ExplainRequest, result: Explanation) -> Explanation:
    """A mismatch under the newest release the log's lines allow is no verdict where they also allow releases whose
    TurboMind sized its pool by another rule (`eras.share_ambiguity`: v0.1.0's share of total memory against v0.2.6's
    of free memory): insufficient, naming --engine-version. A typed or logged release is judged as it is."""
    version = request.version
    from_lines = version.text is None or (version.source is VersionSource.LOG and version.approximate)
    if result.verdict != "mismatch" or not from_lines or request.log.release_version:
        return result
    untold = share_ambiguity(request.log, _block_len(request.log, request.settings, request.version))
    if untold is None:
        return result
    return Explanation(
        engine="lmdeploy", logged=result.logged, verdict="insufficient", missing=(untold,), notes=result.notes,
        kv_bytes_per_token=result.kv_bytes_per_token,
    )  # fmt: skip


def version_with_model(
    log: EngineLog, model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion
) -> ResolvedVersion:
    """A release read off the log's lines alone (no version line, no date) narrowed by its integer-MiB TurboMind
    block (`block_size_ >> 20`, before v0.8.0): where that is the model's KV at the other era's block length (128
    tokens before v0.3.0, 64 from it) and not at `version`'s, the newest release its lines allow at that length
    (`eras.block_len_release`); else `version`. InternStudio's v0.1.0 tutorial: 'block_size = 64 MB' is 128 ×
    524,288 B of InternLM-7B's KV, not 64 ×."""
    sizes = [size for rank in _ranks(log) for size in rank.block_sizes]
    typed_block = settings.page_size or log.server_args.get("cache_block_seq_len")
    if not (version.approximate and version.source is VersionSource.LOG) or typed_block or not sizes:
        return version
    geometry = _geometry_ledger(model, settings.model_copy(update={"engine_version": version.text}), None)
    if sizes[0].decimals != 0 or geometry is None or geometry.kv_bytes_per_token <= 0:
        return version
    printed, per_token = int(sizes[0].text), geometry.kv_bytes_per_token
    read = turbomind_block_len(version)
    other = 128 if read == 64 else 64
    if (read * per_token) >> 20 == printed or (other * per_token) >> 20 != printed:
        return version
    return block_len_release(log, other) or version


def _geometry_ledger(model: ModelSpec, settings: LaunchSettings, gpu_name: str | None) -> Ledger | None:
    """A ledger for its KV geometry only (memory does not matter here); None if the settings do not solve."""
    try:
        return predict(model, settings, gpu_total_bytes=PLACEHOLDER_GPU_BYTES, gpu_name=gpu_name)
    except KvtopError:  # the geometry is a courtesy: the verdict already says what is missing
        return None


def _block_bytes_for_implied(log: EngineLog, ledger: Ledger | None) -> int:
    """TurboMind's block bytes: the model's where they print as the log's block size, else the printed size."""
    predicted = ledger.kv_bytes_per_token * ledger.engine.page_size if ledger else 0
    printed = log.first(LmdeployRankLog, lambda r: r.block_sizes[0] if r.block_sizes else None)
    if printed is None or printed.contains(predicted):
        return predicted
    return printed.value_bytes


def pool_size_checks(
    log: EngineLog, model: ModelSpec, settings: LaunchSettings, load_mtp: bool
) -> tuple[PoolSizeCheck, ...]:
    """TurboMind's printed block size against the model's block bytes at these settings (§2.1)."""
    printed = log.first(LmdeployRankLog, lambda r: r.block_sizes[0] if r.block_sizes else None)
    if printed is None:
        return ()
    version = _version(log, settings)
    settings = settings.model_copy(update={"engine_version": version.text})
    block_len = _block_len(log, settings, version)
    ledger = predict(
        model, settings.model_copy(update={"page_size": block_len}), gpu_total_bytes=PLACEHOLDER_GPU_BYTES,
        load_mtp=load_mtp,
    )  # fmt: skip
    rank = ledger.ranks[0]
    if resolve_backend(model, settings, version)[0] == "pytorch":
        predicted = pytorch_block_bytes(model, rank.kv, block_len, since(PYTORCH_ALIGNED_SINCE, version))
    else:
        predicted = rank.kv_bytes_per_token * block_len
    return (
        PoolSizeCheck(
            name=PoolPart.BLOCK, tokens=block_len, rows=block_len, logged_text=printed.text, logged_bytes=printed.value_bytes,
            predicted_bytes=predicted, predicted_bytes_per_token=rank.kv_bytes_per_token,
            kv_dtype=ledger.kv_format, within_rounding=printed.contains(predicted), unit="MiB",
        ),
    )  # fmt: skip


def cause_candidates(
    log: EngineLog, model: ModelSpec, settings: LaunchSettings
) -> list[tuple[str, LaunchSettings]]:
    """Another block length, KV quantisation, TP, or the other era's share (total before v0.2.2, free after)."""
    version = _version(log, settings)
    block = _block_len(log, settings, version)
    found: list[tuple[str, LaunchSettings | None]] = [
        (f"block length {size} (not {block})", changed(settings, page_size=size)) for size in (32, 64, 128) if size != block
    ]  # fmt: skip
    policy = quant_policy(settings.kv_cache_dtype)
    found += [
        (f"--quant-policy {other} (not {policy})", changed(settings, kv_cache_dtype=str(other)))
        for other in (0, 4, 8) if other != policy
    ]  # fmt: skip
    found += [
        (f"TP {tp} (not {settings.tp})", changed(settings, tp=tp, dp=1, ep=1))
        for tp in (1, 2, 4, 8) if tp != settings.tp and model.num_attention_heads % tp == 0
    ]  # fmt: skip
    share = turbomind_share(version).value
    if share == "free":
        found.append(("LMDeploy v0.1.0–v0.2.1's share of total memory", changed(settings, engine_version="0.2.1")))
    elif share == "total":
        found.append(("LMDeploy v0.2.2+'s share of free memory", changed(settings, engine_version="0.14.0")))
    return [(what, candidate) for what, candidate in found if candidate is not None]
