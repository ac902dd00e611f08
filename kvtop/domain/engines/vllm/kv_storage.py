"""How vLLM stores a launch's KV (kv.KvStorage): the one value the KV book (ledger.py) and the attention pick
(attention_select.py `fp8_kv`) both resolve the KV format from (`kv_format.resolve_kv_format`)."""

from __future__ import annotations

from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.backends import checkpoint_fp8_dsa_ds_mla_majors
from kvtop.domain.engines.vllm.dsv4 import DSV4_ERAS, ROW_BYTES
from kvtop.domain.engines.vllm.dtype_fallback import auto_fp16_below_major
from kvtop.domain.engines.vllm.encdec import CROSS_GROUP_ERAS
from kvtop.domain.engines.vllm.eras import honours_checkpoint_kv_dtype
from kvtop.domain.engines.vllm.hybrid import (
    NEMOTRON_H_CONFIG_ARCHITECTURES,
    spec_conv_rows,
    unstated_ssm_dtype_bytes,
)
from kvtop.domain.engines.vllm.mamba_dtype import state_dtypes
from kvtop.domain.gpus import CapabilityFamily
from kvtop.domain.kv import KvStorage
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import ModelSpec

# §3: nvfp4_full(h) = h//2 + h//16 per head; §12: a draft's layers get KV specs of their own; §3: MiniCPM3's
# latent attention runs as plain Attention (models/minicpm3.py MiniCPM3Attention: num_kv_heads = the rank's
# heads, head size qk_nope + qk_rope, V padded to it; read in v0.13.0 and v0.33.0)
KV_STORAGE = KvStorage(
    fp4_scales_per_head=True, draft_kv_as_layers=True, mla_as_heads=frozenset({"MiniCPM3ForCausalLM"}),
    encoder_decoder="cross_pool",  # §4.8: a CrossAttentionSpec group beside the decoder's (encdec.py)
)


def kv_storage_for(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> KvStorage:
    """§3.3: `auto` follows a ModelOpt checkpoint's FP8 KV from v0.14; §3: DeepSeek V3.2's FP8 latent is
    `fp8_ds_mla` on every GPU, later only on Hopper (FLASHMLA_SPARSE) and never for `auto`'s checkpoint FP8
    (backends.py); §4.4: the Mamba SSM state's dtype, and a GDN conv state's rows under speculative decoding; §4.7: DeepSeek-V4's row from 0.33.0; §4.8: the cross group;
    a bf16 model's `auto` KV in fp16 below sm80 from v0.9.0 (dtype_fallback.py)."""
    majors = checkpoint_fp8_dsa_ds_mla_majors(model, settings.kv_cache_dtype, version)
    unstated = unstated_ssm_dtype_bytes(model, version)
    dtypes = state_dtypes(model, settings, version)  # §4.4: --mamba-cache-dtype / --mamba-ssm-cache-dtype
    if dtypes is not None and dtypes.unstated_ssm is not None and model.architecture not in NEMOTRON_H_CONFIG_ARCHITECTURES:
        unstated = dtypes.unstated_ssm  # `auto` SSM follows the conv dtype (NemotronH's config class sets its own)
    named = {"conv_state_dtype_bytes": dtypes.conv, "launch_ssm_dtype_bytes": dtypes.ssm} if dtypes is not None else {}
    return KV_STORAGE.model_copy(
        update={
            **named,
            "honours_checkpoint_kv_dtype": honours_checkpoint_kv_dtype(version),
            "ds_mla_on_fp8_dsa": majors is None,
            "fp8_dsa_ds_mla_family": CapabilityFamily.of_majors(majors or frozenset()),
            "unstated_ssm_dtype_bytes": unstated,
            "conv_extra_rows": spec_conv_rows(model, settings),  # §4.4: a GDN conv row per draft token (hybrid.py)
            # §4.7: DeepSeek-V4's fp8_ds_mla row (584 B) where its specs are read (dsv4.py), else refused
            "compressed_latent_bytes": ROW_BYTES if DSV4_ERAS.at(version) else 0,
            # §4.8: an encoder-decoder's cross-attention group where it is read (encdec.py), else refused
            "encoder_decoder": "cross_pool" if CROSS_GROUP_ERAS.at(version) else "",
            # a bf16 model under `auto` served as fp16 below sm80 from v0.9.0 (dtype_fallback.py)
            "auto_fp16_family": CapabilityFamily.below(auto_fp16_below_major(version)),
        }
    )
