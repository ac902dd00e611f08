"""The circular-buffer KV pool: a ring of rows one layer keeps per request, one page for the request's whole life.

vLLM 0.33.0 (v1/kv_cache_interface.py `CircularBufferSpec`, lines 968-1005; absent from 0.13.0) keeps such a ring
beside the attention of Qwen4-Exp (QSA raw index keys), GLM-5-Next (the kpool indexer's tail keys and gate scores),
Step-5 (the open CSA region's indexer rows) and DeepSeek-V4.1 (its compressor). Its page is an `AttentionSpec`'s
(lines 585-601): head slots × states × (head_size + head_size_v) × dtype bytes, one state a row (`tokens_per_state`
1), the ring's rows being the spec's `block_size`; `max_num_blocks_per_req` is 1 and `max_memory_usage_bytes` the
one page, whatever the request's length, and the ring is never prefix-cached. So, unlike a token pool, it costs
bytes per request, as a state does; the rows each model's ring holds (its compress ratio or pool, widened for
speculative tokens) are the model's, read by its entry.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from kvtop.domain.kv import TORCH_DTYPE, KvFormat, KvPool, kv_dtype_bytes


class RingBuffer(BaseModel):
    """One layer's ring on one rank, as the engine's spec states it (rows, head slots, widths in elements of the KV
    format's dtype: its bytes and torch dtype both read from kv.py, so they cannot disagree)."""

    model_config = ConfigDict(frozen=True)

    rows: int = Field(gt=0)  # the ring's capacity: the spec's block_size
    heads: int = Field(default=1, gt=0)  # head slots of a row (the spec's num_kv_heads)
    key_width: int = Field(gt=0)  # elements of the "K" half of a row (head_size)
    value_width: int = Field(default=0, ge=0)  # elements of the "V" half (head_size_v; 0 for a key ring)
    kv_format: KvFormat = "bf16"  # the spec's dtype (vLLM: the cache dtype, kv_cache_interface.py AttentionSpec.dtype)

    @property
    def page_bytes(self) -> int:
        """The one page a request holds in this layer: heads × rows × (K + V widths) × element bytes."""
        return self.heads * self.rows * (self.key_width + self.value_width) * kv_dtype_bytes(self.kv_format)


def ring_pool(ring: RingBuffer, layers: int) -> KvPool:
    """The ring pool of `layers` layers of one rank: one page each per request, however long the request."""
    return KvPool(
        name="ring", layers=layers, bytes_per_request=ring.page_bytes * layers,
        row_shape=(ring.heads, ring.key_width + ring.value_width), tensors_per_layer=1, torch_dtype=TORCH_DTYPE[ring.kv_format],
    )  # fmt: skip
