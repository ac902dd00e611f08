"""ggml's KV cache types: bytes per block and elements per block (`ggml/src/ggml.c`, `type_traits`).

llama.cpp stores K and V apart (`-ctk` / `-ctv`), each row of `n_embd_k_gqa` (or `n_embd_v_gqa`)
elements of one ggml type: `ggml_row_size(type, n) = type_size × n / block_size`. A quantised row
needs `n` to be a whole number of blocks (32 elements for every quantised type it accepts).
The types `-ctk`/`-ctv` accept are `kv_cache_types` in `common/arg.cpp` (docs/engines/llamacpp.md §2).
"""

from __future__ import annotations

from dataclasses import dataclass

from kvtop.domain.errors import InputError
from kvtop.domain.redact import quoted


@dataclass(frozen=True)
class GgmlType:
    """One ggml type as a KV cache stores it."""

    name: str  # as llama.cpp prints it (`ggml_type_name`): 'f16', 'q8_0'
    block_bytes: int  # `type_traits[t].type_size`
    block_elements: int  # `type_traits[t].blck_size`

    def row_bytes(self, elements: int, flag: str = "--cache-type-k") -> int:
        """`ggml_row_size`: bytes of one row of `elements` (a whole number of blocks, or an InputError)."""
        if elements % self.block_elements:
            raise InputError(
                f"{self.name} stores blocks of {self.block_elements} elements; a row of {elements} is not whole blocks "
                "(llama.cpp refuses this cache type for this model)",
                field=flag,
            )
        return elements // self.block_elements * self.block_bytes

    @property
    def bytes_per_element(self) -> float:
        return self.block_bytes / self.block_elements


# ggml.c type_traits: q8_0 = 2-byte scale + 32 int8; q4_0 = scale + 16 B; q4_1 = scale, min + 16 B;
# q5_0 = scale + 4 B high bits + 16 B; q5_1 = scale, min + 4 + 16 B; iq4_nl = scale + 16 B.
KV_CACHE_TYPES: dict[str, GgmlType] = {
    t.name: t
    for t in (
        GgmlType("f32", 4, 1), GgmlType("f16", 2, 1), GgmlType("bf16", 2, 1),
        GgmlType("q8_0", 34, 32), GgmlType("q4_0", 18, 32), GgmlType("q4_1", 20, 32),
        GgmlType("iq4_nl", 18, 32), GgmlType("q5_0", 22, 32), GgmlType("q5_1", 24, 32),
    )
}  # fmt: skip
DEFAULT_CACHE_TYPE = "f16"  # common_params.cache_type_k / cache_type_v = GGML_TYPE_F16


def cache_type(name: str, flag: str) -> GgmlType:
    """The ggml type `-ctk`/`-ctv` names (case as llama.cpp accepts it), or an InputError naming the flag."""
    found = KV_CACHE_TYPES.get(name.strip().lower())
    if found is None:
        raise InputError(f"llama.cpp has no KV cache type {quoted(name)} (one of {', '.join(KV_CACHE_TYPES)})",
                         field=flag)  # fmt: skip
    return found
