"""How LMDeploy's rules price a cause and what its fixes are (docs/engines/lmdeploy.md §1–§6).

LMDeploy gives `cache_max_entry_count` of the memory left after the weights to KV, the least over its
TP ranks: a GiB held by anyone on one GPU costs every rank `ratio` GiB of KV at a restart. Its KV is
quantised by `--quant-policy` (int8/int4 on both engines, FP8 on the PyTorch engine from v0.14.0),
and TurboMind cuts `session_len` down to what its blocks hold.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from kvtop.domain.diagnose_findings import (
    Finding,
    LayoutOptions,
    LedgerRule,
    Severity,
    Thresholds,
    advice_severity,
    all_ranks,
    capacity_change,
    larger_plan,
)
from kvtop.domain.engines.least_free import restart_capacity as restart_capacity  # the least free sizes all
from kvtop.domain.engines.least_free import restart_ledger as restart_ledger
from kvtop.domain.engines.lmdeploy.budget_pytorch import block_bytes
from kvtop.domain.engines.lmdeploy.ep_sizes import backend_dp_refusal, dp_refusal
from kvtop.domain.engines.lmdeploy.eras import (
    NUM_GPU_BLOCKS_FLAG_SINCE,
    PYTORCH_ALIGNED_SINCE,
    since,
    turbomind_share,
)
from kvtop.domain.engines.lmdeploy.flags import quant_policy
from kvtop.domain.engines.lmdeploy.memory import resolve_backend
from kvtop.domain.engines.lmdeploy.pytorch_world import pytorch_world, pytorch_world_refusal
from kvtop.domain.engines.restart import restart_without_kv
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.launch_change import change_words
from kvtop.domain.ledger_values import Ledger, WhatIf
from kvtop.domain.wording import gib, with_article

if TYPE_CHECKING:
    from kvtop.domain.diagnose_engine import EngineOnNode

DEFAULT_RATIO = 0.8  # TurboMind from v0.2.2, the PyTorch engine always (§5)
HIGHEST_RATIO = 0.95  # the largest share kvtop proposes: the rest holds runtime buffers and CUDA graphs


def spread_evidence(ledger: Ledger, tokens: int, ranks: str) -> str:
    ratio = ledger.engine.memory_fraction
    share = f"{ratio:g} of each byte it loses" if ratio < 1 else "a fixed block count"
    return (
        f"LMDeploy sizes every rank by the least free GPU (a MIN over the TP ranks): −{tokens:,} tokens on each of "
        f"{ranks}; KV takes {share}"
    )


def fp8_kv_dtype(ledger: Ledger) -> str:
    """LMDeploy spells KV quantisation `--quant-policy`, which the generic FP8 rule cannot write: the
    current format is returned (the generic rule then gains nothing) and `_kv_quant_policy` advises instead."""
    return ledger.settings.kv_cache_dtype


def layout_alternatives(ledger: Ledger, attn_tp: int) -> LayoutOptions:
    """Smaller-TP replicas over the same GPUs (`--tp` × `--dp`); none, and why, where the release has no `--dp`
    (before v0.8.0, ep_sizes.py `dp_refusal`) or its backend does not run them (`backend_dp_refusal`: TurboMind
    before v0.11.0, the PyTorch engine's one DP world)."""
    s = ledger.settings
    groups = max(1, s.tp // attn_tp)
    alternative = s.model_copy(update={"tp": attn_tp, "dp": groups * s.dp, "ep": 1})
    version = ledger.version
    refusal = dp_refusal(alternative, version)
    if refusal is None:
        backend, _ = resolve_backend(ledger.model, alternative, version)
        if backend == "pytorch":  # its --dp runs inside one world (pytorch_world.py): --tp keeps the GPUs
            alternative = s.model_copy(update={"dp": groups * s.dp, "ep": 1})
            refusal = _pytorch_alternative_refusal(alternative, version, ledger.layout.gpus, attn_tp)
        else:
            refusal = backend_dp_refusal(backend, alternative, version)
    if refusal is not None:
        return LayoutOptions(none_because=f"--tp {alternative.tp} --dp {alternative.dp}: {refusal}")
    return LayoutOptions(layouts=(alternative,))


def _pytorch_alternative_refusal(alternative: LaunchSettings, version: ResolvedVersion, gpus: int, attn_tp: int) -> str | None:
    """Why the PyTorch engine's DP world at `alternative` is not attention TP `attn_tp` over the same `gpus`."""
    refusal = pytorch_world_refusal(alternative, version)
    if refusal is not None:
        return refusal
    world = pytorch_world(alternative, version) or alternative.tp
    if world != gpus or world // alternative.dp != attn_tp:
        return (f"LMDeploy {version.label}'s PyTorch engine runs it as a world of {world} GPUs at attention TP "
                f"{world // alternative.dp} (pytorch_world.py)")  # fmt: skip
    return None


def reported_kv_memory(ledger: Ledger, reported_kv_pool_bytes: int | None) -> int | None:
    """LMDeploy sizes its pool from the memory free after the weights (TurboMind from v0.2.2, the
    PyTorch engine always): a smaller pool is measured free memory, not a larger reserve (§5)."""
    return None


def absolute_budget(ledger: Ledger, kv_bytes: int) -> dict[str, int | float] | None:
    """A block count that holds `kv_bytes` per rank: the PyTorch engine's `--num-gpu-blocks` (memory not
    consulted, §4.3; more than 2 blocks) where the release's CLI declares it (0.18.0 on: NUM_GPU_BLOCKS_FLAG_SINCE),
    TurboMind's `--cache-max-entry-count` ≥ 1 before v0.15 (§1); None for TurboMind's object cache (v0.15+ takes
    only a share below 1) and the PyTorch engine before 0.18.0 (no option sets a count)."""
    model, version = ledger.model, ledger.version
    backend, _ = resolve_backend(model, ledger.settings, version)
    if backend == "pytorch" and not since(NUM_GPU_BLOCKS_FLAG_SINCE, version):
        return None
    if backend == "pytorch":
        per_block = block_bytes(model, ledger.ranks[0].kv, ledger.engine.page_size, since(PYTORCH_ALIGNED_SINCE, version))
        blocks = kv_bytes // per_block if per_block else 0
        return {"num_gpu_blocks_override": blocks} if blocks > 2 else None
    if turbomind_share(version).value not in ("total", "free"):
        return None
    blocks = kv_bytes // (ledger.kv_bytes_per_token * ledger.engine.page_size)
    return {"cache_max_entry_count": float(blocks)} if blocks >= 1 else None


def reserve_finding(engine: EngineOnNode, thresholds: Thresholds) -> Finding | None:
    """`reserve_larger_than_expected`: a `cache_max_entry_count` below LMDeploy's default 0.8 leaves
    the rest of the free memory to the runtime."""
    assert engine.ledger is not None and engine.replay is not None
    settings, replay = engine.ledger.settings, engine.replay
    ratio = settings.cache_max_entry_count
    if ratio is None or ratio >= DEFAULT_RATIO or engine.ledger.engine.memory_fraction != ratio:
        return None  # the default, a block count, or an era whose default differs
    fixed = settings.model_copy(update={"cache_max_entry_count": DEFAULT_RATIO})
    gain = replay.capacity(fixed) - replay.capacity()
    if gain <= 0:
        return None
    budget = engine.ledger.engine.kv_budget_bytes
    extra = round(budget / ratio * (DEFAULT_RATIO - ratio))
    return engine.finding(
        rule="reserve_larger_than_expected",
        severity=advice_severity(gain, engine.ledger.token_capacity, thresholds),
        summary=f"cache_max_entry_count {ratio:g} is below LMDeploy's default {DEFAULT_RATIO:g}: −{gain:,} tokens per rank",
        bytes=extra, tokens=gain, gain_tokens=gain, fix=change_words(settings, fixed),
        evidence=(
            f"KV gets {ratio:g} of the free memory after the weights; {gib(extra)} more stays free for the runtime",
            "lower it only for runtime OOMs (activations, CUDA graphs, a vision tower)",
        ),
        fix_settings=fixed,
    )  # fmt: skip


def restart_finding(engine: EngineOnNode) -> Finding | None:
    """`restart_will_not_fit`: a restart on the GPUs as they are now leaves no KV block (TurboMind) or ≤ 2
    (the PyTorch engine: 'No enough gpu memory for kv cache.')."""
    return restart_without_kv(engine, leaves="leaves no KV blocks", evidence=(
        "LMDeploy: 'No enough gpu memory for kv cache.' (PyTorch engine) / max_block_count = 0 (TurboMind)",
    ))  # fmt: skip


def _kv_quant_policy(ledger: Ledger, replay: WhatIf, thresholds: Thresholds) -> Finding | None:
    """`bf16_kv_where_int8_supported`: 16-bit KV where `--quant-policy 8` (int8 + per-token scales) doubles it."""
    if ledger.kv_format not in ("bf16", "fp16") or not ledger.engine.fits:
        return None
    fixed = ledger.settings.model_copy(update={"kv_cache_dtype": "8"})
    alt = larger_plan(ledger, replay, fixed)
    if alt is None:
        return None
    gain = alt.token_capacity - ledger.token_capacity
    gpus, ranks = all_ranks(ledger)
    change, start = capacity_change(ledger.token_capacity, alt.token_capacity)
    return Finding(
        rule="bf16_kv_where_int8_supported", severity=Severity.INFO,
        summary=f"KV cache is {ledger.kv_format}; LMDeploy's int8 KV (--quant-policy 8): +{gain:,} tokens per rank",
        gpus=gpus, ranks=ranks, bytes=(ledger.kv_bytes_per_token - alt.kv_bytes_per_token) * ledger.token_capacity,
        bytes_words="today's tokens take this much less KV in int8; nothing is freed: the pool keeps its size and holds more",
        tokens=gain, fix=change_words(ledger.settings, fixed), gain_tokens=gain,
        evidence=(
            f"KV bytes per token per rank: {ledger.kv_bytes_per_token:,} B → {alt.kv_bytes_per_token:,} B "
            f"(int8 + {with_article(f'{ledger.model.dtype_bytes * 8}-bit')} scale and zero per token and head)",
            change,
            "quality: LMDeploy reports int8 KV close to fp16 on its evals; int4 (--quant-policy 4) costs more; check yours",
        ),
        fix_settings=fixed, start=start,
    )  # fmt: skip


def _session_truncated(ledger: Ledger, replay: WhatIf, thresholds: Thresholds) -> Finding | None:
    """`session_len_truncated`: the blocks hold fewer tokens than `session_len`, so TurboMind cuts it (§2.3)."""
    tokens, wanted = ledger.token_capacity, ledger.context_length
    if not ledger.engine.fits or tokens >= wanted:
        return None
    s = ledger.settings
    fixed, gain = s.model_copy(update={"context_length": tokens}), 0
    ratio = ledger.engine.memory_fraction
    shares = [r / 100 for r in range(int(ratio * 100) + 5, int(HIGHEST_RATIO * 100) + 1, 5)] if ratio < 1 else []
    candidates = [s.model_copy(update={"cache_max_entry_count": r}) for r in shares]
    if quant_policy(s.kv_cache_dtype) == 0:
        candidates.append(s.model_copy(update={"kv_cache_dtype": "8"}))
    for candidate in candidates:
        capacity = replay.capacity(candidate)
        if capacity >= wanted:
            fixed, gain = candidate, capacity - tokens
            break
    fix = change_words(s, fixed)  # as the copied launch writes it at the plan's release
    gpus, ranks = all_ranks(ledger)
    return Finding(
        rule="session_len_truncated", severity=Severity.WARNING,
        summary=f"session_len {wanted:,} does not fit: LMDeploy truncates it to {tokens:,} tokens",
        gpus=gpus, ranks=ranks, bytes=(wanted - tokens) * ledger.kv_bytes_per_token, tokens=wanted - tokens,
        fix=fix, gain_tokens=gain,
        evidence=(
            f"{ledger.engine.num_blocks or 0:,} blocks × {ledger.engine.page_size} tokens = {tokens:,} < {wanted:,}",
            "TurboMind: 'No enough blocks for `session_len` …, `session_len` truncated to …' (v0.12+: "
            "'… due to limited KV cache memory'); one request then holds every block",
        ),
        fix_settings=fixed,
    )  # fmt: skip


ledger_rules: Sequence[LedgerRule] = (_kv_quant_policy, _session_truncated)
