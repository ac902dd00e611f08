"""`kvtop explain` for vLLM: rebuild the logged KV figure from the KV memory each worker logged.

vLLM logs the KV memory each worker had (`Available KV cache memory`, the startup ledger's `kv cache
memory in use`, or V0's `kv_cache_size` / "the rest of the memory reserved for KV Cache"), two
decimals of GiB, and sizes blocks from it. Each worker sizes its blocks from its own memory and its
own layers; the engine takes the least (docs/engines/vllm.md §4). V1 prints `GPU KV cache size: N
tokens`; V0 prints `# GPU blocks: N` (`# cuda blocks` in some releases), i.e. N × block tokens.
"""

from __future__ import annotations

import math
from dataclasses import replace

from kvtop.domain.engine_log import EngineLog, Measured, RankedValue
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.cause_search import changed, geometry_candidates, has_windowed_layers
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.admission import pinned_memory, printed_estimate
from kvtop.domain.engines.vllm.backends import block_size
from kvtop.domain.engines.vllm.budget import ESTIMATED_NON_KV_BYTES, ESTIMATED_NON_KV_RANGE
from kvtop.domain.engines.vllm.compile_charge import compile_cache_note
from kvtop.domain.engines.vllm.eras import per_worker_stages, token_print_rule
from kvtop.domain.engines.vllm.hybrid import (
    NOT_HOPPER_STAND_IN,
    PREFIX_CACHING,
    gpu_sets_gdn_block,
    mamba_prefix_caching,
)
from kvtop.domain.engines.vllm.load_line import LOGGED_WEIGHTS_STAGE
from kvtop.domain.engines.vllm.log_hardware import log_block, log_gpu_name, table_total_said, with_log_gpu
from kvtop.domain.engines.vllm.log_launch import device_said, launch_fraction, logged_device
from kvtop.domain.engines.vllm.log_records import Concurrency, VllmRankLog
from kvtop.domain.engines.vllm.ray_logs import hidden_tighter_worker
from kvtop.domain.engines.vllm.runner_eras import logged_runner_note
from kvtop.domain.engines.vllm.worker_figures import is_worker, least_available, least_by_stage
from kvtop.domain.errors import KvtopError
from kvtop.domain.explain_estimate import EstimateRun, engine_total, rebuild_with_estimate, runtime_estimate
from kvtop.domain.explain_request import ExplainRequest
from kvtop.domain.explanation import (
    PLACEHOLDER_GPU_BYTES,
    EstimateOrigin,
    Explanation,
    Logged,
    PoolSizeCheck,
    judge,
    logged_total_first,
)
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.model import LayerKind, ModelSpec
from kvtop.domain.wording import gib, gib_range

record_type = VllmRankLog
_FACTS = {
    "model_loading": lambda r: r.model_loading or None,
    "available_kv_cache_memory": lambda r: r.available_kv_cache_memory or r.v0_profiles or None,
    "kv_cache_tokens": lambda r: r.kv_cache_tokens or r.num_gpu_blocks or None,
    "max_concurrency": lambda r: r.max_concurrency or None,
}


def missing_facts(log: EngineLog) -> tuple[str, ...]:
    """Headline facts the log does not state."""
    absent = [name for name, pick in _FACTS.items() if log.first(VllmRankLog, pick) is None]
    return (*absent, *(() if log.server_args else ("server_args",)))


def _logged_blocks(log: EngineLog) -> int | None:
    """V0's `# GPU blocks: N` (or `# cuda blocks`), when no `GPU KV cache size` line states tokens."""
    return log.first(VllmRankLog, lambda r: r.num_gpu_blocks[0] if r.num_gpu_blocks else None)


def logged_token_capacity(log: EngineLog, settings: LaunchSettings | None = None) -> int | None:
    """The one answer to "what capacity did this log state": `explain` (its `Logged`) and `--engine-log` both read
    it through `_stated`. V1's `GPU KV cache size: N tokens` (the least of each record's first TP × PP, §5), else V0's
    `# GPU blocks: N` × the block (the flag's; the one explain resolved; a live engine's, from its ledger; else the
    log's `block size to N`), else V0's refusal `… stored in KV cache (N)`. Without `settings`, the log alone: TP × PP
    from its printed arguments (1 where it prints none)."""
    if settings is None:
        return _stated(log, _printed_block(log), _printed_workers(log))[0]
    return _stated(log, settings.page_size or _printed_block(log), settings.tp * settings.pp)[0]


def _printed_block(log: EngineLog) -> int | None:
    """The block the log states (`Setting … block size to N`, the last printed), else its printed arguments'
    `block_size` (V0's `args: Namespace(… block_size=16 …)`, where the flag's default is printed), or None."""
    setting = log.first(VllmRankLog, lambda r: r.block_sizes[-1] if r.block_sizes else None)
    if setting is not None:
        return setting
    printed = log.server_args.get("block_size")
    return printed if isinstance(printed, int) and not isinstance(printed, bool) and printed > 0 else None


def _printed_workers(log: EngineLog) -> int:
    """TP × PP as the log's printed arguments state them (`tensor_parallel_size`, `pipeline_parallel_size`), else 1."""
    sizes = [log.server_args.get(key) for key in ("tensor_parallel_size", "pipeline_parallel_size")]
    return math.prod(size if isinstance(size, int) and size > 0 else 1 for size in sizes)


def log_kv_dtype(log: EngineLog) -> str | None:
    """vLLM states its KV dtype in its arguments (read as settings), not in a line of its own."""
    return None


def _refused_tokens(log: EngineLog) -> int | None:
    """V0's refusal `… stored in KV cache (N)`: N is the pool (blocks × block size) it had sized."""
    return log.first(VllmRankLog, lambda r: r.token_shortfalls[0].kv_tokens if r.token_shortfalls else None)


def _stated(log: EngineLog, block: int | None, workers: int) -> tuple[int | None, int | None]:
    """(tokens, V0 blocks) the log states, the blocks counted in tokens by `block` (`logged_token_capacity`)."""
    # ≤ v0.11.0 the engine core prints each worker's figure (TP × PP lines) before it takes the least (§5)
    printed = [min(r.kv_cache_tokens[: max(workers, 1)]) for r in log.ranks(VllmRankLog) if r.kv_cache_tokens]
    if printed:
        return min(printed), None
    blocks = _logged_blocks(log)
    refused = _refused_tokens(log)
    if blocks is None and refused is not None and block and refused % block == 0:
        return refused, refused // block  # V0's refusal states the pool it sized: its blocks × block (§9)
    if blocks is None or block is None:  # no block size known: the refusal's tokens are blocks × block
        return refused, None
    return blocks * block, blocks


def _logged(log: EngineLog, block: int | None, ranked: RankedValue | None, workers: int = 1) -> Logged:
    """What the log states, `ranked` the least KV memory of its workers (`least_available`)."""
    tokens, blocks = _stated(log, block, workers)
    concurrency = log.first(VllmRankLog, lambda r: _least_concurrency(r, workers))
    weights = log.first(VllmRankLog, lambda r: r.model_loading[0].memory if r.model_loading else None)
    device = logged_device(log)
    return Logged(
        token_capacity=tokens,
        num_gpu_blocks=blocks,
        available_kv_bytes=ranked.value.value_bytes if ranked else None,
        available_kv_rank=ranked.rank.label if ranked else None,
        weights_bytes=weights.value_bytes if weights else None,
        # `Model loading took X GiB memory`: the load's figure (was 'weights (loading took)', past the 20-wide column)
        weights_label="weights (model load)",
        max_concurrency=float(concurrency.concurrency.text) if concurrency else None,
        context_length=concurrency.tokens_per_request if concurrency else None,
        ranks_seen=sum(1 for rank in log.ranks(VllmRankLog) if is_worker(rank)),
        gpu_total_bytes=device.total.value_bytes if device.total else None,
        memory_fraction=device.fraction,
    )


def _least_concurrency(rank: VllmRankLog, workers: int) -> Concurrency | None:
    """The `Maximum concurrency` printed with the least of the first `workers` capacities (one pair per worker
    ≤ v0.11.0, §5), else the first."""
    if not rank.max_concurrency:
        return None
    pairs = list(zip(rank.kv_cache_tokens[: max(workers, 1)], rank.max_concurrency, strict=False))
    return min(pairs, key=lambda pair: pair[0])[1] if pairs else rank.max_concurrency[0]


def _printed(ledger: Ledger, logged: Logged) -> int:
    """The figure the engine prints: V0's `# GPU blocks: N` is the block count whether or not one request fits
    (it refuses after printing it, §9), so it is compared as blocks × block size; else the token capacity."""
    if logged.num_gpu_blocks is not None and ledger.engine.num_blocks is not None:
        return ledger.engine.num_blocks * ledger.engine.page_size
    return ledger.token_capacity


def logged_figures(log: EngineLog, settings: LaunchSettings, version: ResolvedVersion | None = None) -> Logged:
    """What the log states, read without a model: V0's blocks count in tokens by the block size the flag or
    the log states (`Setting … block size to N`), else by the refusal's own token count."""
    workers = settings.tp * settings.pp
    return _logged(log, settings.page_size or _printed_block(log), least_available(log, workers), workers)


def _default_block(model: ModelSpec, settings: LaunchSettings, gpu_name: str | None, version: ResolvedVersion) -> int:
    """The block vLLM's backend takes for these flags on this GPU (§3.1) at this release, the KV dtype as the flag
    says."""
    quantized = settings.kv_cache_dtype.lower() not in ("auto", "bfloat16", "bf16", "float16", "fp16", "half")
    return block_size(model, quantized, gpu_name, version)[0]


def _log_hardware(
    log: EngineLog, model: ModelSpec, settings: LaunchSettings, gpu_name: str | None, version: ResolvedVersion
) -> tuple[LaunchSettings, str | None, list[str]]:
    """The GPU the log names where no --gpu did, the block its attention backend takes where no --block-size
    did (an MLA block differs by backend: TRITON_MLA 16, FLASHMLA 64, CUTLASS_MLA 128; §3.1), and an
    encoder-decoder's max_num_batched_tokens from its encoder cache budget (§4.8)."""
    notes = []
    named = log_gpu_name(log)
    if gpu_name is None and named is not None:
        gpu_name = named
        notes.append(f"GPU {named}: from the log (the device name in a kernel-config path); no --gpu was given")
    budget = log.first(VllmRankLog, lambda r: r.encoder_cache_budgets[0] if r.encoder_cache_budgets else None)
    if model.body.cross_attention and settings.max_num_batched_tokens is None and budget is not None:
        settings = settings.model_copy(update={"max_num_batched_tokens": budget})  # §4.8: the cross blocks follow it
        notes.append(f"max_num_batched_tokens {budget:,}: the log's encoder cache budget (= max_num_batched_tokens)")
    found = log_block(log, model, version) if settings.page_size is None else None
    if found is not None:
        block, why = found
        default = _default_block(model, settings, gpu_name, version)
        if block != default:
            notes.append(f"block of {why}, not the {default} kvtop's GPU rule gives")
            settings = settings.model_copy(update={"page_size": block})
    return settings, gpu_name, notes


def _batch_unknown(model: ModelSpec, settings: LaunchSettings, gpu_total_bytes: int | None) -> bool:
    """Sliding-window / chunked blocks per request read max_num_batched_tokens (§3), whose default
    depends on the GPU (8192 on ≥ 70 GiB GPUs that are not A100, else 2048): with neither the flag
    nor a GPU, kvtop would read it off its stand-in GPU."""
    windowed = LayerKind.SLIDING in model.layer_attention and not settings.disable_hybrid_kv_cache_manager
    return windowed and settings.max_num_batched_tokens is None and gpu_total_bytes is None


def _given(
    available: Measured | None, logged_weights: int | None, given: MeasuredInputs, gpu_total_bytes: int | None
) -> tuple[MeasuredInputs | None, list[str]]:
    """The KV memory from --non-kv-memory (with the GPU and the weights) when the log lacks it."""
    notes = [
        f"{flag} not used: vLLM sizes the pool from total × gpu_memory_utilization, not the free memory"
        for flag, value in (
            ("--free-memory", given.free_before_load_bytes),
            ("--free-after-load", given.free_after_load_bytes),
        )
        if value is not None
    ]
    if given.non_kv_bytes is None:
        if given.weights_bytes is not None:
            notes.append("--weights-memory not used: without --non-kv-memory it does not give the KV memory")
        return None, notes
    if available is not None:
        notes.append(
            f"--non-kv-memory not used: the log states the available KV memory ({gib(available.value_bytes)})"
        )
        return None, notes
    if gpu_total_bytes is None:
        notes.append(
            "--non-kv-memory not used: it needs --gpu or --gpu-memory (KV = total × utilization − weights − non-KV)"
        )
        return None, notes
    weights = given.weights_bytes if given.weights_bytes is not None else logged_weights
    source = (
        "--weights-memory"
        if given.weights_bytes is not None
        else ("the log" if weights else "kvtop's estimate")
    )
    notes.append(
        f"available KV memory: from --non-kv-memory {gib(given.non_kv_bytes)} (weights from {source}), not the log"
    )
    stage = LOGGED_WEIGHTS_STAGE if given.weights_bytes is None else None  # the log's line is stage 0's alone
    return MeasuredInputs(non_kv_bytes=given.non_kv_bytes, weights_bytes=weights, weights_stage=stage), notes


def explain(request: ExplainRequest) -> Explanation:
    """The logged capacity rebuilt by this engine's rules from the log's own figures (`ExplainRequest`)."""
    device = logged_device(request.log)
    request, named_note = with_log_gpu(request, printed_total=device.total is not None)
    given = request.gpu_total_bytes, request.gpu_total_source, request.gpu_name
    stated, total_notes = logged_total_first(device.total, device.total_line, *given, request.gpu_total_origin)
    if stated is not None:  # the log's total wins over --gpu's table total (the GPU's name is kept)
        request = request.model_copy(update={"gpu_total_bytes": None})
    settings, fraction_from, fraction_notes = launch_fraction(request.settings, device)
    result = _explain(request.with_settings(settings), stated, [*named_note, *total_notes, *fraction_notes])
    return device_said(table_total_said(result, bool(named_note)), device, stated, fraction_from)


def _explain(request: ExplainRequest, stated: int | None, fraction_notes: list[str]) -> Explanation:
    """`explain` with the launch's fraction in the settings and `stated`, the device total the log prints where no
    --gpu says (measured; else None)."""
    log, model, settings, gpu_name, given, load_mtp = request.log, request.model, request.settings, request.gpu_name, request.given, request.load_mtp
    gpu_total_bytes = request.gpu_total_bytes or stated
    version = request.version
    settings, gpu_name, hardware_notes = _log_hardware(log, model, settings, gpu_name, version)
    settings = settings.model_copy(update={"gpu_name": gpu_name}) if gpu_name is not None else settings
    hardware_notes += fraction_notes
    block = settings.page_size or _default_block(model, settings, gpu_name, version)
    workers = settings.tp * settings.pp
    ranked = least_available(log, workers)
    logged = _logged(log, block, ranked, workers)
    available = ranked.value if ranked else None
    from_flags, notes = _given(available, logged.weights_bytes, given, gpu_total_bytes)
    notes = [*hardware_notes, *notes]
    compiled = compile_cache_note(log, version, model, gpu_name, settings)
    if compiled is not None:
        notes.append(compiled)
    notes.extend(n for n in (logged_runner_note(version, model, settings),) if n)  # the log's runner (§3)
    missing = []
    if logged.token_capacity is None:
        missing.append("`GPU KV cache size: N tokens` (V0: `# GPU blocks: N`)")
    if _batch_unknown(model, settings, gpu_total_bytes):
        missing.append(
            "--max-num-batched-tokens, or --gpu for vLLM's default (8192; 2048 on A100 or under 70 GiB): "
            "it sets the sliding-window blocks per request"
        )
    if settings.context_length is None and logged.context_length is not None:
        settings = settings.model_copy(update={"context_length": logged.context_length})
    if available is None and from_flags is None and gpu_total_bytes is not None and not missing:
        source, origin = request.solved_total(stated)
        run = EstimateRun(model, settings, gpu_total_bytes, gpu_name, load_mtp, given.desktop, source,
                          gpu_total_origin=origin)
        return _with_estimate(log, logged, run, notes, stated)
    if available is None and from_flags is None:
        missing.append(
            "`Available KV cache memory: X GiB` (or the `Current kv cache memory in use` ledger line, "
            "V0's `kv_cache_size`, or --non-kv-memory with --gpu; or --gpu to estimate it)"
        )
    # a refused start that logged its KV memory but no capacity (vllm#27508): the pool those bytes make is rebuilt
    before_refusal = len(missing) == 1 and logged.token_capacity is None and available is not None
    before_refusal = before_refusal and log.startup_error is not None
    if missing and not before_refusal:
        return Explanation(
            engine="vllm", logged=logged, verdict="insufficient", missing=tuple(missing), notes=tuple(notes)
        )
    # else: the model's max_position_embeddings, which is vLLM's own default max_model_len
    override = log.first(VllmRankLog, lambda r: r.blocks_overrides[0] if r.blocks_overrides else None)
    if override is not None and settings.num_gpu_blocks_override is None:
        settings = settings.model_copy(update={"num_gpu_blocks_override": override.override})
    total = gpu_total_bytes or PLACEHOLDER_GPU_BYTES

    open_gpu = gpu_sets_gdn_block(model, gpu_name)  # the block differs by GPU: both readings bound the interval

    def solve(measured: MeasuredInputs, gpu: str | None = gpu_name) -> Ledger:
        return predict(model, settings, gpu_total_bytes=total, gpu_name=gpu, measured=measured, load_mtp=load_mtp)

    def printed(measured: MeasuredInputs) -> tuple[int, ...]:
        gpus = (gpu_name, NOT_HOPPER_STAND_IN) if open_gpu else (gpu_name,)
        return tuple(_printed(solve(measured, gpu), logged) for gpu in gpus)

    if before_refusal:
        assert available is not None
        central = solve(MeasuredInputs(available_kv_bytes=available.value_bytes, gpu_total_bytes=stated))
        estimate = printed_estimate(log)
        if estimate is not None:  # the printed length pins the memory closer than two decimals (admission.py)
            pinned, said = pinned_memory(available, central, estimate, version)
            notes.append(said)
            if pinned is not None:
                available = pinned
                central = solve(MeasuredInputs(available_kv_bytes=pinned.value_bytes, gpu_total_bytes=stated))
        return _sized_before_refusal(logged, central, available, (*notes, *missing))
    if available is not None:
        stages = least_by_stage(log, settings.pp, settings.tp) if per_worker_stages(version) else None

        def at(end: str) -> MeasuredInputs:
            value: int = getattr(available, end)
            by_stage = tuple(getattr(s.value, end) for s in stages) if stages else None
            return MeasuredInputs(
                available_kv_bytes=value, available_kv_bytes_by_stage=by_stage, gpu_total_bytes=stated
            )

        central = solve(at("value_bytes"))
        low, high = min(printed(at("low_bytes"))), max(printed(at("high_bytes")))
        if open_gpu:
            notes.append(
                "the log names no GPU: a GDN hybrid's block aligns to 64 tokens on Hopper (FlashInfer's GDN prefill "
                "checkpoints), to 16 elsewhere; the interval spans both (pass --gpu to settle it)"
            )
        room = available.high_bytes
        if stages:
            notes.append(
                "each pipeline stage sized from its own KV memory: "
                + ", ".join(f"PP{i} {s.value.text} GiB ({s.rank.label})" for i, s in enumerate(stages))
            )
    else:
        assert from_flags is not None
        central = solve(from_flags.model_copy(update={"gpu_total_bytes": stated}))
        low = high = _printed(central, logged)
        room = None
    result = judge(
        "vllm", logged, central, low, high, settings, room, gpu_total_bytes, kv_memory_logged=True,
        predicted_tokens=_printed(central, logged),
    )  # fmt: skip
    result = result.model_copy(update={"notes": tuple(notes)})
    if available is not None:  # Ray folded a tighter worker's figure away: estimate it within its bounds
        source, origin = request.solved_total(stated)  # the log's total, --gpu's, or a stand-in (assumed)
        run = EstimateRun(model, settings, total, gpu_name, load_mtp, gpu_total_source=source, gpu_total_origin=origin)
        rank = ranked.rank.label if ranked else None
        result = hidden_tighter_worker(result, log, run, available.value_bytes, rank)
    return result


def _sized_before_refusal(logged: Logged, central: Ledger, available: Measured, notes: tuple[str, ...]) -> Explanation:
    """No capacity printed before the refusal: what vLLM's rules make of the logged KV memory, said as a note (the
    verdict stays the refusal's; nothing printed to compare)."""
    tokens = _printed(central, logged)
    said = (
        "vLLM's rules refuse too: one request of max_model_len does not fit (the budget's last step)"
        if tokens == 0
        else f"vLLM's rules give {tokens:,} tokens (the log prints none to compare)"
    )
    note = f"the log's `Available KV cache memory: {available.text} GiB` before the refusal: {said}"
    return Explanation(
        engine="vllm", logged=logged, verdict="insufficient", ledger=central, token_capacity=tokens,
        kv_bytes_per_token=central.kv_bytes_per_token, notes=(*notes, note),
    )  # fmt: skip


def _with_estimate(
    log: EngineLog, logged: Logged, run: EstimateRun, notes: list[str], stated: int | None
) -> Explanation:
    """No KV-memory line, but the GPU is named (or the log states its total, `stated`): the non-KV runtime memory
    estimated as `plan` does (the weights as the log states them, else predicted), the KV memory what the
    utilisation leaves."""
    override = log.first(VllmRankLog, lambda r: r.blocks_overrides[0] if r.blocks_overrides else None)
    if override is not None and run.settings.num_gpu_blocks_override is None:
        settings = run.settings.model_copy(update={"num_gpu_blocks_override": override.override})
        run = replace(run, settings=settings)
    least, most = ESTIMATED_NON_KV_RANGE
    fallback = (f"vLLM's {gib(ESTIMATED_NON_KV_BYTES)} estimate, as plan uses it ({gib_range(least, most)} "
                "assumed: no term of it is fitted for this release)")  # fmt: skip
    estimate = runtime_estimate(
        run, "non-KV runtime memory (activation peak, non-torch, CUDA graphs)", (least, ESTIMATED_NON_KV_BYTES, most),
        fallback,
    )  # fmt: skip
    weights = "the log's" if logged.weights_bytes is not None else "kvtop's predicted"
    said = (*notes, f"the KV memory is total × utilisation − {weights} weights − the estimated non-KV memory")
    # the calibrated terms were fitted against CUDA's total, not nvidia-smi's: solve with it wherever one of them is in
    # the estimate, though another be assumed (its source says the weakest: v0.3.1–v0.6.3's non-torch memory, which
    # no log of those releases measured, beside the calibrated activation peak)
    total = engine_total(run) if estimate.origin is EstimateOrigin.PLAN_TERMS else None

    def at(non_kv: int) -> MeasuredInputs:
        return MeasuredInputs(
            non_kv_bytes=non_kv, weights_bytes=logged.weights_bytes, calibrated=total, gpu_total_bytes=stated,
            weights_stage=LOGGED_WEIGHTS_STAGE,
        )  # the log's CUDA total, where stated, wins over the calibrated one

    return rebuild_with_estimate("vllm", logged, run, estimate, at, said, lambda ledger: _printed(ledger, logged))


def pool_size_checks(
    log: EngineLog, model: ModelSpec, settings: LaunchSettings, load_mtp: bool
) -> tuple[PoolSizeCheck, ...]:
    """vLLM prints no pool size of its own to check against."""
    return ()


def cause_candidates(
    log: EngineLog, model: ModelSpec, settings: LaunchSettings
) -> list[tuple[str, LaunchSettings]]:
    """vLLM logs the KV memory it had, so only geometry and the token print can differ."""
    version = ResolvedVersion(text=settings.engine_version)  # these settings' release: a candidate may name another
    found: list[tuple[str, LaunchSettings | None]] = list(
        geometry_candidates(
            model, settings, settings.page_size or _default_block(model, settings, None, version), ("auto", "fp8_e4m3")
        )
    )
    rule = token_print_rule(version)
    if rule != "blocks":
        found.append(
            (
                "vLLM before v0.21's token print (blocks × block size)",
                changed(settings, engine_version="0.20"),
            )
        )
    else:
        found.append(
            (
                "vLLM v0.22+'s token print (concurrency × max_model_len)",
                changed(settings, engine_version=None),
            )
        )
    if has_windowed_layers(model):
        flip = not settings.disable_hybrid_kv_cache_manager
        what = f"hybrid KV cache manager {'off' if flip else 'on'}"
        found.append((what, changed(settings, disable_hybrid_kv_cache_manager=flip)))
    found += _prefix_caching_flip(log, model, settings, version)
    return [(what, candidate) for what, candidate in found if candidate is not None]


def _prefix_caching_flip(
    log: EngineLog, model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion
) -> list[tuple[str, LaunchSettings | None]]:
    """A Mamba / GDN hybrid with prefix caching the other way (hybrid.mamba_prefix_caching): its mamba_cache_mode
    ('align' with it, 'none' without) sets the block and the state blocks a request, which vLLM's printed KV memory
    does not show; a log prints no --enable-prefix-caching, and the hybrid's default flips at v0.28.0 (opt-in before).
    club-3090 #652's v0.24.0 log (Qwen3.6-35B-A3B-NVFP4, launched with it) rebuilds only with it. Not tried where the
    log's own args state it (`non-default args: {… 'enable_prefix_caching': False …}`): the flip would contradict the
    log."""
    if isinstance(log.server_args.get("enable_prefix_caching"), bool):
        return []
    if model.attention_free or not any(model.has_state(layer) for layer in range(len(model.layer_attention))):
        return []
    try:
        on = mamba_prefix_caching(model, settings, version)
    except KvtopError:
        return []
    flags = {key: value for key, value in settings.flags.items() if key not in (PREFIX_CACHING, f"no-{PREFIX_CACHING}")}
    flags[PREFIX_CACHING if not on else f"no-{PREFIX_CACHING}"] = True
    what = f"prefix caching {'off' if on else 'on'} (mamba_cache_mode {'none' if on else 'align'})"
    return [(what, settings.model_copy(update={"flags": flags}))]
