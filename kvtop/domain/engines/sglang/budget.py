"""SGLang's KV budget, as docs/engines/sglang.md states it (KVCacheConfigurator and friends).

    rest   = avail_after_load − pre_load × (1 − mem_fraction_static)        GiB floats, min over ranks
             − multimodal reserve                                           VLMs only (§4)
    budget = int(rest × 2**30)                                              bytes
    tokens = budget // cell // page × page                                  cell = bytes per token per rank

Weights are charged implicitly (they are no longer free after loading); the slack
`pre_load × (1 − mfs)` is the runtime reserve (activations, CUDA graphs, req_to_token…).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from kvtop.domain.engines.base import EngineInputs, EngineResult, KvCell
from kvtop.domain.engines.budget_step import BudgetStep
from kvtop.domain.engines.sglang.attention_backends import (
    check_attention_backend,
    named_backends,
)
from kvtop.domain.engines.sglang.checks import check_launch
from kvtop.domain.engines.sglang.context_len import context_note
from kvtop.domain.engines.sglang.cuda_graph_bs import decode_graph_max_bs
from kvtop.domain.engines.sglang.decode_graphs_off import DECODE
from kvtop.domain.engines.sglang.default_mha import check_sm120_default_mha
from kvtop.domain.engines.sglang.default_mla import check_default_backend_kv_dtype
from kvtop.domain.engines.sglang.dsa import (
    check_dsa_dp_attention,
    dsa_kv_note,
    forced_dsa_fraction,
    page_size_of,
)
from kvtop.domain.engines.sglang.dsv4 import DEFAULT_MAX_REQUESTS, dsv4_pool_bytes, dsv4_pools
from kvtop.domain.engines.sglang.encoder_disagg import check_language_model_only, encoder_urls_note
from kvtop.domain.engines.sglang.eras import (
    auto_mem_fraction_static,
    dsa_cell_counts_index,
    dsa_cell_is_latent,
    full_pool_reason,
    runner_multiplier,
)
from kvtop.domain.engines.sglang.flag_releases import check_neutral_flag_releases
from kvtop.domain.engines.sglang.graph_phase_flags import check_phase_flags
from kvtop.domain.engines.sglang.long_context import long_context_note
from kvtop.domain.engines.sglang.mamba_slots import mamba_slots, spec_allocated_bytes, too_small_note
from kvtop.domain.engines.sglang.mamba_spec_radix import check_spec_radix, radix_forced_off
from kvtop.domain.engines.sglang.mamba_strategy import mamba_ratio
from kvtop.domain.engines.sglang.moe_groups import moe_groups_note
from kvtop.domain.engines.sglang.moe_runner_note import runner_default_not_modelled
from kvtop.domain.engines.sglang.multimodal import (
    VLM_CACHE_MIB,
    multimodal_reserve_bytes,
    profiled_hopper_path,
    tower_unbuilt_note,
)
from kvtop.domain.engines.sglang.nvfp4_pad import plain_w13_pad_not_modelled
from kvtop.domain.engines.sglang.pp_layers import (
    most_stage_state,
    swa_cell_counts_whole_model,
    whole_model_kv_note,
)
from kvtop.domain.engines.sglang.prefill_graphs_off import PREFILL
from kvtop.domain.engines.sglang.prefill_graphs_optin import check_optin_flag
from kvtop.domain.engines.sglang.rope_growth import rope_growth
from kvtop.domain.engines.sglang.spec_requests import spec_default_requests
from kvtop.domain.engines.sglang.ssm_dtype import cache_key_not_modelled, ignored_env_note
from kvtop.domain.engines.sglang.torch_compile import check_torch_compile
from kvtop.domain.engines.sglang.vision_tp_reduce import vision_tp_reduce_note
from kvtop.domain.engines.sglang.whole_fraction import WHOLE, whole_fraction_note
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.kv import FP8_KV_FORMATS, KvBook, KvStorage, pooled_kinds
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import AttentionKind, LayerKind, ModelSpec
from kvtop.domain.rounding import round_down
from kvtop.domain.wording import GIB, MIB, a_gib, gib, mib

DEFAULT_SWA_FULL_TOKENS_RATIO = 0.8


def resolve_max_num_reqs(tokens: int, context: int, requested: int | None, attn_dp: int) -> int:
    """§7 resolve_max_num_reqs, before a Mamba hybrid's state-slot cap: --max-running-requests per attention-DP rank,
    else int(tokens ÷ context_len × 512) clamped to 2,048..4,096; at most tokens ÷ 2 either way."""
    if requested:
        return min(requested // attn_dp, tokens // 2)
    return min(max(2048, min(4096, int(tokens / context * 512))), tokens // 2)

class SglangBudget:
    """`solve_budget`: the budget of one rank set, from the tightest rank's memory (docs/engines/sglang.md §4, §6, §7)."""

    # SglangRules.kv_storage_for: the storage the ledger built the book with (which layers its pools count)
    kv_storage_for: Callable[[ModelSpec, LaunchSettings, ResolvedVersion], KvStorage]

    def solve_budget(self, inputs: EngineInputs) -> EngineResult:
        m, s, lay, kv, meas = inputs.model, inputs.settings, inputs.layout, inputs.kv, inputs.measured
        check_launch(inputs)
        check_language_model_only(m, s, inputs.version)  # where SGLang refuses it (encoder_disagg.py)
        check_spec_radix(inputs)  # 0.5.10 … 0.5.13: a hybrid under speculation with the radix cache on (mamba_spec_radix.py)
        steps: list[BudgetStep] = []
        notes: list[str] = []
        if forced_off := radix_forced_off(inputs):  # 0.5.8/0.5.9 turn it off themselves (mamba_spec_radix.py)
            s = s.model_copy(update={"disable_radix_cache": True})
            notes.append(forced_off)
        check_neutral_flag_releases(s.flags, inputs.version)  # a neutral flag typed where its release has none
        check_attention_backend(s, inputs.gpu_name, inputs.version)
        check_default_backend_kv_dtype(m, s, inputs.gpu_name, inputs.version)  # trtllm_mla, on SM100 (default_mla.py)
        check_sm120_default_mha(m, s, inputs.gpu_name, inputs.version)  # 0.5.6.post1/.post2's raise (default_mha.py)
        check_optin_flag(inputs)
        check_phase_flags(inputs, PREFILL)  # --cuda-graph-backend-prefill: only `disabled` (graph_phase_flags.py)
        check_phase_flags(inputs, DECODE)  # --cuda-graph-backend-decode: likewise
        check_torch_compile(inputs)  # --enable-torch-compile: from 0.5.10 (torch_compile.py)
        # --cuda-graph-bs 0.5.10 … 0.5.19, --cuda-graph-max-bs to 0.5.19, their -decode fields from 0.5.14: read once
        graph_bs = decode_graph_max_bs(inputs)  # (cuda_graph_bs.py), for the automatic fraction's reserve
        check_dsa_dp_attention(m, s, inputs.version)
        page, why = page_size_of(m, s.page_size, inputs.gpu_name, inputs.version, named_backends(s), s)
        if page > 1 and page != s.page_size:
            notes.append(f"page size {page}: {why}")
        for note in (
            dsa_kv_note(m, s.kv_cache_dtype, kv.kv_format, inputs.version),
            whole_model_kv_note(m, lay.pp, inputs.version),
            tower_unbuilt_note(m, s, inputs.version),
            moe_groups_note(m, s, inputs.version),
            long_context_note(inputs),  # a --context-length above the positions the launch allows (long_context.py)
            vision_tp_reduce_note(m, s, lay, inputs.version),  # an engine-line flag read for SGLang's encoder check
            encoder_urls_note(s, inputs.version),  # --language-only without --encoder-urls: a start SGLang refuses
        ):
            if note:
                notes.append(note)
        auto_mfs, auto_source = auto_mem_fraction_static(inputs, graph_bs)
        if s.mem_fraction_static is not None:
            mfs, mfs_source = s.mem_fraction_static, "--mem-fraction-static"
        else:
            mfs, mfs_source = auto_mfs, auto_source
        forced = forced_dsa_fraction(m, inputs.version)
        if forced is not None:
            mfs, mfs_source = forced
        runner = runner_multiplier(m, s, inputs.version)
        if runner != 1.0:  # before v0.4.9 the model runner cut a VLM's fraction, given or automatic
            mfs, mfs_source = mfs * runner, f"{mfs_source} × {runner:g} (the model runner's VLM cut)"
        total = inputs.gpu_total_bytes
        steps.append(meas.input_step(inputs.gpu_total_label(), "gpu_total_bytes", total, role="gpu_total"))
        pre = meas.free_before_load(total)
        pre_note, pre_source, pre_why = meas.free_before_load_note(), meas.free_before_load_source(), ""
        if meas.free_before_load_bytes is None and meas.free_after_load_bytes is not None:
            # the load's usage is pre − post (model_runner: weight_load_mem_usage), so a measured post-load figure
            # gives the pre-load one with the weights: CUDA's total and the context no longer enter
            pre, pre_note = meas.free_after_load_bytes + inputs.resident_bytes, None
            pre_source = inputs.weights_source or "assumed"  # as the weights' figure is (measured with both)
            pre_why = "the free memory after load (measured) + the weights"
        if pre_note:
            notes.append(pre_note)
        steps.append(
            BudgetStep(
                label="free before weight load (min over ranks)",
                bytes=pre,
                measured=meas.is_measured("free_before_load_bytes"),
                source=pre_source,
                note=pre_why,
            )
        )
        if meas.free_after_load_bytes is not None:
            avail = meas.free_after_load_bytes
            steps.append(meas.input_step("free after weight load", "free_after_load_bytes", avail))
        else:
            avail = pre - inputs.resident_bytes
            steps += inputs.weight_steps()
        slack_gib = pre / GIB * (1 - mfs)
        # what the automatic fraction would keep for CUDA graphs and activations (§5): a larger
        # given fraction leaves less, which SGLang does not check before it captures its graphs; a DSA fraction the
        # release forces over the flag is SGLang's own choice, not the user's, so there is nothing to warn of
        given = s.mem_fraction_static is not None and forced is None
        needed = round(pre * (1 - auto_mfs * runner)) if given else None
        whole = s.mem_fraction_static is not None and mfs >= WHOLE  # its own note below: it runs out, not may
        if needed is not None and needed > round(slack_gib * GIB) and not whole:
            notes.append(
                f"--mem-fraction-static {mfs:g} leaves {a_gib(pre * (1 - mfs))} runtime reserve; SGLang's automatic "
                f"{auto_mfs:.3f} keeps {gib(needed)} for CUDA graphs and activations: it may run out "
                "of memory capturing its graphs or under load"
            )
        steps.append(
            BudgetStep(
                label=f"− reserve: pre-load × (1 − {mfs:g})", bytes=-round(slack_gib * GIB), note=mfs_source,
                role="memory_fraction",
            )
        )
        rest_gib = avail / GIB - slack_gib
        said = inputs.measured.gpu_total_origin  # the 60 GiB line is nvidia-smi's (multimodal.LARGE_HOPPER_BYTES)
        mm_reserve = multimodal_reserve_bytes(m, s, inputs.version, inputs.gpu_name, inputs.gpu_total_bytes, said)
        if mm_reserve:
            profiled = profiled_hopper_path(m, inputs.version, inputs.gpu_name, inputs.gpu_total_bytes, said)
            what = "SGLang's default VLM cache" + (" + feature-transport pool" if mm_reserve > VLM_CACHE_MIB * MIB else "")
            if profiled:
                what = "the feature-transport pool of SGLang's large-Hopper Qwen3-VL path (VLM cache off)"
            steps.append(
                BudgetStep(label="− multimodal reserve", bytes=-mm_reserve, note=f"{mib(mm_reserve)}: {what}")
            )
            rest_gib -= mm_reserve / GIB
        grown = rope_growth(m, s, inputs.version)  # a --context-length above the positions (rope_growth.py)
        if grown is not None:
            steps.append(BudgetStep(label="− rope cache growth", bytes=-grown[0], note=f"{mib(grown[0])}: {grown[1]}"))
            rest_gib -= grown[0] / GIB
        state_slots, slots_per_request, too_small, state_short, spec_d = 0, 1, None, 0, 0
        state = kv.state_bytes_per_request
        if state and (env_note := ignored_env_note(s, inputs.version)):  # ssm_dtype.py: the launch's variable unused
            notes.append(env_note)
        if state and rest_gib > 0:
            state = most_stage_state(m, kv, lay.pp, inputs.version)  # §8.3.2: every stage's pool the fattest's
            per_request = mamba_ratio(m, s, inputs.version, page)[0]
            rest_gib, state_slots, spec_d = self._mamba(rest_gib, state, s, lay.attn_dp, inputs.version, per_request,
                                                        steps)  # fmt: skip
            slots_per_request = per_request if state_slots else 1
            too_small = too_small_note(state_slots, per_request, inputs.version)  # no request served (mamba_slots.py)
            state_short = (per_request - state_slots) * state  # at least the state of the slots one request lacks
        budget = int(rest_gib * GIB)
        steps.append(BudgetStep(label="KV budget", bytes=budget))
        swa_off = full_pool_reason(m, s, inputs.gpu_name, inputs.version)
        tokens, swa_tokens, solved, pool_bytes = self._pools(
            m, s, lay, kv, budget, page, swa_off, inputs.version, steps, notes, inputs.context_length
        )
        cell = solved.whole_bytes if isinstance(solved, KvCell) else solved
        if s.max_total_tokens is not None and tokens > s.max_total_tokens:
            tokens = round_down(s.max_total_tokens, page)
            steps.append(BudgetStep(label="capped by --max-total-tokens", value=tokens))
            pool_bytes = (
                dsv4_pool_bytes(solved, tokens) if isinstance(solved, KvCell)
                else self._pool_bytes(kv, tokens, swa_tokens, page)
            )  # fmt: skip
        fits = budget > 0 and tokens > 0
        shortfall = 0 if fits else max(-budget, cell * page, 1)
        if fits and too_small is not None:  # SGLang refuses it, or serves no request (mamba_slots.too_small_note)
            notes.append(too_small)
            fits, shortfall = False, max(state_short, 1)
        if not fits:
            tokens = swa_tokens = 0
            pool_bytes = 0
        # DeepSeek-V4's model hook sets 256 (dsv4.py) before the speculative hook's 48 (spec_requests.py) runs
        # (0.5.23 arg_groups/pipeline.py:220 model hooks, :306 handle_speculative_decoding)
        asked = s.max_running_requests or (
            DEFAULT_MAX_REQUESTS if m.compressed is not None else spec_default_requests(s, inputs.version)
        )
        context, context_why = inputs.context_length, context_note(m, s)  # the engine's (context_len.py: Whisper's 2048)
        requests = self._max_requests(tokens, context, asked, lay.attn_dp, state_slots, slots_per_request)
        req_to_token = (requests + 1) * (context + 4) * 4 if fits else 0
        runs_out = whole_fraction_note(mfs, req_to_token) if fits and whole else None
        if runs_out is not None:  # SGLang starts it and runs out of memory (whole_fraction.py)
            notes.append(runs_out)
            fits, shortfall = False, max(req_to_token, 1)
            tokens = swa_tokens = pool_bytes = 0  # as any launch that does not fit: no capacity it serves
        # the slots and the padding slot; under speculation the pool's intermediate states too, sized for the running
        # requests and one more whatever the charge took (mamba_slots.spec_allocated_bytes)
        state_bytes = (state_slots + 1) * state + spec_allocated_bytes(requests, spec_d, state) if state_slots else 0
        steps.append(BudgetStep(label="tokens", value=tokens, note=f"page {page}"))
        steps.append(BudgetStep(label="max running requests", value=requests, note=context_why))
        return EngineResult(
            engine="sglang", token_capacity=tokens, swa_token_capacity=swa_tokens, page_size=page,
            kv_budget_bytes=budget, kv_pool_bytes=pool_bytes + state_bytes, state_pool_bytes=state_bytes,
            state_slots=state_slots, state_slots_per_request=slots_per_request,
            max_running_requests=requests, max_concurrency=None, req_to_token_bytes=req_to_token,
            reserve_bytes=round(slack_gib * GIB) + mm_reserve, memory_fraction=mfs, memory_fraction_source=mfs_source,
            reserve_needed_bytes=None if needed is None else needed + mm_reserve,
            fits=fits, shortfall_bytes=shortfall, steps=tuple(steps), notes=tuple(notes),
            cell=solved if isinstance(solved, KvCell) else None,
            not_modelled=tuple(n for n in (
                plain_w13_pad_not_modelled(m, inputs.layout, inputs.gpu_name, inputs.version, inputs.settings.quantization),
                runner_default_not_modelled(m, inputs.gpu_name, inputs.version, inputs.settings.quantization),
                cache_key_not_modelled(m, s, inputs.version),
            ) if n),
        )  # fmt: skip

    def _mamba(
        self,
        rest_gib: float,
        per_req: int,
        s: LaunchSettings,
        attn_dp: int,
        version: ResolvedVersion,
        slots_per_request: int,
        steps: list[BudgetStep],
    ) -> tuple[float, int, int]:
        """§4.2 `_handle_max_mamba_cache` (mamba_slots.py): the slots, and speculative decoding's intermediate
        states beside them, off the rest; the draft tokens whose intermediates the pool holds (0: none)."""
        solved = mamba_slots(rest_gib, per_req, s, attn_dp, version, slots_per_request)
        steps.append(BudgetStep(label=f"− linear-attention state ({solved.label})",
                                bytes=-(solved.state_bytes + solved.spec_bytes)))  # fmt: skip
        return rest_gib - solved.state_bytes / GIB - solved.spec_bytes / GIB, solved.slots, solved.draft_tokens

    def _pools(
        self,
        m: ModelSpec,
        s: LaunchSettings,
        layout: ParallelLayout,
        kv: KvBook,
        budget: int,
        page: int,
        swa_off: str | None,
        version: ResolvedVersion,
        steps: list[BudgetStep],
        notes: list[str],
        context_length: int,
    ) -> tuple[int, int | None, int | KvCell, int]:
        """(tokens, SWA tokens, the cell: whole bytes, or the engine's own `KvCell`, the pools' bytes)."""
        if m.compressed is not None:  # DeepSeek-V4's pool configurator (dsv4.py)
            return dsv4_pools(m, s, layout, kv, budget, page, steps)
        swa_pool = kv.pool("swa")
        hybrid = swa_pool is not None and swa_off is None
        if swa_pool is not None and not hybrid:
            notes.append(f"sliding-window layers use the full pool (no hybrid SWA memory: {swa_off})")
        if hybrid and swa_pool is not None:
            # §6.2/§8.3: the cell counts this PP stage's full and sliding layers (before 0.5.23: the whole model's)
            ratio = s.swa_full_tokens_ratio or DEFAULT_SWA_FULL_TOKENS_RATIO
            full_part, swa_part = float(kv.full_bytes_per_token), float(swa_pool.bytes_per_token)
            whole = swa_cell_counts_whole_model(version)
            if whole:
                full_pool = kv.pool("full")
                stage_full = full_pool.layers if full_pool is not None else 0
                # the whole model's layers by the kind its pools hold them (Gemma-3n/4's KV-shared ones pooled, kv.py)
                kinds = pooled_kinds(m, self.kv_storage_for(m, s, version))
                full_part += swa_pool.bytes_per_layer_token * (kinds.count(LayerKind.FULL) - stage_full)
                swa_part += swa_pool.bytes_per_layer_token * (kinds.count(LayerKind.SLIDING) - swa_pool.layers)
            cell_f = full_part + ratio * swa_part
            full = round_down(int(budget // cell_f), page) if budget > 0 else 0
            swa = round_down(int(full * ratio), page)
            steps.append(
                BudgetStep(
                    # the float's binary tail (60211.200000000004) is not a byte: shown to a tenth of one
                    label=f"cell: full + {ratio:g} × SWA bytes per token", value=round(cell_f, 1),
                    note="whole-model layer counts, also under PP" if whole else "this PP stage's layers",
                )
            )  # fmt: skip
            return full, swa, math.ceil(cell_f), self._pool_bytes(kv, full, swa, page)
        cell = self._sizing_book(m, kv, version).full_bytes_per_token + kv.swa_bytes_per_token
        note = ""
        if cell != kv.full_bytes_per_token + kv.swa_bytes_per_token and not dsa_cell_counts_index(version):
            note = "the latent per layer, the indexer's keys not counted (0.5.3); the pool allocates both (§6.1.1)"
        elif cell != kv.full_bytes_per_token + kv.swa_bytes_per_token:
            note = "the raw FP8 latent + indexer per layer; the pool allocates 656 B rows (§6.1.1)"
        steps.append(BudgetStep(label="cell: KV bytes per token per rank", bytes=cell, note=note))
        tokens = round_down(budget // cell, page) if budget > 0 and cell else 0
        if budget > 0 and not cell:
            # no KV layer on the rank (a model of linear-attention layers only): SGLang 0.5.23
            # pool_configurator.py sizes max_total_num_tokens as _zero_kv_max_tokens, --max-total-tokens or the
            # context length (earlier releases not read: the same assumed)
            tokens = round_down(s.max_total_tokens or context_length, page)
            steps.append(BudgetStep(label="tokens: no KV layer (--max-total-tokens or the context)", value=tokens))
        return tokens, None, cell, self._pool_bytes(kv, tokens, None, page)

    @staticmethod
    def _sizing_book(m: ModelSpec, kv: KvBook, version: ResolvedVersion) -> KvBook:
        """§6.1.1: the book the token count divides by. Before v0.5.17 SGLang sized DeepSeek-V3.2's FP8 KV
        by the raw latent (kv_lora_rank + rope, 1 B each) + indexer, though its pool allocates 656 B rows;
        0.5.3 left the indexer's keys out of the cell (eras.py DSA_CELL_ERAS)."""
        if m.attention_kind is AttentionKind.DSA and not dsa_cell_counts_index(version):
            kv = kv.model_copy(update={"pools": tuple(p for p in kv.pools if p.name != "dsa_index")})
        full = kv.pool("full")
        if (
            m.mla is None
            or m.attention_kind is not AttentionKind.DSA
            or full is None
            or kv.kv_format not in FP8_KV_FORMATS
            or full.torch_dtype != "uint8"  # already the raw latent (trtllm)
            or not dsa_cell_is_latent(version)
        ):
            return kv
        latent = m.mla.latent_width
        raw = full.model_copy(
            update={"bytes_per_token": latent * full.layers, "bytes_per_layer_token": float(latent)}
        )
        return kv.model_copy(update={"pools": tuple(raw if p.name == "full" else p for p in kv.pools)})

    @staticmethod
    def _pool_bytes(kv: KvBook, tokens: int, swa_tokens: int | None, page: int) -> int:
        if swa_tokens is None:
            return (tokens + page) * (kv.full_bytes_per_token + kv.swa_bytes_per_token)
        return (tokens + page) * kv.full_bytes_per_token + (swa_tokens + page) * kv.swa_bytes_per_token

    @staticmethod
    def _max_requests(
        tokens: int, context: int, requested: int | None, attn_dp: int, state_slots: int, slots_per_request: int
    ) -> int:
        """§7 resolve_max_num_reqs; a Mamba hybrid at most its slots ÷ slots per request (§4.2.1)."""
        if tokens <= 0:
            return 0
        n = resolve_max_num_reqs(tokens, context, requested, attn_dp)
        if state_slots:
            n = min(n, state_slots // slots_per_request)
        return n
