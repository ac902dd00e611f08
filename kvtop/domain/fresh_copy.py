"""A frozen model whose copies compute their cached values afresh, never answer from the original's.

`functools.cached_property` keeps its value in the instance's `__dict__`, and pydantic's `model_copy` copies that
`__dict__` before it applies `update` (pydantic 2.x `BaseModel.__copy__`): a copy with other fields kept the value
its original had computed from the old ones. Found in session 53: a snapshot copied with new engines kept its
original's GPU → engine index (`NodeSnapshot.ranks_by_gpu`), so the planner opened on the original engine's
measured inputs (the desktop off where the copy's engines said on); a stale fact, shown as the node's.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel

_Model = TypeVar("_Model", bound="FreshCopyModel")


class FreshCopyModel(BaseModel):
    """A model with `cached_property` values: `model_copy` leaves them out, so a copy computes its own."""

    def model_copy(self: _Model, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> _Model:
        copied = super().model_copy(update=update, deep=deep)
        for name in cached_names(type(self)):
            copied.__dict__.pop(name, None)
        return copied


@functools.cache
def cached_names(cls: type) -> tuple[str, ...]:
    """The names of `cls`'s `functools.cached_property` attributes, its bases' included (once per class)."""
    return tuple(
        name
        for klass in cls.__mro__
        for name, value in vars(klass).items()
        if isinstance(value, functools.cached_property)
    )
