"""SGLang's hybrid Mamba / linear-attention slot ratio by release: how many Mamba state slots one running request
takes (`_calculate_mamba_ratio`, docs/engines/sglang.md §4.2.1), which `--mamba-radix-cache-strategy auto` picks, and
how the slot count is solved from the Mamba share (`MAMBA_SLOT_ERAS`, read by mamba_slots.py). Split out of eras.py
(the fraction, page and pool eras) so each module keeps one job."""

from __future__ import annotations

from kvtop.domain.deployment_flags import flag_set
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion, era_for
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import ModelSpec

# §4.2.1 Hybrid Mamba / linear attention: Mamba slots per running request, and how the slot count is solved.
# From v0.5.14 `--mamba-radix-cache-strategy auto` picks `extra_buffer` for these architectures (with the
# overlap schedule on, the default), whose tracking slots add 2 to the base ratio 3 (1 once PP turns the
# overlap schedule off, which it does after the strategy is chosen); before, `auto` was `no_buffer`.
# The list as v0.5.14 has it (`_support_mamba_cache_extra_buffer`, with the default triton linear-attention
# backend); architectures added to it later (Kimi-Linear, Bailing V3 …) are counted 3 by kvtop.
MAMBA_EXTRA_BUFFER_ARCHS = frozenset(
    {
        "Qwen3_5ForConditionalGeneration",
        "Qwen3_5MoeForConditionalGeneration",
        "Qwen3NextForCausalLM",
        "InternS2PreviewForConditionalGeneration",
        "MiniCPMV4_6ForConditionalGeneration",
        "BailingMoeV2_5ForCausalLM",
        "FalconH1ForCausalLM",
        "GraniteMoeHybridForCausalLM",
        "NemotronHForCausalLM",
        "NemotronHPuzzleForCausalLM",
    }
)
# What the default strategy does by release, not when the flag exists: `--mamba-radix-cache-strategy`'s own row
# (flags_unmodelled_late.py) says the releases read that take it (first v0.5.16: v0.5.14 was not read).
MAMBA_STRATEGY_ERAS: Eras[str] = Eras((
    Era("", "no_buffer", "server_args.py: mamba_scheduler_strategy auto → no_buffer (ratio 3)"),
    Era("0.5.14", "auto", "_handle_mamba_radix_cache: auto → extra_buffer with the overlap schedule or page > 1"),
))
# Slots K from the Mamba share B of the rest: K = B // per_req charged K × per_req, then (v0.5.17)
# K = (B − per_req) // per_req charged (K + 1) × per_req, the pool's padding slot counted. Same bytes.
MAMBA_SLOT_ERAS: Eras[bool] = Eras((
    Era("", False, "model_runner handle_max_mamba_cache: int(budget // mamba_cache_per_req)"),
    Era("0.5.17", True, "KVCacheConfigurator._handle_max_mamba_cache: (budget − per_req) // per_req, + 1 slot"),
))


# `--disable-overlap-schedule` (v0.4.0 on, store_true): typed, `auto` takes extra_buffer only where the page is over 1
# (v0.5.14 server_args.py:4385-4394 `wants_overlap or wants_paging`, v0.5.23 arg_groups/overrides.py:477-486), and then
# one tracking slot, not two (v0.5.13 model_runner_kv_cache_mixin.py:233-250, v0.5.23 mem_cache/allocation_sizing.py:11-19
# `2 if overlap else 1`). The flag's only effect on what kvtop sizes: the KV pool of a full-attention model is sized
# before the overlap worker's buffers exist (v0.5.23 managers/scheduler.py:575, `init_overlap` after it)
OVERLAP_OFF_FLAG = "--disable-overlap-schedule"


def overlap_off(settings: LaunchSettings) -> bool:
    """Whether the launch turns SGLang's overlap schedule off (`--disable-overlap-schedule`)."""
    return flag_set(settings, OVERLAP_OFF_FLAG.removeprefix("--"))


def mamba_ratio(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion, page: int) -> tuple[int, str]:
    """(Mamba slots per running request, why): `_calculate_mamba_ratio`, on the launch's page (the one the budget
    solved: a backend's own page counts, set before the strategy is chosen)."""
    if settings.disable_radix_cache:
        return 1, "radix cache off: 1 Mamba slot per request"
    strategy = era_for(MAMBA_STRATEGY_ERAS, version).value
    if strategy != "auto" or model.architecture not in MAMBA_EXTRA_BUFFER_ARCHS:
        return 3, "3 Mamba slots per request (no_buffer)"
    if overlap_off(settings):
        if page > 1:
            return 4, f"3 + 1 Mamba slots per request (extra_buffer at page {page}, {OVERLAP_OFF_FLAG})"
        return 3, f"3 Mamba slots per request (no_buffer: {OVERLAP_OFF_FLAG} at page 1)"
    if settings.pp > 1:
        return 4, "3 + 1 Mamba slots per request (extra_buffer; PP turns the overlap schedule off)"
    return 5, "3 + 2 Mamba slots per request (extra_buffer with the overlap schedule)"
