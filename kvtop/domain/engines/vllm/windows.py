"""The window vLLM's spec of a sliding (or chunked local) layer holds, in tokens (docs/engines/vllm.md §3): what
`SlidingWindowSpec.sliding_window` (`ChunkedLocalAttentionSpec.attention_chunk_size`) says, and so what a request's
window blocks are counted from (budget.py `_blocks_per_request`).

It is the config's window, except where the family's window counts the tokens before the query
(`ModelSpec.window_excludes_query`, Cohere-2): vLLM builds those layers at window + 1 from v0.29.0
(`WINDOW_PLUS_QUERY_ERAS`). Beside the window, a multi-module MTP launch keeps k − 1 more trailing tokens
(`SlidingWindowSpec.extra_retained_tokens`, §3.4.2: `extra_retained_tokens`), which budget.py adds to a request's
sliding blocks.
"""

from __future__ import annotations

from kvtop.domain.deployment import DeploymentSetup, SpecKind
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion, era_for
from kvtop.domain.model import ModelSpec

# Cohere-2's sliding layers (Cohere2ForCausalLM, Cohere2MoeForCausalLM, Cohere2Vision's language model): the spec's
# window is the config's, or one more (the query) where the family's window excludes it.
WINDOW_PLUS_QUERY_ERAS: Eras[bool] = Eras((
    Era("", False, "commandr.py:190 CohereAttention: self.sliding_window = config.sliding_window (v0.13.0; "
        ":188-191 in every wheel to v0.28.0, and v0.28.0's new cohere2_moe.py:211 the same)"),
    Era("0.29.0", True,
        "commandr.py:245 (v0.29.0; :244 at v0.33.0) and cohere2_moe.py:211 (v0.29.0; :256 at v0.33.0): "
        "config.sliding_window + 1 ('cohere swa layer sees [pos - sliding_window, pos]'), the same +1 in "
        "single_type_kv_cache_manager.py's eviction; first in the v0.29.0 wheel (v0.28.0's has the config's window)"),
))  # fmt: skip

# SlidingWindowSpec.extra_retained_tokens (kv_cache_interface.py): trailing tokens a sliding group keeps below its
# window, added to `max_admission_blocks_per_request`'s tokens (so to vLLM's admission check and capacity).
EXTRA_RETAINED_ERAS: Eras[bool] = Eras((
    Era("", False, "kv_cache_interface.py SlidingWindowSpec has no extra_retained_tokens (wheels v0.13.0 … v0.27.1)"),
    Era("0.28.0", True,
        "v0.28.0 kv_cache_utils.py:2137: num_speculative_tokens − 1 where speculative_config.use_multi_module_mtp() "
        "(config/speculative.py:1501: method 'mtp' and min(draft hf_config.num_nextn_predict_layers (1 if absent), k) "
        "> 1); from v0.31.0 max(0, num_prefill_lookahead_tokens − 1) (config/vllm.py:657: k for multi-module MTP, 1 "
        "for other EAGLE-family methods, else 0), the same figure; v0.33.0 kv_cache_planning.py:1636, "
        "kv_cache_interface.py:938"),
))  # fmt: skip


# The tokens in flight a windowed spec (SlidingWindowSpec, ChunkedLocalAttentionSpec) counts beside its window in
# max_memory_usage_bytes: one batch (max_num_batched_tokens) or every concurrent batch (max_in_flight_tokens).
IN_FLIGHT_BATCHES_ERAS: Eras[bool] = Eras((
    Era("", False, "kv_cache_interface.py SlidingWindowSpec / ChunkedLocalAttentionSpec.max_memory_usage_bytes: "
        "scheduler_config.max_num_batched_tokens, one batch (v0.14.0 :263, v0.19.0 :262, v0.25.1 :561)"),
    Era("0.26.0", True, "v0.26.0 kv_cache_interface.py:584 (:517 chunked local): VllmConfig.max_in_flight_tokens = "
        "max_concurrent_batches × max_num_batched_tokens (config/vllm.py:525-533); absent from the v0.25.1 wheel"),
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


# Classes whose MTP draft vLLM builds with num_nextn_predict_layers pinned (SpeculativeConfig.hf_config_override,
# v0.33.0 config/speculative.py:806-845, the same from v0.28.0: "vLLM currently supports only the first MiMo-V2 MTP
# layer", _MIMO_V2_*_NUM_MTP_LAYERS = 1 in models/mimo_v2_mtp.py:53-54); every other class vLLM registers that kvtop
# reads counts its MTP layers from the config's own num_nextn_predict_layers (the architecture entries' mtp_fields;
# Qwen3.5's mtp_num_hidden_layers has no sliding layer beside it).
DRAFT_LAYERS_PINNED: dict[str, int] = {"MiMoV2FlashForCausalLM": 1, "MiMoV2ForCausalLM": 1, "MiMoV2OmniForCausalLM": 1}


def extra_retained_tokens(model: ModelSpec, setup: DeploymentSetup, version: ResolvedVersion) -> int:
    """The tokens each sliding group of this launch keeps below its window (`SlidingWindowSpec.
    extra_retained_tokens`, §3.4.2): k − 1 where the release has the field, the method is MTP (vLLM normalises
    every `*_mtp` to it), min(the draft's num_nextn_predict_layers, k) > 1 and a layer slides (not chunked local:
    ChunkedLocalAttentionSpec takes none); else 0. k unstated is the draft's n_predict (config/speculative.py
    :1601-1603), its MTP layers."""
    layers = DRAFT_LAYERS_PINNED.get(model.name, model.mtp_layers)
    k = setup.draft_tokens or layers
    slides = (model.sliding_window or model.config_sliding_window) is not None and not model.chunked_local
    taken = setup.spec_kind is SpecKind.MTP and min(layers, k) > 1 and slides
    return k - 1 if taken and EXTRA_RETAINED_ERAS.at(version) else 0
