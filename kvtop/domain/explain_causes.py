"""The likely cause of a capacity mismatch, worded for the engine at hand.

SGLang logs the free memory around the weight load and sizes its pool from a memory fraction, so
a gap can come from memory (a different fraction, an allocation before profiling) or from
geometry. vLLM logs the KV memory it had, so only geometry can differ: the model, KV heads per
rank (TP), KV dtype, block size or context length. A cause that would need the pool to be larger
than the memory it was carved from is never offered: there the model (geometry) differs.

Inputs that did not come from the log (a measured flag, the log's own KV dtype) are said here too,
as one-line notes, so an explanation never passes a flag's figure off as the log's.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvtop.domain.engine_log import EngineLog, Measured
from kvtop.domain.engines import MeasuredInputs
from kvtop.domain.launch import LaunchSettings

_GIB = 1 << 30
Ends = tuple[int, int, int]  # (low, value, high) bytes of a rounded figure


@dataclass(frozen=True)
class MismatchFacts:
    """What a cause is judged from: the logged figures and kvtop's central prediction."""

    engine: str
    logged_tokens: int
    gap_tokens: int  # logged − the nearest end of the predicted interval
    cell_bytes: int  # kvtop's KV bytes per token per rank
    model_name: str
    kv_dtype: str
    tp: int
    gpus: int  # tp × pp: the ranks whose minimum sized the pool
    ranks_seen: int
    page_size: int
    context_length: int | None = None
    logged_pool_bytes_per_token: int | None = None  # from SGLang's printed pool sizes
    kv_room_bytes: int | None = None  # SGLang: free after weight load (high end); vLLM: available KV
    gpu_total_bytes: int | None = None  # stated (--gpu / --gpu-memory), never a stand-in


def _gib(num_bytes: int) -> str:
    return f"{num_bytes / _GIB:.2f} GiB"


def likely_cause(facts: MismatchFacts) -> str:
    """One sentence: why the logged capacity is not the predicted one."""
    cell, told = facts.cell_bytes, facts.logged_pool_bytes_per_token
    if told and abs(told - cell) > max(1, cell // 100):
        return (f"the log's pool costs {told:,} B per token but the model and flags give {cell:,} B: the KV dtype, "
                f"layer count or heads per rank differ from what kvtop was told")  # fmt: skip
    if facts.gap_tokens < 0 and facts.ranks_seen < facts.gpus:
        return (f"the log shows {facts.ranks_seen} of {facts.gpus} ranks; the engine sized the pool from the "
                "tightest rank (minimum over all ranks), which this log does not show")  # fmt: skip
    if facts.engine == "vllm":
        return _vllm_geometry(facts)
    impossible = _beyond_memory(facts)
    if impossible:
        return impossible
    if facts.gap_tokens < 0:
        return ("memory was allocated between weight loading and KV profiling (draft model, LoRA, multimodal "
                "reserve, another process)")  # fmt: skip
    return ("the engine had more memory than the log's figures imply (a different memory fraction, page size "
            "or KV dtype than assumed)")  # fmt: skip


def _geometry_list(facts: MismatchFacts, block_word: str, context_word: str) -> str:
    context = f" or {context_word} ({facts.context_length:,})" if facts.context_length else ""
    return (f"the model ({facts.model_name}), KV heads per rank (TP {facts.tp}), KV dtype ({facts.kv_dtype}), "
            f"{block_word} ({facts.page_size}){context}")  # fmt: skip


def _vllm_geometry(facts: MismatchFacts) -> str:
    """vLLM printed the KV memory it had: what differs is how many bytes a token costs."""
    implied = ""
    if facts.kv_room_bytes and facts.logged_tokens:
        per_token = facts.kv_room_bytes // facts.logged_tokens
        implied = (f" (the log's {facts.logged_tokens:,} tokens in {_gib(facts.kv_room_bytes)} are about "
                   f"{per_token:,} B per token; kvtop's prediction uses {facts.cell_bytes:,} B)")  # fmt: skip
    return (f"vLLM logged the KV memory it had, so the geometry differs{implied}: "
            f"{_geometry_list(facts, 'block size', 'max_model_len')} are not what the engine ran with")  # fmt: skip


def _beyond_memory(facts: MismatchFacts) -> str | None:
    """The logged tokens at kvtop's bytes per token would not fit in the memory the pool came from."""
    needed = facts.logged_tokens * facts.cell_bytes
    limits = [(facts.kv_room_bytes, "free after weight load")]
    limits.append((facts.gpu_total_bytes, "on the whole GPU"))
    for room, where in limits:
        if room is not None and needed > room:
            return (f"the logged {facts.logged_tokens:,} tokens at {facts.cell_bytes:,} B per token would need "
                    f"{_gib(needed)}, more than the {_gib(room)} {where}: no memory setting explains that, "
                    f"so the geometry differs: {_geometry_list(facts, 'page size', 'context length')} are not what the engine ran")  # fmt: skip
    return None


# --- inputs not read from the log: said once each, as notes ---


def given_sglang(
    before: Ends | None, after: Ends | None, given: MeasuredInputs
) -> tuple[Ends | None, Ends | None, list[str]]:
    """Fill what the log lacks from the measured flags (exact figures), saying where each came from."""
    notes: list[str] = []
    for name, flag, value in (("before", "--free-memory", given.free_before_load_bytes),
                              ("after", "--free-after-load", given.free_after_load_bytes)):  # fmt: skip
        logged = before if name == "before" else after
        if value is None:
            continue
        if logged is not None:
            notes.append(
                f"{flag} {_gib(value)} not used: the log states free {name} load ({_gib(logged[1])})"
            )
            continue
        notes.append(f"free {name} load {_gib(value)}: from {flag}, not the log")
        before, after = ((value,) * 3, after) if name == "before" else (before, (value,) * 3)
    weights = given.weights_bytes
    if weights is not None and before is None and after is not None:
        before = (after[0] + weights, after[1] + weights, after[2] + weights)
        notes.append(
            f"free before load {_gib(before[1])}: free after load + --weights-memory {_gib(weights)}"
        )
    elif weights is not None and after is None and before is not None:
        after = (before[0] - weights, before[1] - weights, before[2] - weights)
        notes.append(f"free after load {_gib(after[1])}: free before load − --weights-memory {_gib(weights)}")
    elif weights is not None:
        notes.append("--weights-memory not used: the log states both free-memory figures")
    if given.non_kv_bytes is not None:
        notes.append("--non-kv-memory not used: it is vLLM's; SGLang sizes the pool from the free memory")
    return before, after, notes


_CANONICAL_KV_DTYPES = {
    "fp8_e4m3": ("fp8", "fp8_e4m3", "fp8_e4m3fn", "float8_e4m3fn"), "fp8_e5m2": ("fp8_e5m2", "float8_e5m2"),
    "bf16": ("bf16", "bfloat16"), "fp16": ("fp16", "float16", "half"), "fp32": ("fp32", "float32"),
}  # fmt: skip


def _canonical_kv_dtype(text: str) -> str | None:
    """kvtop's spelling of a KV dtype a flag or a log names (`torch.float8_e4m3fn` → fp8_e4m3)."""
    bare = text.strip().removeprefix("torch.").lower()
    return next((name for name, spellings in _CANONICAL_KV_DTYPES.items() if bare in spellings), None)


def with_log_kv_dtype(log: EngineLog, settings: LaunchSettings) -> tuple[LaunchSettings, list[str]]:
    """The KV dtype the log states, used when kvtop was told none; said when it contradicts the settings."""
    stated = log.sglang_first(
        lambda r: r.kv_cache_dtype or next((a.dtype for a in r.kv_allocations if a.dtype), None)
    )
    logged = _canonical_kv_dtype(stated) if stated else None
    if stated is None or logged is None:
        return settings, []
    if settings.kv_cache_dtype == "auto":
        note = f"KV dtype {logged}: from the log ({stated}); no --kv-cache-dtype was given"
        return settings.model_copy(update={"kv_cache_dtype": logged}), [note]
    if _canonical_kv_dtype(settings.kv_cache_dtype) not in (None, logged):
        return settings, [f"KV dtype: kvtop was told {settings.kv_cache_dtype} but the log states {stated}"]
    return settings, []


def given_vllm(
    available: Measured | None,
    logged_weights_bytes: int | None,
    given: MeasuredInputs,
    gpu_total_bytes: int | None,
) -> tuple[MeasuredInputs | None, list[str]]:
    """vLLM's KV memory from --non-kv-memory (with the GPU and the weights) when the log lacks it."""
    notes = [f"{flag} not used: vLLM sizes the pool from total × gpu_memory_utilization, not the free memory"
             for flag, value in (("--free-memory", given.free_before_load_bytes),
                                 ("--free-after-load", given.free_after_load_bytes)) if value is not None]  # fmt: skip
    if given.non_kv_bytes is None:
        if given.weights_bytes is not None:
            notes.append("--weights-memory not used: without --non-kv-memory it does not give the KV memory")
        return None, notes
    if available is not None:
        notes.append(
            f"--non-kv-memory not used: the log states the available KV memory ({_gib(available.value_bytes)})"
        )
        return None, notes
    if gpu_total_bytes is None:
        notes.append(
            "--non-kv-memory not used: it needs --gpu or --gpu-memory (KV = total × utilization − weights − non-KV)"
        )
        return None, notes
    weights = given.weights_bytes if given.weights_bytes is not None else logged_weights_bytes
    source = (
        "--weights-memory"
        if given.weights_bytes is not None
        else ("the log" if weights else "kvtop's estimate")
    )
    notes.append(
        f"available KV memory: from --non-kv-memory {_gib(given.non_kv_bytes)} (weights from {source}), not the log"
    )
    return MeasuredInputs(non_kv_bytes=given.non_kv_bytes, weights_bytes=weights), notes
