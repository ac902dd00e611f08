"""The KV cache format a launch stores: `--kv-cache-dtype` read by the engine's own names, `auto` resolved from the
model dtype, the checkpoint's KV quantisation where the engine honours it, and the engine's DSA and GPU defaults.
Split from kv.py (the KV book), which sizes a token in the format resolved here."""

from __future__ import annotations

from kvtop.domain.errors import InputError
from kvtop.domain.kv import FP8_KV_FORMATS, KV_FORMAT_ALIASES, KvFormat, KvStorage
from kvtop.domain.model import AttentionKind, ModelSpec


def resolve_kv_format(
    requested: str, model: ModelSpec, storage: KvStorage, *, gpu_name: str | None = None
) -> KvFormat:
    """`auto` is the model dtype, or FP8 when the checkpoint says its KV is FP8 and the engine honours it,
    or when the engine picks FP8 for a DSA model on this GPU (SGLang on Blackwell, docs/engines/sglang.md §10);
    an engine whose DSA default comes first (`dsa_default_before_checkpoint`) never reads a DSA checkpoint's.
    The engine's own names (`storage.format_names`) are read first. FP8 on a DSA model is `fp8_ds_mla` on the
    GPUs where the engine stores it so (vLLM on Hopper, docs/engines/vllm.md §3)."""
    fmt = _requested_format(requested, model, storage, gpu_name)
    dsa = model.attention_kind is AttentionKind.DSA
    if fmt in FP8_KV_FORMATS and dsa and storage.fp8_dsa_ds_mla_family.holds(gpu_name):
        return "fp8_ds_mla"
    return fmt


def _checkpoint_kv(model: ModelSpec, storage: KvStorage) -> str:
    """The KV algorithm the engine reads from the checkpoint: config.json's, or the quant file's (upper case)."""
    algo = model.quant.kv_cache_quant_algo
    if not algo and storage.reads_mixed_quant_file_kv:
        algo = model.quant.quant_file_kv_cache_quant_algo
    return (algo or "").upper()


def _requested_format(requested: str, model: ModelSpec, storage: KvStorage, gpu_name: str | None) -> KvFormat:
    requested = dict(storage.format_names).get(requested.strip().lower(), requested)
    if requested == "auto" and model.compressed is not None and storage.compressed_latent_bytes:
        return "fp8_e4m3"  # SGLang 0.5.23 arg_groups/overrides.py _deepseek_v4_kv_cache_dtype: auto → fp8_e4m3
    if requested == "auto":
        dsa = model.attention_kind is AttentionKind.DSA
        checkpoint_first = not (dsa and storage.dsa_default_before_checkpoint)
        honoured = storage.honours_checkpoint_kv_dtype and model.architecture not in storage.checkpoint_kv_unread_by
        if checkpoint_first and honoured and _checkpoint_kv(model, storage) == "FP8":
            return "fp8_e4m3"
        if dsa and (storage.auto_fp8_dsa or storage.auto_fp8_dsa_family.holds(gpu_name)):
            return "fp8_e4m3"
        if model.dtype_bytes == 4:
            return "fp32"
        return _auto_half(model, storage, gpu_name)
    try:
        return KV_FORMAT_ALIASES[requested]
    except KeyError:
        raise InputError(f"unknown KV cache dtype {requested!r}", field="--kv-cache-dtype") from None


def _auto_half(model: ModelSpec, storage: KvStorage, gpu_name: str | None) -> KvFormat:
    """The model's 16-bit dtype, or fp16 for a bf16 model on a GPU the engine serves without bf16."""
    if model.half_dtype == "bf16" and storage.auto_fp16_family.holds(gpu_name):
        return "fp16"
    return model.half_dtype
