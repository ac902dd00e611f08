"""Bounded value types for config.json sections, and the section base every schema model extends.

Bounds are what any GPU node could hold, not what today's models use (see `config_schema`'s docstring):
a field typed here is refused at the door, naming it, when it is the wrong type or out of bounds.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

MAX_LAYERS = 10_000
MAX_HIDDEN = 1 << 20
MAX_HEADS = 1 << 14
MAX_HEAD_DIM = 1 << 14
MAX_INTERMEDIATE = 1 << 24
MAX_VOCAB = 1 << 24
MAX_POSITIONS = 1 << 32
MAX_EXPERTS = 1 << 16
MAX_DIM = 1 << 16
MAX_NAME = 256

Layers = Annotated[int, Field(strict=True, ge=1, le=MAX_LAYERS)]
LayerCount = Annotated[int, Field(strict=True, ge=0, le=MAX_LAYERS)]  # a count of layers that may be 0
LayerIndex = Annotated[int, Field(strict=True, ge=0, le=MAX_LAYERS)]
Hidden = Annotated[int, Field(strict=True, ge=1, le=MAX_HIDDEN)]
Heads = Annotated[int, Field(strict=True, ge=1, le=MAX_HEADS)]
HeadDim = Annotated[int, Field(strict=True, ge=1, le=MAX_HEAD_DIM)]
Intermediate = Annotated[int, Field(strict=True, ge=0, le=MAX_INTERMEDIATE)]
Vocab = Annotated[int, Field(strict=True, ge=1, le=MAX_VOCAB)]
Positions = Annotated[int, Field(strict=True, ge=1, le=MAX_POSITIONS)]
Window = Annotated[int, Field(strict=True, ge=0, le=MAX_POSITIONS)]  # 0: no window
Experts = Annotated[int, Field(strict=True, ge=0, le=MAX_EXPERTS)]
Dim = Annotated[int, Field(strict=True, ge=1, le=MAX_DIM)]
LatentDim = Annotated[int, Field(strict=True, ge=0, le=MAX_DIM)]  # 0 where the config says use_mla: false
Name = Annotated[str, Field(strict=True, max_length=MAX_NAME)]
Flag = Annotated[bool, Field(strict=True)]
Bit = Annotated[int, Field(strict=True, ge=0, le=1)]
Factor = Annotated[float, Field(strict=True, gt=0, le=1e6, allow_inf_nan=False)]
FieldName = Annotated[str, Field(strict=True, max_length=64)]


def _one_or_per_layer(bound: int) -> Any:
    """An integer, or a list with one per layer (real checkpoints write both: `intermediate_size`,
    `moe_layer_freq`), each in 0 … `bound`."""

    def check(value: Any) -> Any:
        items = value if isinstance(value, list) else [value]
        if isinstance(value, list) and len(value) > MAX_LAYERS:
            raise ValueError(f"must have at most {MAX_LAYERS:,} items")
        for item in items:
            if isinstance(item, bool) or not isinstance(item, int):
                raise ValueError("must be an integer or a list of integers (one per layer)")
            if not 0 <= item <= bound:
                raise ValueError(f"must be between 0 and {bound:,} (or a list of such, one per layer)")
        return value

    return BeforeValidator(check)


def _window_pattern(value: Any) -> Any:
    """Gemma-3's every-n-th layer (an integer ≥ 1), or EXAONE-4's letters ("LLLG": L local, G global)."""
    if isinstance(value, str):
        if not value or len(value) > 64 or set(value) - {"L", "G"}:
            raise ValueError("must be an integer or letters L and G (at most 64)")
        return value
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_LAYERS:
        raise ValueError(f"must be an integer from 1 to {MAX_LAYERS:,} or letters L and G")
    return value


WindowPattern = Annotated[int | str, BeforeValidator(_window_pattern)]
PerLayerIntermediate = Annotated[int | list[int], _one_or_per_layer(MAX_INTERMEDIATE)]
# one integer, or one per expert group (ERNIE-4.5-VL's [text, vision] moe_num_experts, moe_layer_*_index)
ExpertGroups = Annotated[int | list[int], _one_or_per_layer(MAX_EXPERTS)]
LayerIndexGroups = Annotated[int, Field(strict=True, ge=-1, le=MAX_LAYERS)] | Annotated[
    list[int], _one_or_per_layer(MAX_LAYERS + 1)
]
PerLayerCount = Annotated[int | list[int], _one_or_per_layer(MAX_LAYERS)]
PerLayerFlags = Annotated[list[Bit], Field(max_length=MAX_LAYERS)]
LayerNames = Annotated[list[Name], Field(max_length=MAX_LAYERS)]
LayerIndices = Annotated[list[LayerIndex], Field(max_length=MAX_LAYERS)]


class ConfigSection(BaseModel):
    """A raw config section: unknown keys are ignored (configs carry many kvtop never reads)."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)
