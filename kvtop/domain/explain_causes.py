"""The likely cause of a capacity mismatch, worded for the engine at hand.

SGLang logs the free memory around the weight load and sizes its pool from a memory fraction, so
a gap can come from memory (a different fraction, an allocation before profiling) or from
geometry. vLLM logs the KV memory it had, so only geometry can differ: the model, KV heads per
rank (TP), KV dtype, block size or context length. A cause that would need the pool to be larger
than the memory it was carved from is never offered: there the model (geometry) differs.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvtop.domain.wording import gib


@dataclass(frozen=True)
class MismatchFacts:
    """What a cause is judged from: the logged figures and kvtop's central prediction."""

    engine_name: str  # the engine's own name ("vLLM"), for the wording
    kv_memory_logged: bool  # the log states the KV memory itself: only geometry can differ
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
    logged_pool_bytes_per_token_ends: tuple[int, int] | None = None  # its ends from the sizes' 2-decimal rounding
    kv_room_bytes: int | None = None  # SGLang: free after weight load (high end); vLLM: available KV
    gpu_total_bytes: int | None = None  # stated (--gpu / --gpu-memory), never a stand-in
    # what caps the engine's tokens apart from memory, in its own flags (`token_caps_of` in explanation.py)
    token_caps: str = "the context bound"


def likely_cause(facts: MismatchFacts) -> str:
    """One sentence: why the logged capacity is not the predicted one."""
    cell, told, ends = facts.cell_bytes, facts.logged_pool_bytes_per_token, facts.logged_pool_bytes_per_token_ends
    if told and abs(told - cell) > max(1, cell // 100) and not (ends and ends[0] <= cell <= ends[1]):
        return (f"the log's pool costs {told:,} B per token but the model and flags give {cell:,} B: the KV dtype, "
                f"layer count or heads per rank differ from what kvtop was told")  # fmt: skip
    if facts.gap_tokens < 0 and facts.ranks_seen < facts.gpus:
        return (f"the log shows {facts.ranks_seen} of {facts.gpus} ranks; the engine sized the pool from the "
                "tightest rank (minimum over all ranks), which this log does not show")  # fmt: skip
    if facts.kv_memory_logged:
        return _geometry_of_logged_memory(facts)
    impossible = _beyond_memory(facts)
    if impossible:
        return impossible
    if facts.gap_tokens < 0:
        return ("memory was allocated between weight loading and KV profiling (draft model, LoRA, multimodal "
                "reserve, another process)")  # fmt: skip
    return ("the engine had more memory than the log's figures imply (a different memory fraction, page size "
            "or KV dtype than assumed)")  # fmt: skip


def token_cap(facts: MismatchFacts) -> str | None:
    """Fewer tokens than the memory allows while the printed pool sizes hold kvtop's cell within their rounding:
    the pool was sized by a token cap, not by the memory (the engine's cap flag, `facts.token_caps`, or the context
    bound).
    A cause read from the log's own figures, not a guess: `likely_cause` is asked only where this is None."""
    ends = facts.logged_pool_bytes_per_token_ends
    if ends is None or facts.gap_tokens >= 0 or facts.kv_memory_logged or not ends[0] <= facts.cell_bytes <= ends[1]:
        return None
    return (f"the log's pool costs {ends[0]:,}–{ends[1]:,} B per token (its printed sizes' rounding), which holds "
            f"kvtop's {facts.cell_bytes:,} B: the cell agrees, so the {facts.logged_tokens:,} tokens are a token cap "
            f"({facts.token_caps}), not the memory")  # fmt: skip


def _geometry_list(facts: MismatchFacts, block_word: str, context_word: str) -> str:
    context = f" or {context_word} ({facts.context_length:,})" if facts.context_length else ""
    return (f"the model ({facts.model_name}), KV heads per rank (TP {facts.tp}), KV dtype ({facts.kv_dtype}), "
            f"{block_word} ({facts.page_size}){context}")  # fmt: skip


def _geometry_of_logged_memory(facts: MismatchFacts) -> str:
    """The engine printed the KV memory it had: what differs is how many bytes a token costs."""
    implied = ""
    if facts.kv_room_bytes and facts.logged_tokens:
        per_token = facts.kv_room_bytes // facts.logged_tokens
        implied = (f" (the log's {facts.logged_tokens:,} tokens in {gib(facts.kv_room_bytes)} are about "
                   f"{per_token:,} B per token; kvtop's prediction uses {facts.cell_bytes:,} B)")  # fmt: skip
    return (f"{facts.engine_name} logged the KV memory it had, so the geometry differs{implied}: "
            f"{_geometry_list(facts, 'block size', 'max_model_len')} are not what the engine ran with")  # fmt: skip


def _beyond_memory(facts: MismatchFacts) -> str | None:
    """The logged tokens at kvtop's bytes per token would not fit in the memory the pool came from."""
    needed = facts.logged_tokens * facts.cell_bytes
    limits = [(facts.kv_room_bytes, "free after weight load")]
    limits.append((facts.gpu_total_bytes, "on the whole GPU"))
    for room, where in limits:
        if room is not None and needed > room:
            return (f"the logged {facts.logged_tokens:,} tokens at {facts.cell_bytes:,} B per token would need "
                    f"{gib(needed)}, more than the {gib(room)} {where}: no memory setting explains that, "
                    f"so the geometry differs: {_geometry_list(facts, 'page size', 'context length')} are not what the engine ran")  # fmt: skip
    return None
