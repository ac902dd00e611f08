"""A vocab-parallel table's rows: padded to a multiple of 64, then split over its shards.

vLLM's and SGLang's `VocabParallelEmbedding` (and `ParallelLMHead`) pad the table's rows before splitting them; the
weights book's embedding and LM head, an Eagle-3 head's vocabulary and a tower's learned position table read it.
"""

from __future__ import annotations

from kvtop.domain.rounding import ceil_div, round_up

VOCAB_PADDING = 64  # VocabParallelEmbedding pads its rows to this (DEFAULT_VOCAB_PADDING_SIZE in vLLM and SGLang)


def vocab_padded(rows: int) -> int:
    """A vocab-parallel table's rows padded to VOCAB_PADDING (the embedding, the LM head, a tower's positions)."""
    return round_up(rows, VOCAB_PADDING)


def vocab_parallel_rows(rows: int, shards: int) -> int:
    """The rows one rank holds of a vocab-parallel table of `rows` split `shards` ways: padded, then split."""
    return ceil_div(vocab_padded(rows), shards)
