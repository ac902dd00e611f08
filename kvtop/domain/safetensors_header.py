"""A safetensors header as typed values: the exact bytes of a checkpoint without reading a tensor.

The header (a JSON object at the start of each .safetensors file, or fetched over HTTP range
requests for a hub repo) lists every tensor's dtype, shape and byte range. The byte ranges
are the truth (`data_offsets`: end − begin); where the dtype is one kvtop knows, the shape
must agree with them, so a forged or corrupt header is an InputError naming the tensor rather
than a wrong total. Sizes are bounded: at most 2^20 tensors, dimensions ≤ 2^40, offsets ≤ 2^50.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

from pydantic import Field, TypeAdapter, ValidationError

from kvtop.domain.config_schema import error_from
from kvtop.domain.config_types import ConfigSection, Name
from kvtop.domain.errors import InputError

MAX_HEADER_BYTES = 100_000_000  # the safetensors format's own limit on the JSON header
MAX_TENSORS = 1 << 20
_Offset = Annotated[int, Field(strict=True, ge=0, le=1 << 50)]
_Extent = Annotated[int, Field(strict=True, ge=0, le=1 << 40)]

# Bits per element of the safetensors dtypes (safetensors' Dtype enum).
DTYPE_BITS = {
    "BOOL": 8,
    "U8": 8,
    "I8": 8,
    "F8_E5M2": 8,
    "F8_E4M3": 8,
    "F8_E8M0": 8,
    "E8M0": 8,
    "I16": 16,
    "U16": 16,
    "F16": 16,
    "BF16": 16,
    "I32": 32,
    "U32": 32,
    "F32": 32,
    "C64": 64,
    "F64": 64,
    "I64": 64,
    "U64": 64,
    "F4": 4,
    "F6_E2M3": 6,
    "F6_E3M2": 6,
}


class TensorEntry(ConfigSection):
    """One tensor of a header: what it is and where its bytes lie in the file."""

    dtype: Name
    shape: Annotated[list[_Extent], Field(max_length=16)]
    data_offsets: tuple[_Offset, _Offset]

    @property
    def nbytes(self) -> int:
        return self.data_offsets[1] - self.data_offsets[0]


_HEADER = TypeAdapter(Annotated[dict[str, TensorEntry], Field(max_length=MAX_TENSORS)])


def header_bytes(header: Any, *, source: str) -> int:
    """Total tensor bytes of one file's header (`__metadata__` aside), checked entry by entry."""
    if not isinstance(header, dict):
        raise InputError("a safetensors header must be a JSON object", source=source)
    tensors = {name: entry for name, entry in header.items() if name != "__metadata__"}
    try:
        entries = _HEADER.validate_python(tensors)
    except ValidationError as err:
        raise error_from(err, source=source) from None
    total = 0
    for name, entry in entries.items():
        begin, end = entry.data_offsets
        if end < begin:
            raise InputError(f"data_offsets end {end:,} before begin {begin:,}", field=name, source=source)
        bits = DTYPE_BITS.get(entry.dtype)
        if bits is not None and math.prod(entry.shape) * bits != entry.nbytes * 8:
            raise InputError(
                f"shape {entry.shape} of {entry.dtype} is not the {entry.nbytes:,} bytes of its data_offsets",
                field=name,
                source=source,
            )
        total += entry.nbytes
    return total
