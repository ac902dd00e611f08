"""`kvtop explain` for llama.cpp: rebuild the cells a llama-server log printed (docs/engines/llamacpp.md §3, §4).

llama.cpp sizes its cache from `-c`, `-np` and `--kv-unified`, never from memory: the cells are rebuilt
from the launch (or the `llama_context:` lines, which state what it asked for), and each printed cache
size is checked against cells × layers × the model's row bytes in the printed K and V types. No free
memory is needed, so a log is `match` or `mismatch` to the cell.
"""

from __future__ import annotations

from kvtop.domain.engine_log import EngineLog
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.cause_search import changed
from kvtop.domain.engines.llamacpp import kv_buffers
from kvtop.domain.engines.llamacpp.cells import cache_cells
from kvtop.domain.engines.llamacpp.eras import KV_LOG_DIALECTS, first_build
from kvtop.domain.engines.llamacpp.ggml_types import KV_CACHE_TYPES, cache_type
from kvtop.domain.engines.llamacpp.log_records import DeviceMemory, KvCacheSummary, LlamacppRankLog
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.explain_estimate import EstimateRun
from kvtop.domain.explain_request import ExplainRequest
from kvtop.domain.explanation import (
    PLACEHOLDER_GPU_BYTES,
    Explanation,
    Logged,
    PoolPart,
    PoolSizeCheck,
    judge,
    logged_total_first,
    logged_total_said,
    steps_said,
)
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.ledger import predict
from kvtop.domain.ledger_values import Ledger
from kvtop.domain.model import LayerKind, ModelSpec

record_type = LlamacppRankLog
# ggml's GPU backends by their device names (ggml_backend_dev_name: `CUDA0`, `ROCm0`, `Vulkan0`, `Metal`, `SYCL0`,
# `MUSA0`, `CANN0`): `CPU` and the accelerators beside it (`BLAS`, `AMX`, `RPC[…]`) hold no GPU memory
GPU_BACKENDS = ("CUDA", "ROCm", "Vulkan", "Metal", "SYCL", "MUSA", "CANN")


def _first(log: EngineLog, name: str) -> object | None:
    return log.first(LlamacppRankLog, lambda r: getattr(r, name)[0] if getattr(r, name) else None)


def _caches(log: EngineLog) -> tuple[KvCacheSummary, ...]:
    return tuple(cache for rank in log.ranks(LlamacppRankLog) for cache in rank.kv_caches)


def _full_cache(log: EngineLog) -> KvCacheSummary | None:
    return next((cache for cache in _caches(log) if not cache.sliding), None)


def _log_build(log: EngineLog) -> tuple[int | None, str, str | None]:
    """(the build whose rules read `log`, how kvtop knows, the builds that names): its build line, else the
    wording of its KV summary (the era's first build, approximate), else None (the latest rules)."""
    build = _first(log, "builds")
    if isinstance(build, int):
        return build, f"build b{build}, from the log's build line", f"b{build}"
    caches = _caches(log)
    if caches and caches[0].cells is None:
        era = KV_LOG_DIALECTS[0]
    elif caches and caches[0].streams is None:
        era = KV_LOG_DIALECTS[1]
    else:
        return None, "no build line: the latest rules", None
    following = KV_LOG_DIALECTS[KV_LOG_DIALECTS.index(era) + 1]
    until = following.since  # 'b5400'
    first = first_build(era)
    builds = f"builds {era.since}–b{first_build(following) - 1}" if first else f"builds before {until}"
    return first, f"no build line: its `{era.value}` KV summary wording (before ~{until})", builds


def log_build(log: EngineLog) -> tuple[int | None, str]:
    """The build whose rules read `log`, and how kvtop knows (`_log_build`)."""
    build, why, _ = _log_build(log)
    return build, why


def resolve_version(log: EngineLog) -> ResolvedVersion:
    """The build, named in `build` and said in `detail` (a build line's, or an era's range read from the KV
    wording: 'builds before b5400'); `text` stays unset and the rules are chosen by `log_build`."""
    build, why, builds = _log_build(log)
    if build is None:
        return ResolvedVersion(detail=why)
    return ResolvedVersion(source=VersionSource.LOG, detail=why, approximate="wording" in why, build=builds)


def missing_facts(log: EngineLog) -> tuple[str, ...]:
    return () if _full_cache(log) is not None else ("llama_kv_cache size",)


def logged_token_capacity(log: EngineLog) -> int | None:
    """The full-attention cache's cells over every stream (the older `KV self size` line: `n_ctx`)."""
    cache = _full_cache(log)
    if cache is None:
        return None
    if cache.total_cells is not None:
        return cache.total_cells
    n_ctx = _first(log, "n_ctx")
    return n_ctx if isinstance(n_ctx, int) else None


def log_kv_dtype(log: EngineLog) -> str | None:
    """K's type as printed (`f16`, `q8_0`): llama.cpp's `-ctk`."""
    cache = _full_cache(log)
    return cache.k_type if cache is not None and cache.k_type in KV_CACHE_TYPES else None


def logged_figures(log: EngineLog, settings: LaunchSettings, version: ResolvedVersion | None = None) -> Logged:
    cache = _full_cache(log)
    slots, per_slot = _first(log, "n_seq_max"), _first(log, "slot_ctx")  # the slot's own line, else n_ctx_seq
    per_slot = per_slot if isinstance(per_slot, int) else _first(log, "n_ctx_seq")
    return Logged(
        token_capacity=logged_token_capacity(log),
        context_length=per_slot if isinstance(per_slot, int) else None,
        max_running_requests=slots if isinstance(slots, int) else (cache.seqs if cache else None),
        ranks_seen=1 if cache is not None else 0,
    )  # fmt: skip


def logged_settings(log: EngineLog, settings: LaunchSettings) -> LaunchSettings:
    """The launch as the log states it: its build (`log_build`), printed slots, unified stream, micro-batch and K/V
    types fill what the settings leave unset (the `llama_context:` lines state what llama.cpp was asked for), so
    the ledger is solved by the rules of the build that read the log."""
    update: dict[str, object] = {}
    build = log_build(log)[0]
    if settings.engine_version is None and build is not None:
        update["engine_version"] = f"b{build}"
    flags = dict(settings.flags)
    cache = _full_cache(log)
    n_ctx, slots, unified, ubatch = (_first(log, n) for n in ("n_ctx", "n_seq_max", "kv_unified", "n_ubatch"))
    if settings.context_length is None and isinstance(n_ctx, int):
        update["context_length"] = n_ctx
    elif settings.context_length is None and cache is not None and cache.total_cells:
        update["context_length"] = cache.total_cells  # no `n_ctx` line: the cells it printed
    if settings.max_running_requests is None and isinstance(slots, int):
        update["max_running_requests"] = slots
    elif settings.max_running_requests is None and cache is not None and cache.seqs:
        update["max_running_requests"] = cache.seqs
    if isinstance(unified, bool) and not any(k in flags for k in ("kvu", "kv-unified", "no-kv-unified")):
        flags["kv-unified" if unified else "no-kv-unified"] = True
    if isinstance(ubatch, int) and not any(k in flags for k in ("ub", "ubatch-size")):
        flags["ub"] = str(ubatch)
    if cache is not None:
        if settings.kv_cache_dtype == "auto" and cache.k_type in KV_CACHE_TYPES:
            update["kv_cache_dtype"] = cache.k_type
        if not any(k in flags for k in ("ctv", "cache-type-v")) and cache.v_type in KV_CACHE_TYPES:
            flags["ctv"] = cache.v_type
    return settings.model_copy(update={**update, "flags": flags})


def logged_gpu(log: EngineLog) -> DeviceMemory | None:
    """The one GPU the log's `device_info:` lists (its total and free memory before the load, measured); None where
    it lists none, or several (a split over GPUs: not modelled, `budget._offload_notes`)."""
    devices = [d for rank in log.ranks(LlamacppRankLog) for d in rank.devices if d.device.startswith(GPU_BACKENDS)]
    return devices[0] if len(devices) == 1 else None


def _notes(log: EngineLog, model: ModelSpec, settings: LaunchSettings) -> list[str]:
    """Where the log's KV buffers are, beside the rule's host/GPU split (kv_buffers.py)."""
    buffers = tuple(buffer for rank in log.ranks(LlamacppRankLog) for buffer in rank.kv_buffers)
    repeating, offloaded = _first(log, "repeating_on_gpu"), _first(log, "offloaded_layers")
    found = kv_buffers.check(model, settings, _caches(log), buffers, repeating if isinstance(repeating, int) else None,
                             offloaded if isinstance(offloaded, tuple) else None, log_build(log)[0])  # fmt: skip
    return [found.note()] if found is not None and (found.predicted_host or found.host_high) else []


def slot_check(log: EngineLog, ledger: Ledger) -> tuple[Ledger, list[str]]:
    """The slot context the server printed (`new slot, n_ctx = N`, measured) against the ledger's slot step (the
    rule's for the log's build, slot_context.py): where they agree the step says measured; where not, a note names
    both."""
    printed = _first(log, "slot_ctx")
    if not isinstance(printed, int):
        return ledger, []
    step = next((step for step in ledger.engine.steps if step.role == "slot_context"), None)
    if step is None or step.value is None:
        return ledger, []
    rule = int(step.value)  # the ledger's slot figure, by the rules of the log's build (`logged_settings`)
    line = f"`new slot, n_ctx = {printed}`"
    if printed != rule:
        return ledger, [f"slot context: the log prints {line}, the rule gives {rule:,} (its step says why): "
                        "the training context kvtop read (max_position_embeddings) or the build may not be the "
                        "run's, or the run set a --kv-unified-per-slot cap (ggml-org/llama.cpp PR #24124) the launch "
                        "in hand does not state"]  # fmt: skip
    read = {"measured": True, "source": "measured", "note": f"the log's {line}, as the rule gives ({step.note})"}
    return steps_said(ledger, lambda step: read if step.role == "slot_context" else None), []


def explain(request: ExplainRequest) -> Explanation:
    """The logged capacity rebuilt by this engine's rules from the log's own figures (`ExplainRequest`)."""
    log, model, settings, gpu_total_bytes, gpu_name, load_mtp = request.log, request.model, request.settings, request.gpu_total_bytes, request.gpu_name, request.load_mtp
    version = resolve_version(log)
    logged = logged_figures(log, settings)
    if logged.token_capacity is None:
        return Explanation(engine="llamacpp", engine_version=version, logged=logged, verdict="insufficient",
                           missing=("`llama_kv_cache: size = … (N cells, …)` (or `KV self size` with `n_ctx`)",))  # fmt: skip
    settings = logged_settings(log, settings)  # the log's build picks the cells below (`log_build`)
    device = logged_gpu(log)
    line = f"`{device.device} : {device.description} ({device.total.text} MiB, …)`" if device else ""
    stated, device_notes = logged_total_first(device.total if device else None, line, gpu_total_bytes,
                                              request.gpu_total_source, gpu_name, request.gpu_total_origin)  # fmt: skip
    free = request.given.free_before_load_bytes or (device.free.value_bytes if device else None)
    if device is not None:
        gpu_name = gpu_name or device.description
        device_notes.insert(0, f"GPU {device.description} ({device.device}): the log's device_info line, "
                               f"{device.total.text} MiB total, {device.free.text} MiB free before the load (measured)")
    total = stated or gpu_total_bytes or PLACEHOLDER_GPU_BYTES
    if stated is not None or gpu_total_bytes is not None:  # the GPU known: whether it fits is solved on plan's terms
        source, origin = request.solved_total(stated)
        run = EstimateRun(model, settings, total, gpu_name, load_mtp, request.given.desktop, source,
                          gpu_total_origin=origin)  # fmt: skip
        ledger = run.solve(MeasuredInputs(gpu_total_bytes=stated, free_before_load_bytes=free))
        ledger = logged_total_said(ledger, line, stated) if stated is not None else ledger
    else:
        ledger = predict(model, settings, gpu_total_bytes=PLACEHOLDER_GPU_BYTES, gpu_name=gpu_name, load_mtp=load_mtp)
    ledger, slot_notes = slot_check(log, ledger)
    # the cells -c asks for, whether or not they fit beside the weights (the log shows they were allocated)
    cells = cache_cells(model, settings, log_build(log)[0]).total_cells
    result = judge("llamacpp", logged, ledger, cells, cells, settings, None, total, kv_memory_logged=True,
                   predicted_tokens=cells)  # fmt: skip
    checks = pool_size_checks(log, model, settings, load_mtp)
    notes = [*device_notes, *_notes(log, model, settings), *slot_notes]
    swa = next((cache for cache in _caches(log) if cache.sliding), None)
    predicted_swa = ledger.engine.swa_token_capacity
    if swa is not None and swa.total_cells is not None and predicted_swa is not None and swa.total_cells != predicted_swa:
        notes.append(f"sliding-window cache: the log prints {swa.total_cells:,} cells, the rule gives {predicted_swa:,} "
                     "(GGML_PAD(min(n_ctx_seq, n_swa × slots + n_ubatch), 256)); pass -ub as launched")  # fmt: skip
    bad = [check for check in checks if not check.within_rounding]
    layers = layer_disagreements(log, model)
    if (bad or layers) and result.verdict == "match":
        gap = sum(check.logged_bytes - check.predicted_bytes for check in bad)
        cause = "; ".join([*layers, *(["the printed cache sizes differ from cells × layers × row bytes"] if bad else [])])
        return result.model_copy(update={"verdict": "mismatch", "gap_tokens": 0, "pool_checks": checks, "pool_gap_bytes": gap,
                                         "notes": tuple(notes), "engine_version": version,
                                         "cause": f"another model ran: {cause}"})  # fmt: skip
    return result.model_copy(update={"pool_checks": checks, "notes": tuple(notes), "engine_version": version})


def _predicted(model: ModelSpec, cache: KvCacheSummary, cells: int, layers: int, part: str) -> int:
    """cells (every stream) × Σ layers ggml_row_size(type, n_embd_{k,v}_gqa) for the layers of this cache."""
    kind = LayerKind.SLIDING if cache.sliding else LayerKind.FULL
    members = [i for i, k in enumerate(model.layer_attention) if k is kind] or list(range(model.num_layers))
    total = 0
    for layer in members[:layers]:
        g = model.geometry(layer)
        width = g.kv_heads * (g.head_dim if part == "K" else g.v_head_dim)
        ggml = cache_type(cache.k_type if part == "K" else cache.v_type, "-ctk" if part == "K" else "-ctv")
        total += ggml.row_bytes(width)
    return cells * total


def pool_size_checks(
    log: EngineLog, model: ModelSpec, settings: LaunchSettings, load_mtp: bool
) -> tuple[PoolSizeCheck, ...]:
    """Each printed cache's K and V size against cells × layers × the model's row bytes in the printed types."""
    found: list[PoolSizeCheck] = []
    for cache in _caches(log):
        # the older `KV self size` line prints no cells: its cache's cells are the log's n_ctx
        cells = cache.total_cells if cache.total_cells is not None else logged_token_capacity(log)
        if not cells or cache.k_type not in KV_CACHE_TYPES or cache.v_type not in KV_CACHE_TYPES:
            continue
        kind = LayerKind.SLIDING if cache.sliding else LayerKind.FULL
        layers = cache.layers or sum(1 for k in model.layer_attention if k is kind)
        k, v = (PoolPart.SWA_K, PoolPart.SWA_V) if cache.sliding else (PoolPart.K, PoolPart.V)
        for name, part, printed, dtype in ((k, "K", cache.k_size, cache.k_type), (v, "V", cache.v_size, cache.v_type)):
            predicted = _predicted(model, cache, cells, layers, part)
            found.append(PoolSizeCheck(
                name=name, tokens=cells, rows=cells,
                logged_text=printed.text, logged_bytes=printed.value_bytes, predicted_bytes=predicted,
                predicted_bytes_per_token=predicted // cells, kv_dtype=dtype, within_rounding=printed.contains(predicted),
                unit="MiB",
            ))  # fmt: skip
    return tuple(found)


def layer_disagreements(log: EngineLog, model: ModelSpec) -> list[str]:
    """Each printed cache whose layer count is not the model's layers of that kind (a size can agree by chance)."""
    found: list[str] = []
    for cache in _caches(log):
        kind = LayerKind.SLIDING if cache.sliding else LayerKind.FULL
        held = sum(1 for k in model.layer_attention if k is kind)
        if cache.layers is not None and cache.layers != held:
            found.append(f"the log's {'sliding-window' if cache.sliding else 'full-attention'} cache holds "
                         f"{cache.layers} layers; {model.name} has {held}")  # fmt: skip
    return found


def cause_candidates(log: EngineLog, model: ModelSpec, settings: LaunchSettings) -> list[tuple[str, LaunchSettings]]:
    """Another slot count, the other stream layout, or another K type."""
    found: list[tuple[str, LaunchSettings | None]] = [
        (f"-np {slots}", changed(settings, max_running_requests=slots)) for slots in (1, 2, 4, 8)
        if slots != settings.max_running_requests
    ]  # fmt: skip
    flags = dict(settings.flags)
    unified = "kv-unified" in flags
    other = {k: v for k, v in flags.items() if k not in ("kv-unified", "kvu", "no-kv-unified")}
    other["no-kv-unified" if unified else "kv-unified"] = True
    found.append(("--no-kv-unified" if unified else "--kv-unified", settings.model_copy(update={"flags": other})))
    found += [(f"-ctk {t}", changed(settings, kv_cache_dtype=t)) for t in ("f16", "q8_0", "q4_0") if t != settings.kv_cache_dtype]
    return [(what, candidate) for what, candidate in found if candidate is not None]

