"""The window vLLM's spec of a sliding (or chunked local) layer holds, in tokens (docs/engines/vllm.md §3): what
`SlidingWindowSpec.sliding_window` (`ChunkedLocalAttentionSpec.attention_chunk_size`) says, and so what a request's
window blocks are counted from (budget.py `_blocks_per_request`).

It is the config's window, except where the family's window counts the tokens before the query
(`ModelSpec.window_excludes_query`, Cohere-2): vLLM from v0.29.0 builds those layers at window + 1
(`WINDOW_PLUS_QUERY_ERAS`).
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion, era_for
from kvtop.domain.model import ModelSpec

# Cohere-2's sliding layers (Cohere2ForCausalLM, Cohere2MoeForCausalLM, Cohere2Vision's language model): the spec's
# window is the config's, or one more (the query) where the family's window excludes it.
WINDOW_PLUS_QUERY_ERAS: Eras[bool] = Eras((
    Era("", False, "v0.13.0 commandr.py:186-190 CohereAttention: per_layer_sliding_window = config.sliding_window "
        "(so to v0.28.0: cohere2_moe.py:211 self.sliding_window = config.sliding_window)"),
    Era("0.29.0", True,
        "v0.29.0 commandr.py:238-245 and cohere2_moe.py:211: config.sliding_window + 1 ('cohere swa layer sees "
        "[pos - sliding_window, pos]'; absent from the v0.28.0 sdist, first in v0.29.0's; v0.33.0 commandr.py:237-244, "
        "cohere2_moe.py:256), the same +1 in single_type_kv_cache_manager.py's eviction"),
))  # fmt: skip


def spec_window(model: ModelSpec, version: ResolvedVersion) -> int | None:
    """The tokens vLLM's spec of the model's windowed layers holds (None: no window): the chunk of a chunked local
    layer, else the config's window (its layer pattern's, or the config's over every layer, §3.4), plus the query
    where the family's window excludes it and the release adds it."""
    window = model.sliding_window or model.config_sliding_window
    if window is None:
        return None
    plus_query = model.window_excludes_query and not model.chunked_local and WINDOW_PLUS_QUERY_ERAS.at(version)
    return window + 1 if plus_query else window


def spec_window_source(model: ModelSpec, version: ResolvedVersion) -> str:
    """Where `spec_window` comes from, in vLLM's code (said beside the figure)."""
    if model.window_excludes_query and not model.chunked_local:
        return era_for(WINDOW_PLUS_QUERY_ERAS, version).source
    return "the config's window as stated (Attention per_layer_sliding_window / attention_chunk_size)"
