"""Where SGLang reads a checkpoint's KV-cache dtype (docs/engines/sglang.md §10).

`--kv-cache-dtype auto` is FP8 when the model's quant config states `kv_cache_quant_algo: FP8`
(mem_cache/kv_cache_dtype.py `configure_kv_cache_dtype`). For a ModelOpt MIXED_PRECISION checkpoint with NVFP4
layers (`modelopt_mixed`) whose config.json block names no KV algorithm (no kv_cache_quant_algo, no
kv_cache_scheme) or no quantized_layers, 0.5.23 builds the quant config from hf_quant_config.json instead
(model_loader/weight_utils.py `get_quant_config`, `modelopt_mixed_config_incomplete`), so that file's
`kv_cache_quant_algo` counts (Qwen3.6-35B-A3B-NVFP4: FP8, a 10,240 B cell at TP 1 in the meta build, where vLLM
0.33.0 reads config.json's block only and keeps bf16). 0.5.6.post2 has no `modelopt_mixed` method at all (read in
its wheel); the releases between are not read: config.json's block only.
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion

MIXED_QUANT_FILE_KV_ERAS: Eras[bool] = Eras((
    Era("", False, "not checked before 0.5.23: config.json's quantization_config only"),
    Era("0.5.23", True, "weight_utils.get_quant_config: modelopt_mixed_config_incomplete → hf_quant_config.json"),
))  # fmt: skip


def reads_mixed_quant_file_kv(version: ResolvedVersion) -> bool:
    """Whether this release reads a MIXED_PRECISION checkpoint's KV algorithm from hf_quant_config.json."""
    return MIXED_QUANT_FILE_KV_ERAS.at(version)
