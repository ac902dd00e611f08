"""Single changes to try when a rebuilt capacity misses the logged one (each engine picks its own).

A cause is named only when applying it rebuilds the logged figure (`kvtop.domain.explain`); these
helpers list the usual suspects — another page size, KV dtype or TP than kvtop was told — as
settings to re-solve with.
"""

from __future__ import annotations

from collections.abc import Iterable

from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import LayerKind, ModelSpec

PAGE_SIZES = (1, 16, 32, 64, 128, 256)
TP_SIZES = (1, 2, 4, 8)


def changed(settings: LaunchSettings, **update: object) -> LaunchSettings | None:
    """`settings` with `update`, or None when that changes nothing or is not a valid launch."""
    if all(getattr(settings, field) == value for field, value in update.items()):
        return None
    try:
        return LaunchSettings.model_validate({**settings.model_dump(), **update})
    except ValueError:
        return None


def geometry_candidates(
    model: ModelSpec, settings: LaunchSettings, page: int, kv_dtypes: tuple[str, str]
) -> Iterable[tuple[str, LaunchSettings | None]]:
    """Another page size, the other KV dtype, another TP (what a log's own lines may not state)."""
    for size in PAGE_SIZES:
        if size != page:
            yield f"page size {size} (not {page})", changed(settings, page_size=size)
    wide, narrow = kv_dtypes
    other = narrow if settings.kv_cache_dtype in ("auto", wide) else wide
    yield f"KV dtype {other} (not {settings.kv_cache_dtype})", changed(settings, kv_cache_dtype=other)
    for tp in TP_SIZES:
        if tp != settings.tp and model.num_attention_heads % tp == 0:
            yield (
                f"TP {tp} (not {settings.tp})",
                changed(settings, tp=tp, ep=1, dp=1, enable_dp_attention=False),
            )


def has_windowed_layers(model: ModelSpec) -> bool:
    return LayerKind.SLIDING in model.layer_attention
