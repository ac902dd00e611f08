"""vLLM's page-size unification for full-attention and sliding-window layers of different KV sizes
(docs/engines/vllm.md §4.6): Gemma-4, MiMo-V2-Flash.

`unify_kv_cache_spec_page_size` (vllm/v1/core/kv_cache_planning.py in v0.33.0) makes every layer's page the
largest: a layer whose page divides it takes `block_size × ratio` tokens a block (the KV cache group keeps that
block size); a non-MLA attention page that does not divide it keeps its block and is padded
(`page_size_padded`); an MLA one raises NotImplementedError (vLLM then tries a full-allocation fallback, not
modelled). The groups are then formed as for equal pages (§4.1 step 6) with the one page per layer slot, and a
request's blocks in each group count at that group's own block size
(`get_max_concurrency_for_kv_cache_config`: cdiv(max_memory_usage_bytes, page) per group).
"""

from __future__ import annotations

from dataclasses import dataclass

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.errors import UnsupportedModelError

# Whether sizing models unified pages with a block size per group, by release.
UNIFIED_PAGES_ERAS: Eras[bool] = Eras((
    Era("", False, "not read before v0.33.0: per-group block sizes came with PR #29143 ('[Hybrid Allocator] "
        "Support KV cache groups with different block_size', reviewed 2025-11-21), whose first release is not "
        "pinned; kvtop refuses rather than guess"),
    Era("0.33.0", True, "v0.33.0 wheel: vllm/v1/core/kv_cache_planning.py unify_kv_cache_spec_page_size, "
        "_get_kv_cache_groups_uniform_page_size; engine-diff runs of Gemma-4-26B-A4B and MiMo-V2-Flash"),
))  # fmt: skip


@dataclass(frozen=True)
class UnifiedPages:
    """One layer slot's page and each kind's tokens per block after unification."""

    page_bytes: int  # every layer's page: the largest kind's at the launch's block size
    full_block: int
    window_block: int
    why: str


def unified_pages(
    full_bytes_per_token: float,
    window_bytes_per_token: float,
    block: int,
    mla: bool,
    version: ResolvedVersion,
    source: str | None = None,
) -> UnifiedPages:
    """The unified page and block sizes of a full + sliding-window hybrid whose per-layer KV sizes differ."""
    if not UNIFIED_PAGES_ERAS.at(version):
        raise UnsupportedModelError(
            "vLLM's page-size unification for full and sliding-window layers of different KV sizes "
            f"({full_bytes_per_token:g} and {window_bytes_per_token:g} B per token and layer, as in Gemma-4 and "
            f"MiMo-V2) is not modelled before 0.33.0 (vLLM {version.label}); with --disable-hybrid-kv-cache-manager "
            "vLLM keeps one group, which kvtop sizes; model",
            field="engine",
            source=source,
        )
    full_page, window_page = int(block * full_bytes_per_token), int(block * window_bytes_per_token)
    largest = max(full_page, window_page)
    blocks = {}
    notes = []
    for kind, page in (("full-attention", full_page), ("sliding-window", window_page)):
        if page == largest:
            blocks[kind] = block
        elif largest % page == 0:  # the block grows by the ratio: the page is then the largest
            blocks[kind] = block * (largest // page)
            notes.append(f"{kind} blocks {blocks[kind]} tokens ({page:,} B × {largest // page} = {largest:,} B)")
        elif not mla:  # page_size_padded: the block keeps its tokens, the page is padded to the largest
            blocks[kind] = block
            notes.append(f"{kind} pages padded {page:,} → {largest:,} B")
        else:
            raise UnsupportedModelError(
                f"vLLM's page-size unification cannot scale or pad an MLA page of {page:,} B to {largest:,} B "
                "(NotImplementedError, then its full-allocation fallback): not modelled",
                field="engine",
                source=source,
            )
    why = "unified pages (unify_kv_cache_spec_page_size): " + "; ".join(notes)
    return UnifiedPages(largest, blocks["full-attention"], blocks["sliding-window"], why)
