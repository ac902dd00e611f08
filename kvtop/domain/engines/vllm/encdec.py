"""vLLM's encoder-decoder KV (Whisper; docs/engines/vllm.md §4.8): the decoder's self-attention layers one
FullAttentionSpec group, its cross-attention layers a CrossAttentionSpec group of the same page, both drawing block
ids from the one pool (kvtop's "cross" pool, kv.py `KvStorage.encoder_decoder`).

A request holds `cdiv(max_model_len, block)` self-attention blocks and `cdiv(max_num_encoder_input_tokens, block)`
cross-attention blocks (v0.33.0 v1/kv_cache_interface.py CrossAttentionSpec.max_memory_usage_bytes, lines 1221-1228;
v0.13.0 the same class, lines 275-285), and `max_num_encoder_input_tokens = max_num_batched_tokens`
(config/scheduler.py SchedulerConfig.__post_init__, v0.33.0 line 306, v0.13.0 line 226): not the encoder's 1,500
positions. An encoder-decoder supports no chunked prefill (config/model.py is_chunked_prefill_supported: False for
attn_type "encoder_decoder"), so the default max_num_batched_tokens is max(max_model_len, the GPU's default), at
most max_num_seqs × max_model_len (engine/arg_utils.py _set_default_max_num_seqs_and_batched_tokens_args).
"""

from __future__ import annotations

from kvtop.domain.engines.base import KvCell
from kvtop.domain.engines.versions import Era, Eras
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.rounding import ceil_div

# Where kvtop reads the cross-attention group (`KvStorage.encoder_decoder = "cross_pool"`); before it, refused by name
CROSS_GROUP_ERAS: Eras[bool] = Eras((
    Era("", False, "V0's encoder-decoder runner (cross-attention block tables per sequence group), and V1's from "
        "PR #21088 (CrossAttentionSpec, first in v0.10.2 v1/kv_cache_interface.py:225) through v0.12.0, whose "
        "encoder budget is the encoder's length (v0.12.0 config/vllm.py:739-740 get_encdec_max_encoder_len): "
        "not modelled"),
    Era("0.13.0", True, "first in v0.13.0 (read there and at v0.33.0; a v0.15.1 log agrees): v1/kv_cache_interface.py "
        "CrossAttentionSpec, config/scheduler.py:226 max_num_encoder_input_tokens = max_num_batched_tokens, no "
        "encoder-length override left in config/vllm.py"),
))  # fmt: skip


def encoder_tokens(settings: LaunchSettings, default: int, max_seqs: int, max_len: int) -> tuple[int, str]:
    """(max_num_encoder_input_tokens, where it comes from): --max-num-batched-tokens, else the default with chunked
    prefill off (the encoder-decoder's)."""
    if settings.max_num_batched_tokens:
        return settings.max_num_batched_tokens, "max_num_encoder_input_tokens = --max-num-batched-tokens"
    tokens = min(max(max_len, default), max_seqs * max_len)
    return tokens, (
        f"max_num_encoder_input_tokens = max_num_batched_tokens: min(max(max_model_len, vLLM's default {default:,}), "
        f"max_num_seqs {max_seqs:,} × max_model_len) (chunked prefill off for an encoder-decoder)"
    )


def encdec_cell(block: int, blocks_per_request: int, block_bytes: int, max_len: int, encoder: int) -> KvCell:
    """What a max-length request holds in the capacity vLLM logs (tokens = int(blocks ÷ blocks a request ×
    max_model_len)): its self-attention blocks over max_model_len tokens and its cross-attention blocks over
    `encoder` encoder tokens, each block a page of every layer of its group (all pages one size)."""
    cross = ceil_div(encoder, block)
    return KvCell(bytes_per_token=blocks_per_request * block_bytes / max_len, unit="per token of a max-length request",
                  counts=f"{blocks_per_request - cross:,} self-attention blocks over {max_len:,} decoder tokens + "
                  f"{cross:,} cross-attention blocks over {encoder:,} encoder tokens",
                  request_pages=blocks_per_request, page_bytes=block_bytes, request_tokens=max_len)  # fmt: skip


# what an encoder-decoder's start does that kvtop's runtime terms do not split out (docs/engines/vllm.md §4.8)
GRAPHS_NOTE = (
    "an encoder-decoder runs CUDA graphs FULL_DECODE_ONLY (config/vllm.py: 'Encoder-decoder models do not support "
    "…'), fewer than the estimate's PIECEWISE + FULL: not modelled apart, the estimate kept (assumed)"
)
