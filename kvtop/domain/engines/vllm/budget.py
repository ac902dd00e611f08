"""vLLM's (V1) KV budget, as docs/engines/vllm.md states it.

requested  = ceil(total × gpu_memory_utilization)
available  = requested − weights − non-KV runtime (activation peak, non-torch, CUDA graphs)
num_blocks = available // (block_size × bytes per token per layer) // group_size
tokens     = int(num_blocks / blocks_per_request × max_model_len)        the logged figure
concurrency = num_blocks / blocks_per_request                           "Maximum concurrency"

Blocks one request needs (§3): full/MLA `cdiv(L′, block)` with `L′ = cdiv(L, dcp)`; sliding window
`cdiv(min(window − 1 + in_flight, L), block) + 1`; Llama-4 chunked local attention
`cdiv(min(chunk + in_flight, L), block)`; `in_flight = max_concurrent_batches × max_num_batched_tokens`.
Before PR #41069 the logged figure was `num_blocks // groups × block × dcp` (§5 History).
"""

from __future__ import annotations

import math

from kvtop.domain.engines.base import EngineInputs, EngineResult
from kvtop.domain.engines.budget_step import BudgetStep
from kvtop.domain.engines.versions import ResolvedVersion, era_for
from kvtop.domain.engines.vllm.attention_select import check_triton_fp8
from kvtop.domain.engines.vllm.backends import block_size, check_attention, is_quantized
from kvtop.domain.engines.vllm.batching import (
    batched_tokens,
    check_entry_point,
    concurrent_batches,
    default_batch_limits,
)
from kvtop.domain.engines.vllm.batching_async import refuse_explicit_async
from kvtop.domain.engines.vllm.compile_cache import unread_warm_note
from kvtop.domain.engines.vllm.compile_charge import cold_compile_charge
from kvtop.domain.engines.vllm.deployment import setup as vllm_setup
from kvtop.domain.engines.vllm.dp_flags import refuse_unread_backend
from kvtop.domain.engines.vllm.dsv4 import MLA_BLOCK, dsv4_rank
from kvtop.domain.engines.vllm.encdec import GRAPHS_NOTE, encdec_cell, encoder_tokens
from kvtop.domain.engines.vllm.eras import (
    admission_reserved_blocks,
    chunked_local_hybrid,
    default_utilization,
    token_print_rule,
)
from kvtop.domain.engines.vllm.extensible_kv import (
    GRANULE_SOURCE,
    available_bytes,
    extensible,
    granule_blocks,
    margin_bytes,
    utilization_default,
)
from kvtop.domain.engines.vllm.extensible_kv import (
    SOURCE as EXTENSIBLE_SOURCE,
)
from kvtop.domain.engines.vllm.flags import RELEASE_SPANS
from kvtop.domain.engines.vllm.flags_table import refuse_missing
from kvtop.domain.engines.vllm.group_padding import padding_note
from kvtop.domain.engines.vllm.hybrid import HybridBlocks, hybrid_blocks
from kvtop.domain.engines.vllm.kernels import check_weights
from kvtop.domain.engines.vllm.launch_unmodelled import launch_not_modelled
from kvtop.domain.engines.vllm.long_context import long_context_note
from kvtop.domain.engines.vllm.page_unify import UnifiedPages, check_v_width, unified_pages
from kvtop.domain.engines.vllm.pp_groups import MERGED_GROUPS_ERAS, group_size_of, projected_groups
from kvtop.domain.engines.vllm.pp_split import PP_SPLIT_ERAS
from kvtop.domain.engines.vllm.runner_eras import runner_env_note
from kvtop.domain.engines.vllm.state_only import state_page
from kvtop.domain.engines.vllm.tower_heads import check_tower_heads
from kvtop.domain.engines.vllm.v0_backends import check_backend_env
from kvtop.domain.engines.vllm.v1_opt_in import check_v1_opt_in
from kvtop.domain.engines.vllm.windows import (
    EXTRA_RETAINED_ERAS,
    IN_FLIGHT_BATCHES_ERAS,
    extra_retained_tokens,
    spec_window,
)
from kvtop.domain.engines.vllm.wsl2_pinned import wsl2_pinned_note
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.kv import KvBook, PoolName
from kvtop.domain.layout import pp_layer_range
from kvtop.domain.model import LayerKind, ModelSpec
from kvtop.domain.rounding import ceil_div
from kvtop.domain.wording import GIB

# Activation peak + non-torch memory + CUDA graphs, when neither a log nor the operator says.
ESTIMATED_NON_KV_BYTES = 2 * GIB
# The range kvtop assumes around it where an estimate needs one (explain with --gpu): the real logs' profiles
# run from a few hundred MiB (small model, eager) to several GiB (large batches, CUDA graphs); not calibrated.
ESTIMATED_NON_KV_RANGE = (GIB // 2, 6 * GIB)
DSV4_WHY = ("DeepSeek-V4 (§4.7): its specs in packed groups (_get_packed_kv_cache_groups), each block strided by "
            "the widest group's page; the compressed latents at 256 tokens a block")  # fmt: skip


EXTENSIBLE_LOGGED_NOTE = (
    "vLLM v0.34.0's extensible KV cache: the logged 'Available KV cache memory' is the reservation before warmup; "
    "the cache is sized after warmup and CUDA-graph capture ('Memory after warmup' line, not read by kvtop)"
)


def start_request_bytes(total_bytes: int, utilization: float) -> int:
    """What its start asks free of `total_bytes` at `utilization` (§2.2: ceil(total × utilization), `request_memory`
    at v0.33.0; v0.13.0's `init_device` compares the float product, the same for whole bytes free)."""
    return math.ceil(total_bytes * utilization)


def starting_utilization(total_bytes: int, free_bytes: int) -> float:
    """The largest --gpu-memory-utilization, in hundredths, that passes the startup check with `free_bytes` free of
    `total_bytes` (§2.2: refused where free < ceil(total × utilization), `request_memory` at v0.33.0; v0.13.0's
    `init_device` compares the float product, the same for whole bytes free; 0: none passes)."""
    if total_bytes <= 0:
        return 0.0
    # the quotient's floor may be a hundredth under or, by the float product, over: try one above, step down
    util = min(math.floor(free_bytes / total_bytes * 100) + 1, 100) / 100
    while util > 0 and start_request_bytes(total_bytes, util) > free_bytes:
        util = round(util - 0.01, 2)
    return max(util, 0.0)


def is_chunked_local(model: ModelSpec) -> bool:
    """Llama 4: its windowed layers are chunked local attention (ChunkedLocalAttentionSpec), not SWA."""
    return model.chunked_local


class VllmBudget:
    """`solve_budget`: one worker's blocks from its own KV memory and its own layers (docs/engines/vllm.md §3–§5)."""

    # §4.8: an encoder-decoder's CrossAttentionSpec group counts beside the decoder's (encdec.py, v0.33.0). Not the
    # ring: v0.33.0's CircularBufferSpec layers (kv_cache_interface.py 968-1005) take a page a request each from the
    # same block pool, a group kvtop does not size yet, so a book with one is refused by name (EngineBase.solve)
    budget_pools: frozenset[PoolName] = frozenset({"full", "swa", "dsa_index", "state", "cross"})

    def solve_budget(self, inputs: EngineInputs) -> EngineResult:
        m, s, kv, meas = inputs.model, inputs.settings, inputs.kv, inputs.measured
        check_weights(m, s, inputs.layout, inputs.gpu_name, inputs.version)  # §3.6, as the config is built
        check_tower_heads(m, inputs.layout, inputs.version)  # §3.6, as the tower is built
        check_attention(m, kv.kv_format, inputs.gpu_name, inputs.version)  # §3.5, as the layers are
        check_triton_fp8(m, kv.kv_format, s, inputs.gpu_name, inputs.version)  # §3.5: TRITON_ATTN's FP8, by the pick
        check_v_width(m, inputs.version)  # §4.6: MiMo-V2's V padded to K's width before v0.20.0
        check_entry_point(s, inputs.version, m)  # §3: --llm-class / --engine-context batch defaults
        check_backend_env(inputs.version, s.flags)  # §2: VLLM_ATTENTION_BACKEND's engine, where not read
        # §2: a flag the release lacks, at the release resolved (a log's too); not at a release only inferred (from
        # dates or argument fields), where the flag that is there says the release is a later one
        if inputs.version.text is not None and not inputs.version.approximate:
            refuse_missing(s.flags, inputs.version.text, RELEASE_SPANS)
        refuse_unread_backend(s, inputs.version)  # --data-parallel-backend at the release resolved (dp_flags.py)
        refuse_explicit_async(s, inputs.version, m)  # §3: where vLLM raises on --async-scheduling
        check_v1_opt_in(inputs.version, s.flags, m, inputs.layout)  # §2: VLLM_USE_V1=1 before v0.8.0 (v1_opt_in.py)
        hybrid, state_only = None, None
        if m.attention_free:  # §4.4: every layer a MambaSpec, one block a request (state_only.py)
            state_only = state_page(kv, s, inputs.context_length)
            block, block_why = state_only[0], state_only[3]
        elif kv.pool("state") is not None:  # §4.4: the block grows until its page covers a Mamba state
            hybrid = hybrid_blocks(m, kv, inputs.layout, s, inputs.gpu_name, inputs.version)
            block, block_why = hybrid.block, hybrid.why
        else:
            block, block_why = block_size(m, is_quantized(kv.kv_format), inputs.gpu_name, inputs.version)
            block = s.page_size or block
        total = meas.engine_total(inputs.gpu_total_bytes)  # CUDA's total where calibrated (§2.1)
        total_source, cuda = meas.engine_total_source(), meas.engine_total_is_cuda()
        steps: list[BudgetStep] = [
            BudgetStep(
                label="GPU memory as CUDA reports it" if cuda else inputs.gpu_total_label(),
                bytes=total,
                measured=meas.is_measured("gpu_total_bytes"),
                source=total_source,
                role="cuda_total" if cuda else "gpu_total",
            )
        ]
        notes: list[str] = [f"{m.quant.source}: {m.quant.ignored}"] if m.quant.ignored else []
        # §2.6: a said warm the launch cannot read; §3.7: a --max-model-len above the positions the launch allows
        notes.extend(n for n in (unread_warm_note(inputs), long_context_note(inputs)) if n)
        notes.extend(n for n in (runner_env_note(inputs.version, m, s),) if n)  # §3: VLLM_USE_V2_MODEL_RUNNER (runner_eras.py)
        grows = extensible(s, inputs.version)  # v0.34.0 on: sized after warmup (extensible_kv.py)
        if s.gpu_memory_utilization is not None:
            util, util_source = s.gpu_memory_utilization, "--gpu-memory-utilization"
        else:
            util, util_source = utilization_default(s, inputs.version) or default_utilization(inputs.version)
        requested = start_request_bytes(total, util)
        steps.append(
            BudgetStep(
                label=f"requested: ceil(total × {util:g})", bytes=requested, note=util_source, role="memory_fraction"
            )
        )
        gpu_name = inputs.gpu_name
        batched_default, seqs_default, _ = default_batch_limits(
            total, gpu_name, inputs.version, s.llm_class, s.engine_context, s.flags
        )
        max_seqs = s.max_running_requests or seqs_default
        notes.extend(n for n in (wsl2_pinned_note(inputs, max_seqs),) if n)  # V2 under WSL2 (wsl2_pinned.py)
        unused = 0
        if s.kv_cache_memory_bytes is not None:
            available = s.kv_cache_memory_bytes
            steps.append(BudgetStep(label="--kv-cache-memory-bytes (profiling skipped)", bytes=available))
            # the utilization's share beyond weights and this KV size: the runtime's (measured, else the
            # estimate) and what no one claims, which stays free
            rest = requested - inputs.resident_bytes - available
            non_kv = min(rest, meas.non_kv_bytes if meas.non_kv_bytes is not None else ESTIMATED_NON_KV_BYTES)
            unused = max(rest - max(non_kv, 0), 0)
        elif meas.available_kv_bytes is not None:
            available = meas.available_kv_bytes
            non_kv = requested - inputs.resident_bytes - available
            steps.append(meas.input_step("available KV memory (logged)", "available_kv_bytes", available))
            if grows:
                notes.append(EXTENSIBLE_LOGGED_NOTE)
        else:
            non_kv = meas.non_kv(ESTIMATED_NON_KV_BYTES)
            non_kv_source = meas.non_kv_source()
            if meas.non_kv_bytes is None and (meas.calibrated is None or meas.calibrated.non_kv_bytes is None):
                notes.append(
                    "non-KV runtime memory (activations, non-torch, CUDA graphs) is estimated at 2 GiB"
                )
            steps += inputs.weight_steps()
            steps.append(
                BudgetStep(
                    label="− activation peak, non-torch, CUDA graphs",
                    bytes=-non_kv,
                    measured=meas.is_measured("non_kv_bytes"),
                    source=non_kv_source,
                )
            )
            available = requested - inputs.resident_bytes - non_kv
            if grows:
                available = self._extensible(inputs, requested, non_kv, steps)
            steps.append(BudgetStep(label="available KV memory", bytes=available))
        max_len = inputs.context_length
        unify = s.disable_hybrid_kv_cache_manager or (
            is_chunked_local(m) and not chunked_local_hybrid(inputs.version)
        )
        stage = None
        if inputs.layout.pp > 1 and MERGED_GROUPS_ERAS.at(inputs.version):  # §4.2: every stage's groups, projected
            stage = pp_layer_range(m.num_layers, inputs.pp_rank, inputs.layout.pp, PP_SPLIT_ERAS.at(inputs.version))
        dsv4 = None
        if m.compressed is not None:  # §4.7: DeepSeek-V4's own specs in packed groups (dsv4.py)
            dsv4 = dsv4_rank(m, inputs.layout, kv, inputs.gpu_name, inputs.version, s.page_size)
            block, block_why = MLA_BLOCK, DSV4_WHY
            groups = [("swa" if g.window else "full", 1) for g in dsv4.groups]
            group_size, page_bytes, unified = 1, dsv4.block_bytes, None
        elif state_only is not None:
            groups, group_size, page_bytes, unified = [("state", 1)], state_only[2], state_only[1], None
        else:
            groups, group_size, page_bytes, unified = self._groups(m, kv, block, unify, hybrid, stage, inputs.version)
        in_flight = 0
        if any(kind in ("swa", "chunked") for kind, _ in groups):  # only windowed groups read the in-flight tokens
            batched, source = batched_tokens(s, batched_default, max_seqs, max_len)
            batches, batches_why = concurrent_batches(s, inputs.layout.pp, inputs.version, m)
            if not IN_FLIGHT_BATCHES_ERAS.at(inputs.version):  # the spec counts one batch before v0.26.0
                batches, batches_why = 1, era_for(IN_FLIGHT_BATCHES_ERAS, inputs.version).source
            in_flight = batches * batched
            steps.append(
                BudgetStep(
                    label=f"tokens in flight: {batches} × max_num_batched_tokens {batched:,}",
                    value=in_flight,
                    note=f"{source}; batches: {batches_why}",
                )
            )
            if s.max_num_batched_tokens is None and total >= 70 * GIB and gpu_name is None:
                notes.append(
                    f"max_num_batched_tokens: vLLM's default {batched_default} assumed; the GPU model is "
                    "not known (2048 on an A100, and before v0.8.5 on any GPU but an H100 or H200): "
                    "--max-num-batched-tokens makes it exact"
                )
        # 0 for a chunked local model (its spec takes none), so it rides on the in-flight tokens below
        retained = extra_retained_tokens(m, vllm_setup(s), inputs.version) if any(k == "swa" for k, _ in groups) else 0
        if retained:  # §3.4.2: multi-module MTP keeps k − 1 more tokens below each sliding window
            steps.append(BudgetStep(label="tokens a sliding group keeps below its window (multi-module MTP: k − 1)",
                                    value=retained, note=era_for(EXTRA_RETAINED_ERAS, inputs.version).source))
        encoder = 0
        if any(kind == "cross" for kind, _ in groups):  # §4.8: cross-attention pages follow the encoder's tokens
            encoder, encoder_why = encoder_tokens(s, batched_default, max_seqs, max_len)
            steps.append(BudgetStep(label="encoder tokens a request's cross-attention holds", value=encoder,
                                    note=encoder_why))  # fmt: skip
            if s.kv_cache_memory_bytes is None and meas.available_kv_bytes is None and meas.non_kv_bytes is None:
                notes.append(GRAPHS_NOTE)
        dcp = inputs.layout.dcp
        mamba_blocks = hybrid.mamba_blocks_per_request if hybrid else 0
        if dsv4 is not None:
            blocks_per_request = dsv4.blocks_per_request(max_len, in_flight)
        elif state_only is not None:
            blocks_per_request = 1
        else:
            blocks_per_request = self._blocks_per_request(
                groups, block, max_len, spec_window(m, inputs.version) or max_len, in_flight + retained, dcp,
                mamba_blocks, unified, encoder,
            )
        from_memory = int(available // page_bytes // group_size) if available > 0 and page_bytes else 0
        # v0.34.0's extensible cache maps each layer slot's region in whole VMM granules (extensible_kv.py); read for
        # attention layers of one page size (Mamba state, DeepSeek-V4's packed groups: not read, ≤ 2 MiB a slot)
        granular = grows and meas.available_kv_bytes is None and dsv4 is None and state_only is None and hybrid is None
        if granular:
            from_memory = granule_blocks(available, page_bytes, group_size)
        num_blocks = from_memory if s.num_gpu_blocks_override is None else s.num_gpu_blocks_override
        block_note = unified.why if unified else "" if s.page_size and hybrid is None else block_why
        padding = padding_note(kv, groups, group_size) if stage is None and dsv4 is None and state_only is None else ""
        steps.append(
            BudgetStep(
                label=f"blocks of {block:,} tokens ({page_bytes * group_size:,} B each)",
                value=num_blocks,
                note="; ".join(n for n in (block_note, padding, GRANULE_SOURCE if granular else "") if n),
            )
        )
        needed = blocks_per_request * page_bytes * group_size
        fixed_by = "--num-gpu-blocks-override" if s.num_gpu_blocks_override is not None else (
            "--kv-cache-memory-bytes" if s.kv_cache_memory_bytes is not None else None)  # fmt: skip
        # an override no larger than the blocks this worker's own KV memory makes fits by construction (the engine
        # core's least over the workers, §4, arrives as one): only a larger one can fail to allocate
        within = fixed_by == "--num-gpu-blocks-override" and s.kv_cache_memory_bytes is None and num_blocks <= from_memory
        over = inputs.fixed_pool_overflow(num_blocks * page_bytes * group_size, fixed_by, notes) if fixed_by and not within else 0
        held = admission_reserved_blocks(inputs.version)  # v0.29.0+: the check leaves the null block out (§4.2)
        fits = available > 0 and num_blocks - held >= blocks_per_request and over == 0
        length_blocks = blocks_per_request == ceil_div(max_len, block) and num_blocks > held
        estimate = (num_blocks - held) * block if length_blocks else None  # vLLM's estimated maximum (§4.2)
        concurrency = num_blocks / blocks_per_request if fits else 0.0
        tokens, tokens_label = 0, f"tokens: int(blocks ÷ {blocks_per_request:,} × {max_len:,})"
        refusal = ""
        if fits:
            every_group = sum(count for _, count in groups)  # §5 History: each group of each kind
            tokens, tokens_label = self._logged_tokens(
                inputs.version, num_blocks, blocks_per_request, every_group, block, max_len, dcp
            )
        elif not over:
            tokens_label, refusal = _refusal(available, num_blocks, blocks_per_request, block, max_len, estimate, held)
        steps.append(BudgetStep(label=tokens_label, value=tokens, note=refusal))
        return EngineResult(
            engine="vllm", token_capacity=tokens, page_size=block, num_blocks=num_blocks,
            block_bytes=page_bytes * group_size, estimated_max_model_len=estimate,
            short_of_context=not fits and not over and available > 0,  # _refusal's second error, not its first
            kv_budget_bytes=max(available, 0), kv_pool_bytes=num_blocks * page_bytes * group_size if fits else 0,
            max_running_requests=max_seqs, max_concurrency=concurrency, reserve_bytes=max(non_kv, 0), unused_bytes=unused,
            memory_fraction=util, memory_fraction_source=util_source, fits=fits,
            shortfall_bytes=0 if fits else over or needed - available, steps=tuple(steps), notes=tuple(notes),  # a negative budget adds to it
            not_modelled=launch_not_modelled(inputs),  # named, never guessed (launch_unmodelled.py)
            cell=dsv4.cell(max_len, in_flight) if dsv4 is not None else (
                encdec_cell(block, blocks_per_request, page_bytes * group_size, max_len, encoder) if encoder else None),
            state_slots=num_blocks if state_only is not None and fits else 0, capacity_fixed_by=fixed_by,
            request_blocks=blocks_per_request if fixed_by and not fits and not over else None,
            start_cache=cold_compile_charge(inputs),  # §2.6: a cold torch.compile, not known before the start
        )  # fmt: skip

    @staticmethod
    def _extensible(inputs: EngineInputs, requested: int, non_kv: int, steps: list[BudgetStep]) -> int:
        """v0.34.0's extensible KV cache (extensible_kv.py): the free memory at the worker's start less all that stays
        resident, the transient peak and a margin of max(1 GiB, 0.75 × that peak), within the request."""
        meas = inputs.measured
        free = meas.free_before_load(inputs.gpu_total_bytes)
        calibrated = meas.calibrated
        peak = calibrated.activation_bytes if calibrated is not None else None
        margin = margin_bytes(peak or 0)  # max(1 GiB, …): the floor where the peak is not known
        why = "max(1 GiB, 0.75 × the activation peak)" if peak is not None else "1 GiB, the floor (peak not known)"
        steps.append(BudgetStep(label="free at the worker's start (the extensible KV cache's headroom)", bytes=free,
                                measured=meas.is_measured("free_before_load_bytes"), note=EXTENSIBLE_SOURCE))
        steps.append(BudgetStep(label="− sizing margin kept free", bytes=-margin, note=f"{why} ({EXTENSIBLE_SOURCE})"))
        # non_kv holds the activation peak (kept free in full) beside what stays resident (non-torch, graphs)
        return available_bytes(requested_bytes=requested, free_at_start_bytes=free,
                               resident_bytes=inputs.resident_bytes + non_kv - (peak or 0),
                               transient_peak_bytes=peak or 0)  # fmt: skip

    @staticmethod
    def _groups(
        m: ModelSpec,
        kv: KvBook,
        block: int,
        unify: bool,
        hybrid: HybridBlocks | None,
        stage: range | None,
        version: ResolvedVersion,
    ) -> tuple[list[tuple[str, int]], int, int, UnifiedPages | None]:
        """KV cache groups of same-type layers: ([(kind, groups of that kind)], group_size, page bytes per layer
        slot, the unified pages where full and sliding-window pages differ); §4.1 step 6: group_size is the least
        layer count of a kind, or the most if under the release's ratio × the least (pp_groups.group_size_of)."""
        full = kv.pool("full")
        state = kv.pool("state")
        if hybrid is not None and full is not None and state is not None:
            if stage is not None:  # §4.2: every stage's groups, projected onto this worker
                full_groups, mamba_groups, slots = projected_groups(m, stage, version, mamba=True)
                return [("full", full_groups), ("mamba", mamba_groups)], slots, hybrid.page_bytes, None
            own = full.own_spec_layers  # a draft's layers of their own KV shape: a kind of their own (dflash.py)
            size = group_size_of((full.layers - own, *((own,) if own else ()), state.layers), version)
            full_groups = ceil_div(full.layers - own, size) + ceil_div(own, size)
            return [("full", full_groups), ("mamba", ceil_div(state.layers, size))], size, hybrid.page_bytes, None
        swa = kv.pool("swa")
        index = kv.pool("dsa_index")
        cross = kv.pool("cross")
        if cross is not None and full is not None and swa is None:  # §4.8: two groups of one page, one pool
            size = group_size_of((full.layers, cross.layers), version)
            kinds = [("full", ceil_div(full.layers, size)), ("cross", ceil_div(cross.layers, size))]
            return kinds, size, int(block * full.bytes_per_layer_token), None
        attention = full or swa
        per_layer = attention.bytes_per_layer_token if attention is not None else 0.0
        if index is not None and attention is not None:  # one group of per-layer sizes: latent + indexer key
            per_layer += index.bytes_per_token / attention.layers  # (fewer indexers than layers: GLM-5.2)
        page = int(block * per_layer)
        if swa is None and m.config_sliding_window:  # §3.4: the config's window over every layer
            return [("swa", 1)], full.layers if full else 0, page, None
        if unify and full is not None and swa is not None and full.bytes_per_layer_token != swa.bytes_per_layer_token:
            # §4.6: one UniformTypeKVCacheSpecs group whose block is every layer's own page, summed
            summed = full.layers * int(block * full.bytes_per_layer_token) + swa.layers * int(block * swa.bytes_per_layer_token)
            return [("full", 1)], 1, summed, None
        if swa is None or unify:
            layers = (full.layers if full else 0) + (swa.layers if swa else 0)
            return [("full", 1)], layers, page, None
        unified = None
        if full is not None and full.bytes_per_layer_token != swa.bytes_per_layer_token:  # §4.6 (page_unify.py)
            if index is not None:
                raise UnsupportedModelError(
                    "vLLM's page-size unification with an indexer cache is not modelled", field="engine", source=m.source
                )
            unified = unified_pages(
                full.bytes_per_layer_token, swa.bytes_per_layer_token, block, m.mla is not None, version, m.source
            )
            page = unified.page_bytes
        windowed = "chunked" if is_chunked_local(m) else "swa"
        nf, ns = (full.layers if full else 0), swa.layers
        if nf == 0:
            return [(windowed, 1)], ns, page, None
        if stage is not None and len(m.layers_of(LayerKind.FULL)) and len(m.layers_of(LayerKind.SLIDING)):
            full_groups, windowed_groups, slots = projected_groups(m, stage, version)
            return [("full", full_groups), (windowed, windowed_groups)], slots, page, unified
        size = group_size_of((nf, ns), version)
        return [("full", ceil_div(nf, size)), (windowed, ceil_div(ns, size))], size, page, unified

    @staticmethod
    def _blocks_per_request(
        groups: list[tuple[str, int]],
        block: int,
        max_len: int,
        window: int,
        in_flight: int,
        dcp: int,
        mamba_blocks: int,
        unified: UnifiedPages | None = None,
        encoder: int = 0,
    ) -> int:
        """Σ over groups of the blocks one request of `max_len` tokens takes (docs/engines/vllm.md §3, §4.4, §5),
        each group at its own block size where pages were unified (§4.6); a cross-attention group the `encoder` tokens
        (§4.8); a windowed group `window` tokens, the window vLLM's spec holds (windows.py)."""
        local_len = ceil_div(max_len, dcp)  # L′: decode context parallel splits a request's tokens
        total = 0
        full_block, window_block = (unified.full_block, unified.window_block) if unified else (block, block)
        for kind, count in groups:
            if kind == "full":
                total += count * ceil_div(local_len, full_block)
            elif kind == "cross":  # CrossAttentionSpec.max_memory_usage_bytes ÷ page (encdec.py)
                total += count * ceil_div(encoder, block)
            elif kind == "mamba":  # MambaSpec.max_memory_usage_bytes ÷ page
                total += count * mamba_blocks
            elif kind == "chunked":
                total += count * ceil_div(min(window + in_flight, max_len), block)
            else:
                total += count * (ceil_div(min(window - 1 + in_flight, max_len), window_block) + 1)
        return total

    @staticmethod
    def _logged_tokens(
        version: ResolvedVersion,
        num_blocks: int,
        blocks_per_request: int,
        groups: int,
        block: int,
        max_len: int,
        dcp: int,
    ) -> tuple[int, str]:
        """(the `GPU KV cache size` figure, its step label) by the version's print rule (docs/engines/vllm.md §5)."""
        by_concurrency = int(num_blocks / blocks_per_request * max_len)
        by_blocks = num_blocks // groups * block * dcp
        if token_print_rule(version) == "blocks":
            times_dcp = f" × {dcp}" if dcp > 1 else ""
            return by_blocks, f"tokens: blocks // {groups:,} × {block:,}{times_dcp} (vLLM {version.label})"
        return by_concurrency, f"tokens: int(blocks ÷ {blocks_per_request:,} × {max_len:,})"


def _refusal(
    available: int, num_blocks: int, per_request: int, block: int, max_len: int, estimate: int | None, held: int
) -> tuple[str, str]:
    """(the step's label, its note) where vLLM refuses to start: no KV memory, or one request of the max seq len
    needs more blocks than the memory makes. vLLM v1 `_check_enough_kv_cache_memory` (vllm/v1/core/
    kv_cache_planning.py at v0.33.0, kv_cache_utils.py before; docs/engines/vllm.md §4.2) raises "No available
    memory for the cache blocks" or "To serve at least one request with the model's max seq len (L), (X GiB KV cache
    is needed, which is larger than the available KV cache memory (Y GiB). Based on the available memory, the
    estimated maximum model length is N." Where a request's blocks are its length's (one full-attention group), N is
    the blocks the check counts × their tokens (`estimate`, the budget's): from v0.29.0 the check counts one block
    fewer than the pool holds (`held`, the null block: `admission_reserved_blocks`), and the pool still holds them
    all."""
    if available <= 0:
        return "tokens: 0, no KV memory left", "vLLM refuses to start: 'No available memory for the cache blocks'"
    label = f"tokens: one request needs {per_request:,} blocks"
    note = (
        f"vLLM refuses to start: 'To serve at least one request with the model's max seq len ({max_len}), …' "
        f"({num_blocks:,} blocks fit)"
    )
    if estimate is not None:
        longest = estimate
        if held:
            note += (
                f"; --max-model-len {longest} or less starts (vLLM's estimated maximum: the check leaves "
                f"{held} of the {num_blocks:,} blocks out, the null block)"
            )
        else:
            note += f"; --max-model-len {longest} or less starts with {longest:,} tokens (vLLM's estimated maximum)"
    return label, note
