"""How TensorRT-LLM stores a token's KV (docs/engines/trtllm.md §1.2, §2): the one `KvStorage` its rules and terms read."""

from __future__ import annotations

from kvtop.domain.kv import KvStorage

TRTLLM_KV_STORAGE = KvStorage(
    honours_checkpoint_kv_dtype=True,  # §2: `auto` follows ModelOpt's kv_cache_quant_algo FP8
    kv_heads_round_up=True,  # §1.2: (kv_heads + tp − 1) // tp per rank
)
