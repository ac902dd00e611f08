"""The PyTorch engine's KV blocks (docs/engines/lmdeploy.md §4).

    block_bytes = layers × Σ descriptors (K, V, and the int8/int4 scale-zero tensors; each rounded up
                  to 256 B from v0.11.1)
    v0.2.0 – v0.2.3   blocks = int(free × 0.7 / block_bytes)                 (cache_max_entry_count ignored)
    v0.2.4 – v0.2.5   blocks = int(free × ratio / block_bytes)
    v0.2.6 – v0.9.1   runtime = max_prefill_token_num × vocab × 7
    v0.9.2 – v0.12.x  runtime = (max_prefill_token_num + 2 × max_batches) × vocab × 2   (v0.11+: state first)
                      blocks = int((free − runtime) × ratio / block_bytes)
    v0.13.0 +         free −= state × (max_batches + 2 + prefix_cache_state_budget) ; free −= runtime
                      blocks = int(free × ratio) // block_bytes                   (least over ranks)
    0.17.0 +          a DSA model's runtime += 512 MiB (the indexer's prefill score workspace)
    max_prefill_token_num is halved until ≥ 16 blocks fit ("No enough memory. Update max_prefill_token_num").
"""

from __future__ import annotations

from kvtop.domain.engines.base import EngineInputs, EngineResult
from kvtop.domain.engines.budget_step import BudgetStep
from kvtop.domain.engines.lmdeploy.dsa import auto_is_fp8, score_workspace
from kvtop.domain.engines.lmdeploy.eras import (
    NUM_GPU_BLOCKS_FLAG_SINCE,
    PYTORCH_ALIGNED_SINCE,
    PYTORCH_FP8_SINCE,
    PYTORCH_KV_QUANT_SINCE,
    default_max_batch,
    pytorch_budget,
    pytorch_prefill,
    pytorch_state_extra,
    since,
)
from kvtop.domain.engines.lmdeploy.flags import QUANT_POLICIES
from kvtop.domain.engines.lmdeploy.memory import free_after_weights
from kvtop.domain.engines.lmdeploy.whole_blocks import whole_blocks_note
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.gpus import SM90_AND_NEWER
from kvtop.domain.kv import ANY_FP8_KV_FORMATS, KvBook
from kvtop.domain.model import ModelSpec
from kvtop.domain.rounding import round_up
from kvtop.domain.wording import mib

DEFAULT_RATIO = 0.8  # PytorchEngineConfig.cache_max_entry_count
FIXED_SHARE = 0.7  # v0.2.0 – v0.2.3: gpu_mem_percent
MIN_BLOCKS = 16  # the runtime reserve shrinks until this many blocks fit
ALIGNMENT = 256
# SM90 and newer: FlashMLA runs there (when installed), and needs 64-token blocks (§4.1): `flash_mla_available`
# reads the capability major (>= 9, lmdeploy/pytorch/configurations/utils.py), `_adjust_block_size` then asks 64
FLASH_MLA_FAMILY = SM90_AND_NEWER


def block_bytes(model: ModelSpec, kv: KvBook, block: int, aligned: bool) -> int:
    """One block over all cached layers: each layer's descriptors (K, V, scale-zero, index key), per rank."""
    heads = kv.kv_heads_per_rank
    params = 2 * model.dtype_bytes  # an int8/int4 scale and zero in the model's dtype (§4.1)
    full, swa, index = kv.pool("full"), kv.pool("swa"), kv.pool("dsa_index")
    layers = (full.layers if full else 0) + (swa.layers if swa else 0)
    fmt = kv.kv_format
    if model.mla is not None:
        k_dim, v_dim = model.mla.latent_width, 0
    else:
        k_dim, v_dim = model.head_dim, model.v_head_dim
    attention = full or swa
    if fmt == "fp8_ds_mla" or (model.mla is not None and fmt.startswith("fp8")):  # one latent: 576 B, or 656 B
        descs = [block * int(attention.bytes_per_layer_token if attention else 0)]  # as fp8_ds_mla (kv.py)
    elif fmt in ("int8", "int4"):
        per = 1 if fmt == "int8" else 2  # elements per byte
        descs = [block * heads * k_dim // per, block * heads * v_dim // per, block * heads * params]
        descs += [block * heads * params] if v_dim else []
    else:
        element = 4 if fmt == "fp32" else 1 if fmt.startswith("fp8") else 2
        descs = [block * heads * k_dim * element, block * heads * v_dim * element]
    if index is not None:
        descs.append(block * int(index.bytes_per_layer_token))
    return layers * sum(round_up(size, ALIGNMENT) if aligned else size for size in descs if size)


def _block_size(model: ModelSpec, asked: int | None, gpu_name: str | None, notes: list[str]) -> int:
    """64 tokens; 32 for a head of ≥ 512 (MLA) unless FlashMLA runs, which needs 64 (`_adjust_block_size`)."""
    block = asked or 64
    width = model.mla.latent_width if model.mla else model.head_dim
    if width < 512:
        return block
    if FLASH_MLA_FAMILY.holds(gpu_name):
        if block != 64:
            raise InputError("FlashMLA (SM90+) needs --cache-block-seq-len 64", field="--cache-block-seq-len")
        notes.append("block 64: FlashMLA on SM90+ (assumed installed, as in LMDeploy's images)")
        return block
    if block > 32:
        notes.append(f"block 32: LMDeploy forces it for head_dim {width} without FlashMLA (SM < 90 or not named)")
        return 32
    return block


def solve_pytorch(inputs: EngineInputs, backend_why: str) -> EngineResult:
    m, s, kv, version = inputs.model, inputs.settings, inputs.kv, inputs.version
    steps: list[BudgetStep] = []
    notes: list[str] = [f"backend: {backend_why}"]
    asked = QUANT_POLICIES.get(s.kv_cache_dtype.strip().lower(), s.kv_cache_dtype)
    dsa_fp8 = auto_is_fp8(m, version)  # v0.11.1 – v0.16.x: FP8 with no --quant-policy, before QuantPolicy.FP8 too
    if dsa_fp8 is not None and asked == "auto":
        notes.append(f"KV fp8_ds_mla (656 B a token a layer) with no --quant-policy: {dsa_fp8.source}")
    if asked in ANY_FP8_KV_FORMATS and not since(PYTORCH_FP8_SINCE, version):
        raise InputError(f"LMDeploy {version.label} has no FP8 KV (quant_policy 16/17 from v0.14.0)",
                         field="--quant-policy")  # fmt: skip
    if kv.kv_format in ("int8", "int4") and not since(PYTORCH_KV_QUANT_SINCE, version):
        raise InputError(f"LMDeploy {version.label}'s PyTorch engine has no int8/int4 KV (from v0.6.2)",
                         field="--quant-policy")  # fmt: skip
    ratio = s.cache_max_entry_count or DEFAULT_RATIO
    ratio_source = "--cache-max-entry-count" if s.cache_max_entry_count else f"default {DEFAULT_RATIO:g}"
    if ratio >= 1:
        raise InputError("the PyTorch engine takes a share below 1 (PytorchEngineConfig asserts 0 < x < 1): "
                         "give a block count as --num-gpu-blocks", field="--cache-max-entry-count")  # fmt: skip
    block = _block_size(m, s.page_size, inputs.gpu_name, notes)
    per_block = block_bytes(m, kv, block, since(PYTORCH_ALIGNED_SINCE, version))
    if s.max_running_requests is not None:
        max_batches, batch_source = s.max_running_requests, "--max-batch-size"
    else:
        max_batches, batch_source = default_max_batch(version, inputs.gpu_name)
    notes.append(f"max_batch_size {max_batches}: {batch_source}")
    free = free_after_weights(inputs, steps, notes)
    state = _state_bytes(inputs, max_batches, steps)
    era = pytorch_budget(version)
    runtime = 0
    if s.num_gpu_blocks_override:  # 0 is the default: size from memory
        blocks = s.num_gpu_blocks_override
        steps.append(BudgetStep(label="--num-gpu-blocks (memory not consulted)", value=blocks))
        if not since(NUM_GPU_BLOCKS_FLAG_SINCE, version):  # planned as the Python API's field, said so (FR2 #1)
            notes.append(python_api_blocks_note(version.label))
        budget = blocks * per_block
    elif era.value in ("fixed_share", "share"):
        share = FIXED_SHARE if era.value == "fixed_share" else ratio
        if era.value == "fixed_share":
            ratio, ratio_source = FIXED_SHARE, f"fixed {FIXED_SHARE:g} ({era.source})"
        budget = int(free * share)
        steps.append(BudgetStep(label=f"free × {share:g}", bytes=budget, note=ratio_source,
                                role="memory_fraction"))  # fmt: skip
        blocks = int(free * share / per_block)
    else:
        free -= state
        runtime, prefill = _runtime(inputs, era.value, free, ratio, per_block, max_batches, notes)
        steps.append(BudgetStep(label="− runtime reserve (logits of one prefill)", bytes=-runtime,
                                note=f"max_prefill_token_num {prefill:,}, vocab {m.vocab_size:,} ({era.source})"))  # fmt: skip
        if era.value == "per_rank":
            budget = int((free - runtime) * ratio)
            blocks = budget // per_block if budget > 0 else 0
        else:
            budget = int((free - runtime) * ratio)
            blocks = int((free - runtime) * ratio / per_block) if free > runtime else 0
        steps.append(BudgetStep(label=f"(free − runtime) × {ratio:g}", bytes=budget, note=ratio_source,
                                role="memory_fraction"))  # fmt: skip
    steps.append(BudgetStep(label=f"bytes per block: {block} tokens, every layer's descriptors", value=per_block))
    steps.append(BudgetStep(label="blocks (num_gpu_blocks)", value=blocks,
                            note=whole_blocks_note(budget, blocks, per_block, "cache share")))  # fmt: skip
    tokens = blocks * block
    steps.append(BudgetStep(label=f"tokens: blocks × {block}", value=tokens))
    over = inputs.fixed_pool_overflow(blocks * per_block + state, "--num-gpu-blocks", notes) if s.num_gpu_blocks_override else 0
    fits = blocks > (2 if era.value == "per_rank" else 0) and over == 0
    return EngineResult(
        engine="lmdeploy", token_capacity=tokens if fits else 0, page_size=block, num_blocks=blocks,
        kv_budget_bytes=max(budget, 0), kv_pool_bytes=(blocks * per_block + state) if fits else 0,
        state_pool_bytes=state if fits else 0, max_running_requests=max_batches, max_concurrency=None,
        reserve_bytes=runtime, memory_fraction=ratio, memory_fraction_source=ratio_source, fits=fits,
        shortfall_bytes=0 if fits else over or max(3 * per_block - budget, 1), steps=tuple(steps), notes=tuple(notes),
        capacity_fixed_by="--num-gpu-blocks" if s.num_gpu_blocks_override else None,
    )  # fmt: skip


def python_api_blocks_note(release: str) -> str:
    """Where the release's `serve api_server` has no `--num-gpu-blocks` (before 0.18.0), a count is the Python
    API's `PytorchEngineConfig.num_gpu_blocks`: planned so, and the copied launch (`to_flags`) leaves it out."""
    return (f"--num-gpu-blocks: LMDeploy {release}'s CLI has no such option (first in {NUM_GPU_BLOCKS_FLAG_SINCE.since}: "
            f"{NUM_GPU_BLOCKS_FLAG_SINCE.source}); planned as the Python API's PytorchEngineConfig.num_gpu_blocks, "
            "which the engine flags below leave out: pasted, the line sizes the pool from free memory")


def _state_bytes(inputs: EngineInputs, max_batches: int, steps: list[BudgetStep]) -> int:
    """The SSM state cache of hybrid models, reserved before the KV budget (v0.11.0+)."""
    per_slot = inputs.kv.state_bytes_per_request
    if not per_slot:
        return 0
    extra = pytorch_state_extra(inputs.version)
    if extra.value == 0:
        raise UnsupportedModelError(f"LMDeploy {inputs.version.label} has no linear-attention models (from v0.11.0)",
                                    field="--engine-version")  # fmt: skip
    budget = inputs.settings.prefix_cache_state_budget or 0
    slots = max_batches + extra.value + (budget if extra.value == 2 else 0)
    state = per_slot * slots
    steps.append(BudgetStep(label=f"− SSM state cache ({slots:,} slots)", bytes=-state, note=extra.source))
    return state


def _runtime(
    inputs: EngineInputs, era: str, free: int, ratio: float, per_block: int, max_batches: int, notes: list[str]
) -> tuple[int, int]:
    """(runtime reserve, max_prefill_token_num): halved until ≥ 16 blocks fit (`_get_runtime_size`); from 0.17.0 a
    DSA model's score workspace is inside the reserve (dsa.py)."""
    s, vocab = inputs.settings, inputs.model.vocab_size
    asked = s.max_prefill_tokens or pytorch_prefill(inputs.version).value
    workspace = score_workspace(inputs.model, inputs.version)
    if workspace is not None:
        notes.append(f"runtime reserve holds the DSA prefill score workspace, {mib(workspace.value)} "
                     f"(the default; 'Reserve … MiB for DSA prefill score workspace'): {workspace.source}")
    extra = workspace.value if workspace is not None else 0
    prefill, runtime = asked, 0
    while prefill > 0:
        if era == "runtime_x7":
            runtime = int(prefill * vocab * 7)
        else:
            runtime = int((prefill + 2 * max_batches) * vocab * 2) + extra
        if int((free - runtime) * ratio) // per_block >= MIN_BLOCKS:
            break
        prefill //= 2
    if prefill != asked:
        notes.append(f"max_prefill_token_num {asked:,} → {prefill:,}: LMDeploy halves it until {MIN_BLOCKS} blocks fit")
    return runtime, prefill
