"""vLLM's blocks for an attention-free model (Mamba, Mamba2, FalconMamba: `ModelSpec.attention_free`), as v0.33.0
sizes them (docs/engines/vllm.md §4.4).

`ModelConfig.is_prefix_caching_supported` is False for the `attention_free` type, so prefix caching is off by default
and `MambaModelConfig.verify_and_update_config` keeps `mamba_cache_mode` 'none' with `mamba_block_size` =
max_model_len. Every layer's spec is one MambaSpec (`page_size_bytes`: the layer's conv + SSM state, SSM in the model
dtype under `auto`), so one group holds every layer (`_get_kv_cache_groups_uniform_spec`) and

    num_blocks  = available // page // layers          (get_kv_cache_config_from_groups)
    per request = 1 block (`max_memory_usage_bytes`: page × (1 + speculative blocks), none here)
    logged      = num_blocks × max_model_len tokens,  "Maximum concurrency" = num_blocks requests

Memory bounds requests, not tokens: the plan reads it as requests (`kvtop.domain.request_capacity`). Prefix caching
asked on (its 'align' mode, two blocks a request of block_size tokens) is refused by name. Read at v0.33.0; v0.13.0
assumed the same (its attention-free models take the same none-mode path).
"""

from __future__ import annotations

from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.kv import KvBook
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.span import flag_switch


def state_page(kv: KvBook, settings: LaunchSettings, max_len: int) -> tuple[int, int, int, str]:
    """(block tokens, one layer's page bytes, layers in the group, why) of an attention-free model's one group."""
    pool = kv.pool("state")
    if pool is None or not pool.layers:
        raise UnsupportedModelError("vLLM: an attention-free model without a state layer on the rank", field="engine")
    if flag_switch(settings, "enable-prefix-caching") is True:
        raise UnsupportedModelError(
            "vLLM's prefix caching on an attention-free model (mamba_cache_mode 'align': two state blocks of "
            "block_size tokens a request) is not modelled; its default, off, is",
            field="--enable-prefix-caching",
        )
    page = pool.bytes_per_request // pool.layers
    why = (f"{max_len}: mamba_block_size = max_model_len (attention-free: prefix caching off, mamba_cache_mode none); "
           f"one page a layer = its state, {page:,} B")  # fmt: skip
    return max_len, page, pool.layers, why
