"""Weight quantization: bytes per parameter including scales, and which modules it spares.

FP4 is not half of FP8: NVFP4 stores 4 bits plus one FP8 scale per 16 weights (+12.5 % over
4 bits), MXFP4 one E8M0 scale per 32 (+6.25 %). Block FP8 adds one fp32 scale per 128×128
block. Modules a checkpoint leaves unquantized stay at the checkpoint dtype.
"""

from __future__ import annotations

import fnmatch
import math

from pydantic import BaseModel, ConfigDict

from kvtop.domain.config_schema import validated
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.quant_schema import CompressedWeights, HfQuantConfig, ModeloptQuant, QuantizationConfig


class QuantSpec(BaseModel):
    """How a checkpoint stores its linear weights."""

    model_config = ConfigDict(frozen=True)

    method: str = "none"  # none | fp8 | nvfp4 | mxfp4 | int4 | int8 (AWQ/GPTQ/compressed-tensors)
    weight_bits: int = 16
    group_size: int | None = None  # weights sharing one scale along the input dim
    block: tuple[int, int] | None = None  # FP8 block scales (rows, cols)
    scale_bytes: int = 0  # bytes per scale
    zero_point_bits: int = 0  # asymmetric int formats store a zero point per group
    excluded: tuple[str, ...] = ()  # module name patterns left at the checkpoint dtype
    quantizes_embedding: bool = False
    kv_cache_quant_algo: str | None = None  # e.g. "FP8" from the checkpoint
    # who wrote the format, as the checkpoint names it: modelopt, fp8, fbgemm_fp8, mxfp4, awq, gptq,
    # compressed-tensors, quark (engines check some against the GPU: docs/engines/sglang.md §4.5)
    scheme: str = ""
    source: str = "config.json"

    @property
    def quantized(self) -> bool:
        return self.method != "none"

    def matrix_bytes(self, rows: int, cols: int, dtype_bytes: int) -> int:
        """Bytes of one (rows × cols) weight matrix stored in this format, scales included."""
        params = rows * cols
        if not self.quantized:
            return params * dtype_bytes
        data = params * self.weight_bits // 8
        if self.block is not None:
            scales = math.ceil(rows / self.block[0]) * math.ceil(cols / self.block[1])
        elif self.group_size:
            scales = rows * math.ceil(cols / self.group_size)
        else:  # per-tensor or per-channel scale: one per output row at most
            scales = rows
        zeros = scales * self.zero_point_bits // 8
        return data + scales * self.scale_bytes + zeros

    def spares(self, module_names: tuple[str, ...]) -> bool:
        """True if the checkpoint leaves a module (any of its representative names) unquantized."""
        for name in module_names:
            for pattern in self.excluded:
                if (
                    name == pattern
                    or name.startswith(pattern + ".")
                    or fnmatch.fnmatchcase(name, pattern)
                    or fnmatch.fnmatchcase(name, pattern + ".*")
                ):
                    return True
        return False


NO_QUANT = QuantSpec()


def _exclusions(*lists: list[str] | None) -> tuple[str, ...]:
    """The first module list given, each name without its `.weight` suffix."""
    for names in lists:
        if names is not None:
            return tuple(name.removesuffix(".weight") for name in names)
    return ()


def quant_from_config(
    quantization_config: dict[str, object] | None,
    hf_quant_config: dict[str, object] | None = None,
    *,
    source: str = "config.json",
    prefix: str = "quantization_config.",
    hf_source: str = "hf_quant_config.json",
) -> QuantSpec:
    """Normalise `quantization_config` (config.json) or ModelOpt's `hf_quant_config.json`.

    Both are validated first (`quant_schema`): a bad field is an InputError naming it and the file.
    """
    if hf_quant_config is not None:
        outer = validated(HfQuantConfig, hf_quant_config, source=hf_source)
        if outer.quantization is not None:
            return _modelopt(outer.quantization, hf_source, "quantization.")
        return _modelopt(validated(ModeloptQuant, hf_quant_config, source=hf_source), hf_source, "")
    if quantization_config is None:
        return NO_QUANT
    qc = validated(QuantizationConfig, quantization_config, source=source, prefix=prefix)
    method = (qc.quant_method or "").lower()
    if not method and qc.quant_algo is None and not quantization_config:
        return NO_QUANT
    if method == "modelopt" or qc.quant_algo is not None:
        return _modelopt(qc, source, prefix)
    return _by_method(qc, method, source, prefix)


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
    if method in ("awq", "gptq", "awq_marlin", "gptq_marlin"):
        bits = qc.bits or qc.w_bit or 4
        group = qc.group_size or qc.q_group_size or 128
        return QuantSpec(
            method=f"int{bits}",
            weight_bits=bits,
            group_size=group if group > 0 else None,
            scale_bytes=2,
            zero_point_bits=bits,
            excluded=_exclusions(qc.modules_to_not_convert),
            scheme=method,
            source=source,
        )
    if method == "compressed-tensors":
        return _compressed_tensors(qc, source, prefix)
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


def _modelopt(block: ModeloptQuant, source: str, prefix: str) -> QuantSpec:
    algo = (block.quant_algo or "").upper()
    excluded = _exclusions(block.exclude_modules, block.ignore)
    kv = block.kv_cache_quant_algo or None
    if algo == "NVFP4":
        group = block.group_size if block.group_size and block.group_size > 0 else 16
        return QuantSpec(
            method="nvfp4",
            weight_bits=4,
            group_size=group,
            scale_bytes=1,
            excluded=excluded,
            kv_cache_quant_algo=kv,
            scheme="modelopt",
            source=source,
        )
    if algo == "FP8":
        return QuantSpec(
            method="fp8",
            weight_bits=8,
            scale_bytes=4,
            excluded=excluded,
            kv_cache_quant_algo=kv,
            scheme="modelopt",
            source=source,
        )
    raise UnsupportedModelError(
        f"ModelOpt algorithm {algo!r} is not modelled yet", field=f"{prefix}quant_algo", source=source
    )


CT = "compressed-tensors"


def _compressed_tensors(qc: QuantizationConfig, source: str, prefix: str) -> QuantSpec:
    if not qc.config_groups:
        raise InputError(
            "compressed-tensors config has no config_groups", field=f"{prefix}config_groups", source=source
        )
    weights = next(iter(qc.config_groups.values())).weights or CompressedWeights()
    bits, group = weights.num_bits, weights.group_size
    excluded = _exclusions(qc.ignore)
    if weights.type == "float" and bits == 8:
        return QuantSpec(
            method="fp8", weight_bits=8, scale_bytes=4, excluded=excluded, scheme=CT, source=source
        )
    if weights.type == "float" and bits == 4:
        return QuantSpec(
            method="nvfp4",
            weight_bits=4,
            group_size=group if group and group > 0 else 16,
            scale_bytes=1,
            excluded=excluded,
            scheme=CT,
            source=source,
        )
    zero = 0 if weights.symmetric is not False else bits
    return QuantSpec(
        method=f"int{bits}",
        weight_bits=bits,
        group_size=group if group and group > 0 else None,
        scale_bytes=2,
        zero_point_bits=zero,
        excluded=excluded,
        scheme=CT,
        source=source,
    )
