"""vLLM's page-size unification for full-attention and sliding-window layers of different KV sizes
(docs/engines/vllm.md §4.6): Gemma-4, MiMo-V2-Flash.

`unify_kv_cache_spec_page_size` (vllm/v1/core/kv_cache_utils.py from v0.12.0; kv_cache_planning.py in v0.33.0)
makes every layer's page the largest: a layer whose page divides it takes `block_size × ratio` tokens a block (the
KV cache group keeps that block size). A page that does not divide it is, by release (`UNIFIED_PAGES_ERAS`): refused
(NotImplementedError), padded where its backend reads KV by block stride (not modelled), or, for non-MLA attention,
padded (`page_size_padded`). Before v0.12.0 unequal pages are not unified at all. The groups are then formed as for
equal pages (§4.1 step 6) with the one page per layer slot, and a request's blocks in each group count at that
group's own block size (`get_max_concurrency_for_kv_cache_config`: cdiv(max_memory_usage_bytes, page) per group,
the same sum in every release read).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.model import ModelSpec

#: What vLLM does with layers of unequal pages: "none" does not unify them; "scale" grows a dividing page's block
#: and refuses one that does not divide; "stride_pad" also pads a non-dividing page where the layer's backend opts in;
#: "pad" pads every non-MLA attention page that does not divide.
UnifyRule = Literal["none", "scale", "stride_pad", "pad"]
UNIFIED_PAGES_ERAS: Eras[UnifyRule] = Eras((
    Era("", "none", "v0.11.2 wheel vllm/v1/core/kv_cache_utils.py:1140-1177 get_kv_cache_groups: layers of unequal "
        "pages fall through to `raise NotImplementedError` (no unify_kv_cache_spec_page_size)"),
    Era("0.12.0", "scale", "PR #29143 ('[Hybrid Allocator] Support KV cache groups with different block_size'), "
        "first in v0.12.0: v0.12.0 wheel kv_cache_utils.py:885-922 unify_kv_cache_spec_page_size (block × ratio; "
        "a page that does not divide raises NotImplementedError), called by get_kv_cache_groups :1189-1229; the "
        "same function in v0.13.0-v0.23.0 (v0.19.0 :914-951, v0.23.0 :1029-1066)"),
    Era("0.24.0", "stride_pad", "v0.24.0 wheel kv_cache_utils.py:1049-1100: a page that does not divide is padded "
        "only where AttentionSpec.indexes_kv_by_block_stride (the backend's KV stride order puts blocks outermost, "
        "v1/attention/backend.py:205), else NotImplementedError; unchanged through v0.28.0 (:1036-1098)"),
    Era("0.29.0", "pad", "v0.29.0 wheel kv_cache_utils.py:1135-1197 (v0.33.0 kv_cache_planning.py:346-408): every "
        "non-MLA attention page that does not divide is padded (page_size_padded); MLA raises NotImplementedError, "
        "caught for get_kv_cache_groups' full-allocation fallback"),
))  # fmt: skip

#: Whether vLLM stores MiMo-V2-Flash's V heads padded to K's width (True) or at their own (`head_size_v`), by release.
#: Only MiMoV2FlashForCausalLM (mimo_v2_flash.py) ever padded: MiMoV2ForCausalLM is first registered in v0.21.0.
MIMO_V_PADDED_ERAS: Eras[bool] = Eras((
    Era("", False, "no MiMo-V2 class before v0.14.0 (v0.13.0 wheel: no models/mimo_v2_flash.py, registry.py names "
        "none): the release's architecture check refuses the class, not this rule"),
    Era("0.14.0", True, "v0.14.0-v0.19.1 wheels model_executor/models/mimo_v2_flash.py MiMoV2Attention: "
        "Attention(heads, head_dim) with V zero-padded to head_dim in forward (v0.19.0 :288-316; v0.14.0 "
        "registry.py:162 first registers MiMoV2FlashForCausalLM): K and V both head_dim wide"),
    Era("0.20.0", False, "v0.20.0 wheel models/mimo_v2_flash.py MiMoV2Attention :294-314: Attention(..., "
        "head_size_v=v_head_dim) on FlashAttentionDiffKVBackend (models/mimo_v2.py from v0.21.0)"),
))  # fmt: skip
V_PADDED_CLASS = "MiMoV2FlashForCausalLM"  # the class mimo_v2_flash.py registers (v0.14.0 registry.py:162)


def check_v_width(model: ModelSpec, version: ResolvedVersion) -> None:
    """Refuse MiMo-V2-Flash where vLLM pads its narrower V heads to K's width in the cache: kvtop's book keeps V at
    its own width (MIMO_V_PADDED_ERAS)."""
    if model.architecture != V_PADDED_CLASS or not MIMO_V_PADDED_ERAS.at(version):
        return
    geometries = [model.geometry(i) for i in range(model.num_layers)]
    narrow = next((g for g in geometries if g.v_head_dim != g.head_dim), None)
    if narrow is not None:
        raise UnsupportedModelError(
            f"vLLM {version.label} stores MiMo-V2's V heads padded to K's width ({narrow.v_head_dim} → "
            f"{narrow.head_dim}, mimo_v2_flash.py v0.14.0-v0.19.1), which kvtop's KV book does not model",
            field="engine",
            source=model.source,
        )


@dataclass(frozen=True)
class UnifiedPages:
    """One layer slot's page and each kind's tokens per block after unification."""

    page_bytes: int  # every layer's page: the largest kind's at the launch's block size
    full_block: int
    window_block: int
    why: str


def _refused(message: str, source: str | None) -> UnsupportedModelError:
    return UnsupportedModelError(message, field="engine", source=source)


def unified_pages(
    full_bytes_per_token: float,
    window_bytes_per_token: float,
    block: int,
    mla: bool,
    version: ResolvedVersion,
    source: str | None = None,
) -> UnifiedPages:
    """The unified page and block sizes of a full + sliding-window hybrid whose per-layer KV sizes differ."""
    rule = UNIFIED_PAGES_ERAS.at(version)
    sizes = f"{full_bytes_per_token:g} and {window_bytes_per_token:g} B per token and layer"
    if rule == "none":
        raise _refused(
            f"vLLM {version.label} refuses to start with full and sliding-window layers of different KV sizes "
            f"({sizes}): get_kv_cache_groups raises NotImplementedError before 0.12.0; with "
            "--disable-hybrid-kv-cache-manager it keeps one group, which kvtop sizes",
            source,
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
        elif rule == "scale":
            raise _refused(
                f"vLLM {version.label} refuses to start: the {kind} page of {page:,} B does not divide {largest:,} B "
                "(unify_kv_cache_spec_page_size: 'Cannot unify by adjusting block_size.', NotImplementedError)",
                source,
            )
        elif rule == "stride_pad":
            raise _refused(
                f"vLLM {version.label} pads a {kind} page of {page:,} B to {largest:,} B only where the layer's "
                "attention backend reads KV by block stride (indexes_kv_by_block_stride), else refuses to start: "
                "not modelled",
                source,
            )
        elif not mla:  # page_size_padded: the block keeps its tokens, the page is padded to the largest
            blocks[kind] = block
            notes.append(f"{kind} pages padded {page:,} → {largest:,} B")
        else:
            raise _refused(
                f"vLLM's page-size unification cannot scale or pad an MLA page of {page:,} B to {largest:,} B "
                "(NotImplementedError, then its full-allocation fallback): not modelled",
                source,
            )
    why = "unified pages (unify_kv_cache_spec_page_size): " + "; ".join(notes)
    return UnifiedPages(largest, blocks["full-attention"], blocks["sliding-window"], why)
