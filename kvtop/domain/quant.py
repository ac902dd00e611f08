"""Weight quantization: bytes per parameter including scales, and which modules it spares.

FP4 is not half of FP8: NVFP4 stores 4 bits plus one FP8 scale per 16 weights (+12.5 % over
4 bits), MXFP4 one E8M0 scale per 32 (+6.25 %). Block FP8 adds one fp32 scale per 128×128
block. Modules a checkpoint leaves unquantized stay at the checkpoint dtype.
"""

from __future__ import annotations

import json

from kvtop.domain.config_schema import validated
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.quant_schema import (
    CompressedGroup,
    CompressedWeights,
    HfQuantConfig,
    KvCacheScheme,
    ModeloptQuant,
    Producer,
    QuantizationConfig,
)
from kvtop.domain.quant_spec import NO_QUANT as NO_QUANT
from kvtop.domain.quant_spec import QuantSpec as QuantSpec
from kvtop.domain.quant_spec import module_from_layers

# A multimodal checkpoint names its language model's modules under a tower prefix (Kimi-K2.5's
# `language_model.model.layers.1.self_attn*`, Gemma-4's and Qwen3.5's `model.language_model.layers.0...`); the
# engines match the list against their own prefixed modules (vLLM 0.33.0 compressed_tensors should_ignore_layer,
# modelopt is_layer_excluded, after each class's hf_to_vllm_mapper), which kvtop names `model.layers...`/`lm_head`.
_TOWER_PREFIXES = (("model.language_model.", "model."), ("language_model.model.", "model."), ("language_model.", ""),
                   ("backbone.", "model."))  # NemotronH's `backbone.layers.N.mixer...` (hf_quant_config.json)  # fmt: skip


def _language_name(name: str) -> str:
    """`name` as kvtop names the language model's module (the tower prefix dropped); other names unchanged."""
    for prefix, replacement in _TOWER_PREFIXES:
        if name.startswith(prefix):
            return replacement + name[len(prefix):]
    return name


def _exclusions(*lists: list[str] | None) -> tuple[str, ...]:
    """The first module list given, each name without its `.weight` suffix and its language-tower prefix."""
    for names in lists:
        if names is not None:
            return tuple(_language_name(name.removesuffix(".weight")) for name in names)
    return ()


def quant_from_config(
    quantization_config: dict[str, object] | None,
    hf_quant_config: dict[str, object] | None = None,
    *,
    source: str = "config.json",
    prefix: str = "quantization_config.",
    hf_source: str = "hf_quant_config.json",
) -> QuantSpec:
    """Normalise `quantization_config` (config.json) or ModelOpt's `hf_quant_config.json`, as the engines pick
    them: config.json's block when it has one, the separate file only when it has none (vLLM
    transformers_utils/config.py: "ModelOpt 0.29.0 and before saves the quantization config in a separate
    hf_quant_config.json"). Both are validated first (`quant_schema`): a bad field is an InputError naming it.

    The checkpoint's KV cache dtype (`kv_cache_quant_algo` / `kv_cache_scheme`) is read where the engines read
    it: for a block they take as ModelOpt's (a `modelopt*` quant_method, or ModelOpt's producer with its
    `quantization` section: `_normalize_quantization_config`), not for a bare top-level `quant_algo`
    (`get_kv_cache_quant_algo_string` returns None there, and `--kv-cache-dtype auto` stays the model dtype).
    """
    if quantization_config is None and hf_quant_config is not None:
        outer = validated(HfQuantConfig, hf_quant_config, source=hf_source)
        if outer.quantization is not None:
            producer = outer.producer.name if isinstance(outer.producer, Producer) else None
            claimed = (producer or "").lower() == "modelopt"
            spec = _unclaimed(_modelopt(outer.quantization, hf_source, "quantization."), not claimed)
            stated = outer.quantization.group_size is not None or any(
                hf_quant_config.get(key) is not None for key in ("group_size", "config_groups")
            )
            missing = spec.method == "nvfp4" and not stated
            return spec.model_copy(update={"nested_group_size_missing": missing, "from_quant_file": True})
        block = validated(ModeloptQuant, hf_quant_config, source=hf_source)
        return _unclaimed(_modelopt(block, hf_source, "", kv=False), True).model_copy(update={"from_quant_file": True})
    if quantization_config is None:
        return NO_QUANT
    qc = validated(QuantizationConfig, quantization_config, source=source, prefix=prefix)
    method = (qc.quant_method or "").lower()
    if not method and qc.quant_algo is None and not quantization_config:
        return NO_QUANT
    if method.startswith("modelopt"):
        return _with_quant_file_kv(_modelopt(qc, source, prefix), qc, hf_quant_config, hf_source)
    if method == "fp8" and qc.moe_quant_algo:  # FP8 with its experts in a ModelOpt format of their own
        return _hybrid_fp8(qc, source, prefix)
    if qc.quant_algo is not None:  # ModelOpt's fields without its quant_method: the engines keep KV auto
        return _unclaimed(_modelopt(qc, source, prefix, kv=False), True)
    return _by_method(qc, method, source, prefix)


def _with_quant_file_kv(
    spec: QuantSpec, block: ModeloptQuant, hf_quant_config: dict[str, object] | None, hf_source: str
) -> QuantSpec:
    """`spec` with hf_quant_config.json's KV algorithm where config.json's MIXED_PRECISION block with NVFP4 layers
    states none (no kv_cache_quant_algo, no kv_cache_scheme): what SGLang 0.5.23 falls back to
    (`modelopt_mixed_config_incomplete`, model_loader/weight_utils.py get_quant_config), reading the file's
    nested `quantization.kv_cache_quant_algo` (ModelOptMixedPrecisionConfig.from_config)."""
    stated = block.kv_cache_quant_algo is not None or block.kv_cache_scheme is not None
    nvfp4 = any(part.method == "nvfp4" for _, part in spec.mixed)
    if spec.method != "mixed" or stated or not nvfp4 or hf_quant_config is None:
        return spec
    outer = validated(HfQuantConfig, hf_quant_config, source=hf_source)
    algo = outer.quantization.kv_cache_quant_algo if outer.quantization is not None else None
    return spec.model_copy(update={"quant_file_kv_cache_quant_algo": algo}) if algo else spec


def _unclaimed(spec: QuantSpec, unclaimed: bool) -> QuantSpec:
    """`spec` marked as ModelOpt's fields nothing claims for ModelOpt (`QuantSpec.modelopt_unclaimed`)."""
    return spec.model_copy(update={"modelopt_unclaimed": True}) if unclaimed else spec


def _by_method(qc: QuantizationConfig, method: str, source: str, prefix: str) -> QuantSpec:
    """A `quantization_config` by its `quant_method` (ModelOpt's are read by `_modelopt`)."""
    if method in ("fp8", "fbgemm_fp8"):
        return QuantSpec(
            method="fp8",
            weight_bits=8,
            block=qc.weight_block_size,
            scale_bytes=4,
            excluded=_exclusions(qc.modules_to_not_convert, qc.ignored_layers),
            scheme=method,
            source=source,
        )
    if method == "mxfp4":
        return QuantSpec(
            method="mxfp4",
            weight_bits=4,
            group_size=32,
            scale_bytes=1,
            excluded=_exclusions(qc.modules_to_not_convert),
            scheme=method,
            source=source,
        )
    if method == "mxfp8":
        # MiniMax-M3-MXFP8's `quant_method: mxfp8`: FP8 (E4M3) with one E8M0 (1 B) scale per 32 weights, the
        # modules it spares in `ignored_layers`. vLLM 0.33.0 loads it as ModelOpt MXFP8 (quantization/__init__.py
        # "mxfp8": ModelOptMxFp8Config; from_config: `ignored_layers` as exclude_modules); SGLang 0.5.23 as
        # Fp8Config(use_mxfp8) (fp8.py from_config: block [1, 32], ignored_layers; SM100 and newer: checks.py).
        return QuantSpec(method="mxfp8", weight_bits=8, group_size=32, scale_bytes=1,
                         excluded=_exclusions(qc.ignored_layers, qc.modules_to_not_convert), scheme="mxfp8",
                         source=source)  # fmt: skip
    if method in ("awq", "gptq", "awq_marlin", "gptq_marlin"):
        bits = qc.bits or qc.w_bit or 4
        group = qc.group_size or qc.q_group_size or 128
        # packed weights, an fp16 scale per group and output; zero points where the format is asymmetric
        # (AWQ always; GPTQ sym=false: the marlin kernels drop a symmetric checkpoint's qzeros, and vLLM the
        # g_idx: base_config.get_checkpoint_weight_mapper; vLLM's Machete kernel, compute capability 9.0, keeps
        # the qzeros: a row of its own, engines/vllm/gptq_linear.py)
        asymmetric = method.startswith("awq") or qc.sym is False
        return QuantSpec(
            method=f"int{bits}",
            weight_bits=bits,
            group_size=group if group > 0 else None,
            scale_bytes=2,
            zero_point_bits=bits if asymmetric else 0,
            act_order=bool(qc.desc_act) and group > 0,
            excluded=_exclusions(qc.modules_to_not_convert),
            scheme=method,
            source=source,
        )
    if method == "bitsandbytes":
        return _bitsandbytes(qc, source, prefix)
    if method == "compressed-tensors":
        spec = _compressed_tensors(qc, source, prefix)
        if qc.kv_cache_scheme is None:
            return spec
        return spec.model_copy(update={"kv_scheme_stated": True, "kv_cache_quant_algo": _ct_kv_algo(qc.kv_cache_scheme)})
    if method == "quark":
        weight = qc.global_quant_config.weight if qc.global_quant_config else None
        if weight is not None and (weight.dtype or "").startswith("fp8"):
            return QuantSpec(
                method="fp8",
                weight_bits=8,
                scale_bytes=4,
                excluded=_exclusions(qc.exclude),
                scheme="quark",
                source=source,
            )
    raise UnsupportedModelError(
        f"quantization method {method!r} is not modelled yet", field=f"{prefix}quant_method", source=source
    )


def _hybrid_fp8(qc: QuantizationConfig, source: str, prefix: str) -> QuantSpec:
    """`quant_method: fp8` whose ModelOpt fields give the routed experts another algorithm (`moe_quant_algo` with
    `group_size`, nvidia/DeepSeek-V4-*-NVFP4): SGLang 0.5.23 builds it as HybridFp8NvFp4Config (model_loader/
    loader.py, configs/model_config.py `nvfp4_moe_meta`): Fp8Config's block FP8 for every linear layer, ModelOpt's
    NVFP4 for the experts (its `ignore` list names the checkpoint's modules, which spares no expert)."""
    fp8 = _by_method(qc, "fp8", source, prefix)
    experts = _modelopt(ModeloptQuant(quant_algo=qc.moe_quant_algo, group_size=qc.group_size), source,
                        f"{prefix}moe_quant_algo.", kv=False)  # fmt: skip
    return fp8.model_copy(update={"routed_experts": experts})


def _ct_kv_algo(scheme: str | KvCacheScheme) -> str | None:
    """A compressed-tensors checkpoint's KV dtype: static symmetric per-tensor FP8 scales are an FP8 cache in both
    engines ("auto" read as fp8: vLLM 0.33.0 layers/attention/attention.py for any stated scheme; SGLang 0.5.23
    CompressedTensorsConfig.kv_cache_quant_algo, only for this one, `is_supported_scheme`); None for the rest."""
    if isinstance(scheme, str) or scheme.type != "float" or scheme.num_bits != 8:
        return None
    static = scheme.strategy == "tensor" and scheme.symmetric is not False and not scheme.dynamic
    return "FP8" if static else None


def _kv_algo(block: ModeloptQuant) -> str | None:
    """`get_kv_cache_quant_algo_string`: kv_cache_scheme (a name, or {num_bits 8, type float}: FP8; 4: NVFP4),
    else kv_cache_quant_algo."""
    scheme = block.kv_cache_scheme
    if isinstance(scheme, str):
        return scheme.upper()
    if scheme is not None and scheme.type == "float":
        return {8: "FP8", 4: "NVFP4"}.get(scheme.num_bits or 0)
    return block.kv_cache_quant_algo or None


def _modelopt(block: ModeloptQuant, source: str, prefix: str, *, kv: bool = True) -> QuantSpec:
    algo = (block.quant_algo or "").upper()
    excluded = _exclusions(block.exclude_modules, block.ignore)
    kv_algo = _kv_algo(block) if kv else None
    if algo == "MIXED_PRECISION":  # vLLM ModelOptMixedPrecisionConfig: each listed module its own algorithm
        layers = block.quantized_layers or {}
        if not layers:
            raise InputError("MIXED_PRECISION needs a quantized_layers map", field=f"{prefix}quantized_layers",
                             source=source)  # fmt: skip
        by_recipe: dict[tuple[str, int | None], QuantSpec] = {}
        for module, entry in layers.items():
            recipe = ((entry.quant_algo or "").upper(), entry.group_size)
            if recipe not in by_recipe:
                by_recipe[recipe] = _modelopt(
                    ModeloptQuant(quant_algo=recipe[0], group_size=recipe[1]), source,
                    f"{prefix}quantized_layers.{module}.",
                )  # fmt: skip
        return QuantSpec(
            method="mixed", weight_bits=4, excluded=excluded, kv_cache_quant_algo=kv_algo, scheme="modelopt",
            source=source, mixed=tuple(
                (module_from_layers(m), by_recipe[((e.quant_algo or "").upper(), e.group_size)]) for m, e in layers.items()
            ),
        )  # fmt: skip
    if algo in ("NVFP4", "W4A16_NVFP4"):  # W4A16: the same packed FP4 weights, bf16 activations
        group = block.group_size if block.group_size and block.group_size > 0 else 16
        # each matrix (each expert's) also holds an fp32 weight_scale_2 and, with FP4 activations, an fp32
        # input_scale (vLLM ModelOptNvFp4LinearMethod / ModelOptNvFp4FusedMoE: meta-built [E, 2] and [E])
        return QuantSpec(
            method="nvfp4",
            weight_bits=4,
            group_size=group,
            scale_bytes=1,
            global_scale_bytes=4,
            activation_scale_bytes=4 if algo == "NVFP4" else 0,
            unused_input_scale=algo == "W4A16_NVFP4",
            excluded=excluded,
            kv_cache_quant_algo=kv_algo,
            scheme="modelopt",
            source=source,
        )
    if algo == "FP8":  # per tensor: each logical matrix's fp32 weight_scale and static input_scale
        # (ModelOptFp8LinearMethod.create_weights: PerTensorScaleParameter, one per output partition, in both engines)
        return QuantSpec(
            method="fp8",
            weight_bits=8,
            scale_bytes=4,
            per_tensor=True,
            activation_scale_bytes=4,
            excluded=excluded,
            kv_cache_quant_algo=kv_algo,
            scheme="modelopt",
            source=source,
        )
    if algo == "MXFP8":  # OCP MX: FP8 (E4M3) with one E8M0 (1 B) scale per 32 weights
        return QuantSpec(method="mxfp8", weight_bits=8, group_size=32, scale_bytes=1, excluded=excluded,
                         kv_cache_quant_algo=kv_algo, scheme="modelopt", source=source)  # fmt: skip
    if algo in ("FP8_PB_WO", "FP8_BLOCK_SCALES"):  # block-scaled FP8 (vLLM _BLOCK_FP8_MOE_ALGOS: group × group)
        size = block.group_size if block.group_size and block.group_size > 0 else 128
        return QuantSpec(method="fp8", weight_bits=8, block=(size, size), scale_bytes=4, excluded=excluded,
                         kv_cache_quant_algo=kv_algo, scheme="modelopt", source=source)  # fmt: skip
    raise UnsupportedModelError(
        f"ModelOpt algorithm {algo!r} is not modelled yet", field=f"{prefix}quant_algo", source=source
    )


def _bitsandbytes(qc: QuantizationConfig, source: str, prefix: str) -> QuantSpec:
    """bitsandbytes: 4-bit packs two weights a byte (SGLang BitsAndBytesLinearMethod: uint8 of params ÷ 2) with
    an fp32 absmax per block of 64, or a uint8 one and an fp32 per 256 of them under double quantization, and
    the rest of each matrix's QuantState on the GPU (bitsandbytes functional.py `QuantState.from_dict(...,
    device="cuda")`, SGLang's `_quantized_4bit_generator`: `quant_map` fp32 [16]; `nested_quant_map` fp32 [256]
    and `nested_offset` an fp32 scalar under double quantization); 8-bit (LLM.int8) keeps int8 weights and an fp32
    scale per output row (SCB)."""
    excluded = _exclusions(qc.modules_to_not_convert, qc.llm_int8_skip_modules)
    if qc.load_in_8bit:
        return QuantSpec(method="int8", weight_bits=8, scale_bytes=4, excluded=excluded, scheme="bitsandbytes",
                         source=source)  # fmt: skip
    if not qc.load_in_4bit:
        raise InputError("bitsandbytes config loads neither 4- nor 8-bit weights", field=f"{prefix}load_in_4bit",
                         source=source)  # fmt: skip
    double = bool(qc.bnb_4bit_use_double_quant)
    state = NF4_CODE * 4 + ((NESTED_CODE + 1) * 4 if double else 0)
    return QuantSpec(method="int4", weight_bits=4, group_size=64, scale_bytes=1 if double else 4,
                     second_group=256 if double else 0, second_scale_bytes=4 if double else 0, state_bytes=state,
                     excluded=excluded,
                     scheme="bitsandbytes", source=source)  # fmt: skip


CT = "compressed-tensors"
NF4_CODE, NESTED_CODE = 16, 256  # the 4-bit code's values (quant_map), the nested 8-bit code's (nested_quant_map)


def _compressed_tensors(qc: QuantizationConfig, source: str, prefix: str) -> QuantSpec:
    """compressed-tensors, as vLLM's schemes create the weights (compressed_tensors/schemes/*.py)."""
    if not qc.config_groups:
        raise InputError(
            "compressed-tensors config has no config_groups", field=f"{prefix}config_groups", source=source
        )
    if qc.sparsity_config is not None and qc.sparsity_config.format not in (None, "dense"):
        raise InputError(
            f"{qc.sparsity_config.format} sparse weights are not modelled (vLLM 0.33.0 refuses compressed-tensors "
            "sparsity: 'Sparsity support has been removed')",
            field=f"{prefix}sparsity_config",
            source=source,
        )
    groups = list(qc.config_groups.values())
    spec = _ct_group(qc, groups[0], source)
    formats = {json.dumps((g.weights or CompressedWeights()).model_dump(), sort_keys=True) for g in groups}
    if len(formats) > 1:  # each group's format for the modules its targets name (QuantSpec.targeted)
        targeted = tuple((tuple(g.targets or ()), _ct_group(qc, g, source)) for g in groups)
        return spec.model_copy(update={"targeted": targeted, "unread": _ct_mixed(qc),
                                       "unread_field": f"{prefix}config_groups"})  # fmt: skip
    return spec


def _ct_mixed(qc: QuantizationConfig) -> str:
    """Why a compressed-tensors checkpoint whose groups hold different weight formats is refused where the engine's
    module names are not known (`StageParts.targets_read`)."""
    assert qc.config_groups
    groups = "; ".join(
        f"{name}: {w.num_bits}-bit {w.type} {w.strategy} for {', '.join(g.targets or ())}"
        for name, g in qc.config_groups.items() if (w := g.weights or CompressedWeights())
    )  # fmt: skip
    return (
        f"compressed-tensors config_groups of different weight formats by target ({groups}) are not modelled for "
        "this engine and model: each engine matches the targets against its own module names, which kvtop knows "
        "only where the engine's rules state them (vLLM 0.33.0's DeepSeek-V4)"
    )


def _ct_group(qc: QuantizationConfig, config_group: CompressedGroup, source: str) -> QuantSpec:
    """A config group's weight format, as vLLM's schemes create the weights."""
    weights = config_group.weights or CompressedWeights()
    bits, group, strategy = weights.num_bits, weights.group_size, (weights.strategy or "").lower()
    excluded = _exclusions(qc.ignore)
    if weights.type == "float" and bits == 8:  # W8A8 / W8A16 FP8: an fp32 scale per row, per tensor or per block
        return QuantSpec(method="fp8", weight_bits=8, scale_bytes=4, per_tensor=strategy == "tensor",
                         block=weights.block_structure if strategy == "block" else None, excluded=excluded,
                         scheme=CT, source=source)  # fmt: skip
    if weights.type == "float" and bits == 4:  # NVFP4 (an FP8 scale per 16) or MXFP4 (an E8M0 scale per 32)
        size = group if group and group > 0 else 16
        if size == 32:
            return QuantSpec(method="mxfp4", weight_bits=4, group_size=size, scale_bytes=1, excluded=excluded,
                             scheme=CT, source=source)  # fmt: skip
        # CompressedTensorsW4A4Fp4.create_weights: an fp32 weight_global_scale per matrix and, unless weight-only
        # (W4A16), an fp32 input_global_scale per matrix (PerTensorScaleParameter, one per fused partition)
        return QuantSpec(method="nvfp4", weight_bits=4, group_size=size, scale_bytes=1, global_scale_bytes=4,
                         activation_scale_bytes=0 if config_group.input_activations is None else 4, excluded=excluded,
                         scheme=CT, source=source)  # fmt: skip
    zero = 0 if weights.symmetric is not False else bits
    grouped = group is not None and group > 0
    return QuantSpec(
        method=f"int{bits}",
        weight_bits=bits,
        group_size=group if grouped else None,
        # W8A8 int8 channel-wise: an fp32 scale per row (ChannelQuantScaleParameter); WNA16 groups: the model dtype
        scale_bytes=2 if grouped else 4,
        per_tensor=strategy == "tensor",
        zero_point_bits=zero,
        excluded=excluded,
        scheme=CT,
        source=source,
        weight_only_int=config_group.input_activations is None,
    )
