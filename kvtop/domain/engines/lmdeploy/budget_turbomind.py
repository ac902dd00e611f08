"""TurboMind's KV blocks (docs/engines/lmdeploy.md §2, §3, §7).

    block_bytes = Σ attention layers × kv_heads_per_rank × (K, V) × block_len × bytes per element (+ scales)
    v0.1.0 – v0.2.1   blocks = size_t(total × ratio) // block_bytes           ratio 0.5 by default
    v0.2.2 – v0.14    blocks = size_t(free × ratio) // block_bytes            ratio 0.8; free: least over ranks
                      (v0.13+ hybrid models: the linear state of max_batch_size slots comes off first)
    v0.15+            cache = size_t(free × ratio): one object cache; blocks ≤ cache // block_bytes
    ratio ≥ 1         blocks = int(ratio) (before v0.15)
    v0.6.2 – v0.8.x   from a Hugging Face checkpoint, free less torch's cache of the LM head's staging (§15.1)
    4-bit AWQ/GPTQ    free less the zero points TurboMind holds in 16 bits beyond the book's packed ones (§15.6)
    v0.2.2 – v0.5.x   free less the pages each weight tensor's own cudaMalloc leaves unused (§15.7)
    tokens = blocks × block_len; session_len is truncated to it when longer

Sliding-window layers are cached at full length (gpt-oss: all 24 layers, §2.1).
"""

from __future__ import annotations

from kvtop.domain.engines.base import EngineInputs, EngineResult
from kvtop.domain.engines.budget_step import BudgetStep
from kvtop.domain.engines.lmdeploy.architectures import TOWER_SPLIT
from kvtop.domain.engines.lmdeploy.eras import (
    BLOCK_PRINT_FLOAT_SINCE,
    TURBOMIND_CHUNK_ERAS,
    TURBOMIND_EXPORT_STAGING_ERAS,
    TURBOMIND_LAYER_STAGING_ERAS,
    TURBOMIND_LINEAR_STATE_SINCE,
    TURBOMIND_WEIGHT_PAGES_ERAS,
    default_max_batch,
    default_ratio,
    since,
    turbomind_block_len,
    turbomind_share,
)
from kvtop.domain.engines.lmdeploy.memory import free_after_weights
from kvtop.domain.engines.lmdeploy.turbomind_pages import PAGE_BYTES, charged_page_bytes
from kvtop.domain.engines.lmdeploy.turbomind_weights import ZERO_SOURCE, zero_point_extra_bytes
from kvtop.domain.engines.lmdeploy.whole_blocks import whole_blocks_note
from kvtop.domain.engines.versions import ResolvedVersion, era_for
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.kv import ANY_FP8_KV_FORMATS
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import ModelSpec
from kvtop.domain.rounding import ceil_div
from kvtop.domain.wording import MIB, mib

RATIO_FLAG = "--cache-max-entry-count"
# v0.1.0 – v0.2.1's share is of CUDA's total in bytes (TURBOMIND_SHARE_ERAS); read in both tags' source
TOTAL_SOURCE = "BlockManager.cc:84-89 (v0.1.0, v0.2.1) GetBlockCount: cudaMemGetInfo(&free, &total)"


def solve_turbomind(inputs: EngineInputs, backend_why: str) -> EngineResult:
    s, kv, version = inputs.settings, inputs.kv, inputs.version
    share = turbomind_share(version)
    if share.value == "sequences":
        raise UnsupportedModelError(
            f"LMDeploy {version.label} counted cached sequences, not KV blocks ({share.source}): not modelled",
            field="--engine-version",
        )
    if kv.kv_format in ANY_FP8_KV_FORMATS:
        raise InputError("TurboMind has no FP8 KV cache (quant_policy 16/17 are the PyTorch engine's): "
                         "use --quant-policy 8 (int8) or --backend pytorch", field="--quant-policy")  # fmt: skip
    steps: list[BudgetStep] = []
    notes: list[str] = [f"backend: {backend_why}"]
    block_len = s.page_size or turbomind_block_len(version)
    if block_len % 16:
        raise InputError(f"TurboMind's block length must be a multiple of 32 (16 before SM80), got {block_len}",
                         field="--cache-block-seq-len")  # fmt: skip
    per_token = kv.full_bytes_per_token + kv.swa_bytes_per_token
    block_bytes = per_token * block_len
    if kv.swa_bytes_per_token:
        notes.append("sliding-window layers are cached at full length: TurboMind keeps every attention layer's KV")
    if s.max_running_requests is not None:
        max_batch, batch_source = s.max_running_requests, "--max-batch-size"
    else:
        max_batch, batch_source = default_max_batch(version, inputs.gpu_name)
    default = default_ratio(version)
    ratio, ratio_source = (s.cache_max_entry_count, RATIO_FLAG) if s.cache_max_entry_count else (
        default.value, f"default of LMDeploy {version.label}: {default.value:g} ({default.source})")  # fmt: skip
    state_bytes = 0
    if kv.state_bytes_per_request:
        if not since(TURBOMIND_LINEAR_STATE_SINCE, version):
            raise UnsupportedModelError(
                f"TurboMind {version.label} has no linear-attention layers (from v0.13.0): --backend pytorch",
                field="--backend",
            )
        state_bytes = kv.state_bytes_per_request * max_batch
    budget, blocks = _blocks(inputs, share.value, ratio, ratio_source, state_bytes, block_bytes, steps, notes)
    steps.append(BudgetStep(label=f"bytes per block: {block_len} tokens × {per_token:,} B", value=block_bytes,
                            note=printed_block_size(block_bytes, share.value, version)))  # fmt: skip
    cache_word = "object cache" if share.value == "object_cache" else "cache share"
    cache_word += " less the linear state" if state_bytes else ""  # the blocks are cut from what the state leaves
    steps.append(BudgetStep(label="blocks (max_block_count)", value=blocks,
                            note=whole_blocks_note(budget, blocks, block_bytes, cache_word)))  # fmt: skip
    tokens = blocks * block_len
    steps.append(BudgetStep(label=f"tokens: blocks × {block_len}", value=tokens))
    if 0 < tokens < inputs.context_length:
        steps.append(BudgetStep(label="session_len truncated to the tokens", value=tokens,
                                note=f"asked {inputs.context_length:,}: TurboMind prints the truncation"))  # fmt: skip
    chunk = s.cache_chunk_size if s.cache_chunk_size is not None else TURBOMIND_CHUNK_ERAS.at(version)
    if chunk > 0:
        notes.append(f"cache_chunk_size {chunk}: blocks are allocated {chunk} at a time as requests need them, "
                     "so the GPU holds less than the pool until it fills")  # fmt: skip
    notes.append("TurboMind's runtime buffers (allocated after the cache is sized) are not in this plan")
    fits = budget > 0 and blocks >= 1
    return EngineResult(
        engine="lmdeploy", token_capacity=tokens if fits else 0, page_size=block_len, num_blocks=blocks,
        kv_budget_bytes=max(budget, 0), kv_pool_bytes=(blocks * block_bytes + state_bytes) if fits else 0,
        state_pool_bytes=state_bytes if fits else 0, max_running_requests=max_batch, max_concurrency=None,
        reserve_bytes=0, memory_fraction=ratio, memory_fraction_source=ratio_source, fits=fits,
        shortfall_bytes=0 if fits else max(block_bytes - budget, 1), steps=tuple(steps),
        notes=(*notes, f"max_batch_size {max_batch}: {batch_source}"),
    )  # fmt: skip


def printed_block_size(block_bytes: int, share: str, version: ResolvedVersion) -> str:
    """The block as TurboMind's `[BlockManager] block_size = … MB` prints it: MiB though it says MB (`block_size_ >>
    20` up to v0.7.x; `(float)block_size_ / (1 << 20)` with %.3f from v0.8.0, `BLOCK_PRINT_FLOAT_SINCE`); '' from
    v0.15, whose object cache prints no block size."""
    if share == "object_cache":
        return ""
    text = f"{block_bytes / MIB:.3f}" if since(BLOCK_PRINT_FLOAT_SINCE, version) else f"{block_bytes >> 20}"
    return f"logged as 'block_size = {text} MB': MiB (2^20 B), though it says MB"


def export_staging_bytes(inputs: EngineInputs) -> int:
    """What torch's caching allocator still holds on the first GPU when TurboMind (v0.6.2 – v0.8.x) measures free
    memory after converting a Hugging Face checkpoint (docs/engines/lmdeploy.md §15.1): the segments of the largest
    set of tensors staged live at once, one layer's MLP (`layer_staging_bytes`), and the LM head's rank slice × its
    live copies (vocabulary padded to a multiple of TP, `pad_weight`) where that slice is larger than an MLP matrix:
    a smaller one is carved from the layers' freed segments (the embedding and head are staged after a shard's
    layers). 0 in the releases that empty the cache, for a workspace, or where the free memory is measured."""
    s, model = inputs.settings, inputs.model
    if s.turbomind_workspace or inputs.measured.free_after_load_bytes is not None:
        return 0
    copies = era_for(TURBOMIND_EXPORT_STAGING_ERAS, inputs.version).value
    tp = max(inputs.layout.tp, 1)
    rows = ceil_div(model.vocab_size, tp)  # one rank's slice of round_up(vocab, tp) (turbomind_pages.py)
    head = rows * model.hidden_size * model.dtype_bytes
    layers = layer_staging_bytes(model, s, inputs.version, tp)
    if layers and head <= _mlp_matrix_bytes(model):
        return layers
    return copies * head + layers


def layer_staging_bytes(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion, tp: int) -> int:
    """One layer's MLP staged through torch, all live at once (§15.1, `TURBOMIND_LAYER_STAGING_ERAS`): its three
    matrices read whole, their zero-pad clones, and one rank slice made contiguous. The cache keeps those segments
    and every later layer reuses them. 0 for a workspace, outside the era, for a quantized checkpoint, whose
    reader unpacks on the GPU in other shapes (not modelled: `staging_leftover_bytes` keeps it as error), or for an
    MoE model, whose experts `module.py` MoeFfn stages one by one in their own shapes (not read: not modelled)."""
    if settings.turbomind_workspace or model.quant.quantized or model.moe is not None:
        return 0
    return _mlp_staging(model, version, tp)


def _unstaged_layers_why(model: ModelSpec) -> str:
    """Why `layer_staging_bytes` charges nothing where the era stages layers (said in the step)."""
    if model.moe is not None:
        return "an MoE model's layer staging (its experts' shapes, not read): not modelled"
    return "a quantized checkpoint's layer staging: not modelled"


def _mlp_staging(model: ModelSpec, version: ResolvedVersion, tp: int) -> int:
    whole = era_for(TURBOMIND_LAYER_STAGING_ERAS, version).value
    rows = _mlp_rows(model)
    return (whole * rows + ceil_div(rows, max(tp, 1))) * model.hidden_size * model.dtype_bytes if whole else 0


def _mlp_rows(model: ModelSpec) -> int:
    return max((model.intermediate_size, *model.layer_intermediate))


def _mlp_matrix_bytes(model: ModelSpec) -> int:
    return _mlp_rows(model) * model.hidden_size * model.dtype_bytes


def held_zero_point_bytes(inputs: EngineInputs) -> int:
    """What TurboMind holds of a 4-bit group-quantized checkpoint beyond the book (its zero points in 16 bits,
    docs/engines/lmdeploy.md §15.6); 0 where the weights or the free memory after them are measured."""
    if inputs.measured.weights_bytes is not None or inputs.measured.free_after_load_bytes is not None:
        return 0
    return zero_point_extra_bytes(inputs.model, inputs.layout, TOWER_SPLIT)


def staging_leftover_bytes(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion, tp: int) -> int:
    """The error of the staging charge (docs/engines/lmdeploy.md §15.1): the attention's staging leaves segments of
    its own beside the MLP's. Its projections are read whole (`to_cuda`, whatever the TP) and each is copied once
    more (q/k/v reordered, `permute_v2`, `merge_qkv_v2`'s cat, wo made contiguous): about 2 × (q, k, v and o
    matrices), an estimate (the allocator's packing decides; a replay of InternVL2.5-8B's gives 180 MiB against
    160, benchmarks/lmdeploy_encoder_cache.py). A quantized checkpoint's MLP staging, not charged, is in it too.
    0 where nothing is staged (a workspace, outside the era)."""
    if settings.turbomind_workspace or not era_for(TURBOMIND_LAYER_STAGING_ERAS, version).value:
        return 0
    outputs = 2 * (model.num_attention_heads + model.num_kv_heads) * model.head_dim  # q, k, v, o
    attention = 2 * outputs * model.hidden_size * model.dtype_bytes  # read whole and copied once: not by TP
    return attention + (_mlp_staging(model, version, tp) if model.quant.quantized else 0)


def held_page_bytes(inputs: EngineInputs) -> int | None:
    """What a rank's weight tensors take beyond their bytes in whole pages, in the releases that cudaMalloc each
    (docs/engines/lmdeploy.md §15.7); 0 in the others or where the weights or the free memory are measured, None
    where the release does so but kvtop does not list the model's tensors."""
    if inputs.measured.weights_bytes is not None or inputs.measured.free_after_load_bytes is not None:
        return 0
    return charged_page_bytes(inputs.model, inputs.layout.tp, inputs.version)


def _page_step(inputs: EngineInputs, steps: list[BudgetStep], notes: list[str]) -> int:
    """The pages charge as a step (or, for a model whose tensors are not listed, a note naming it not modelled)."""
    pages = held_page_bytes(inputs)
    era = era_for(TURBOMIND_WEIGHT_PAGES_ERAS, inputs.version)
    if pages is None:
        notes.append(f"not modelled: the pages LMDeploy {inputs.version.label}'s per-tensor cudaMalloc leaves unused "
                     "(kvtop lists TurboMind's tensors of dense 16-bit and 4-bit group models only)")  # fmt: skip
        return 0
    if pages:
        steps.append(BudgetStep(label="− weight tensors rounded up to whole device pages (one cudaMalloc each)",
                                bytes=-pages, note=f"{era.source}; the page assumed {mib(PAGE_BYTES)} (the "
                                                   "driver's large page, not printed): an estimate"))  # fmt: skip
    return pages


def _total_step(inputs: EngineInputs, steps: list[BudgetStep]) -> int:
    """v0.1.0 – v0.2.1's `total` (`BlockManager::GetBlockCount`: `cudaMemGetInfo(&free, &total)`, BlockManager.cc:84-89
    at v0.1.0 and v0.2.1), in bytes and never printed (the log prints only `block_size = N MB`, MiB). It is CUDA's
    total, below nvidia-smi's (about 79.15 against 80.00 GiB on an A100-80GB): the figure given or measured, else
    CUDA's as calibrated per GPU model, else, said so, the GPU table's nvidia-smi total."""
    meas = inputs.measured
    total = meas.engine_total(inputs.gpu_total_bytes)
    if meas.is_measured("gpu_total_bytes"):
        origin = ""
    elif meas.engine_total_is_cuda():
        origin = ": CUDA's, per GPU model"
    else:  # no calibration: the table's or the given figure stands for it, said
        origin = ", taken as " + inputs.gpu_total_label().removeprefix("GPU memory (").removesuffix(")")
    steps.append(BudgetStep(label=f"total (cudaMemGetInfo){origin}", bytes=total,
                            measured=meas.is_measured("gpu_total_bytes"), source=meas.engine_total_source(),
                            note=f"{TOTAL_SOURCE}; not printed",
                            role="cuda_total" if meas.engine_total_is_cuda() else "gpu_total"))  # fmt: skip
    return total


def _blocks(
    inputs: EngineInputs, share: str, ratio: float, ratio_source: str, state_bytes: int, block_bytes: int,
    steps: list[BudgetStep], notes: list[str],
) -> tuple[int, int]:  # fmt: skip
    """(bytes given to KV, block count) by the era's share (§1, §2.2, §3)."""
    s = inputs.settings
    if ratio >= 1:
        if share == "object_cache":
            raise InputError(f"LMDeploy {inputs.version.label} takes a share below 1 (TM_CHECK_LT(cache_ratio, 1.)): "
                             "a block count is no longer accepted", field=RATIO_FLAG)  # fmt: skip
        blocks = int(ratio)
        steps.append(BudgetStep(label=f"cache_max_entry_count {ratio:g} ≥ 1: a block count", value=blocks,
                                note=ratio_source))  # fmt: skip
        return blocks * block_bytes, blocks
    if share == "total":
        total = _total_step(inputs, steps)
        budget = int(total * ratio)
        steps.append(BudgetStep(label=f"size_t(total × {ratio:g})", bytes=budget, note=ratio_source,
                                role="memory_fraction"))  # fmt: skip
        return budget, budget // block_bytes
    free = free_after_weights(inputs, steps, notes)
    zeros = held_zero_point_bytes(inputs)
    if zeros:
        steps.append(BudgetStep(label="− zero points TurboMind holds in 16 bits (the book: as the checkpoint packs them)",
                                bytes=-zeros, note=ZERO_SOURCE))  # fmt: skip
        free -= zeros
    free -= _page_step(inputs, steps, notes)
    staged = export_staging_bytes(inputs)
    if staged:
        era = era_for(TURBOMIND_EXPORT_STAGING_ERAS, inputs.version)
        layers = layer_staging_bytes(inputs.model, s, inputs.version, inputs.layout.tp)
        leftover = staging_leftover_bytes(inputs.model, s, inputs.version, inputs.layout.tp)
        head = (f"the LM head's rank slice × {era.value} ({mib(staged - layers)}): {era.source}"
                if staged > layers else "the LM head's slice fits the layers' freed segments")  # fmt: skip
        mlp = (f"one layer's MLP: 3 matrices read whole, their 3 zero-pad clones and one rank slice made contiguous "
               f"({mib(layers)}: {era_for(TURBOMIND_LAYER_STAGING_ERAS, inputs.version).source})"
               if layers else _unstaged_layers_why(inputs.model))  # fmt: skip
        steps.append(BudgetStep(label="− torch's cache of the weights' staging (first GPU)", bytes=-staged,
                                note=f"{mlp}; {head}; the attention's segments may hold about "
                                     f"{mib(leftover)} more (in the interval)"))  # fmt: skip
        notes.append("a Hugging Face checkpoint is copied into TurboMind through torch on the first GPU, whose cache "
                     f"keeps the layers' and the LM head's staging before LMDeploy {inputs.version.label} measures "
                     "free memory (v0.6.2 – v0.8.x); a converted workspace stages nothing: kvtop's own "
                     "--turbomind-workspace says the model path is one (not an LMDeploy flag: LMDeploy tells it by "
                     "its triton_models/)")  # fmt: skip
        free -= staged
    budget = int(free * ratio)
    label = "object cache: size_t(free × {:g})" if share == "object_cache" else "size_t(free × {:g})"
    steps.append(BudgetStep(label=label.format(ratio), bytes=budget, note=ratio_source, role="memory_fraction"))
    if share == "object_cache":
        notes.append("v0.15+: KV blocks share the object cache with prefix-cache checkpoints and linear state; "
                     "the token count is an upper bound")  # fmt: skip
    if state_bytes:
        steps.append(BudgetStep(label=f"− linear state ({s.max_running_requests or 'max_batch_size'} slots)",
                                bytes=-state_bytes))  # fmt: skip
        budget -= state_bytes
    return budget, budget // block_bytes if budget > 0 else 0
