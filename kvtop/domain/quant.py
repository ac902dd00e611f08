"""Weight quantization: bytes per parameter including scales, and which modules it spares.

FP4 is not half of FP8: NVFP4 stores 4 bits plus one FP8 scale per 16 weights (+12.5 % over
4 bits), MXFP4 one E8M0 scale per 32 (+6.25 %). Block FP8 adds one fp32 scale per 128×128
block. Modules a checkpoint leaves unquantized stay at the checkpoint dtype.
"""

from __future__ import annotations

import fnmatch
import math

from pydantic import BaseModel, ConfigDict

from kvtop.domain.errors import InputError


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


def _exclusions(block: dict[str, object], *keys: str) -> tuple[str, ...]:
    for key in keys:
        value = block.get(key)
        if isinstance(value, list):
            return tuple(str(item).removesuffix(".weight") for item in value)
    return ()


def quant_from_config(
    quantization_config: dict[str, object] | None,
    hf_quant_config: dict[str, object] | None = None,
    *,
    source: str = "config.json",
) -> QuantSpec:
    """Normalise `quantization_config` (config.json) or ModelOpt's `hf_quant_config.json`."""
    if hf_quant_config is not None:
        block = hf_quant_config.get("quantization", hf_quant_config)
        if not isinstance(block, dict):
            raise InputError("expected an object", field="quantization", source="hf_quant_config.json")
        return _modelopt(block, "hf_quant_config.json")
    if not quantization_config:
        return NO_QUANT
    qc = quantization_config
    method = str(qc.get("quant_method", "")).lower()
    if method == "modelopt" or "quant_algo" in qc:
        return _modelopt(qc, source)
    if method == "fp8" or method == "fbgemm_fp8":
        block = qc.get("weight_block_size")
        block_tuple = (int(block[0]), int(block[1])) if isinstance(block, list) and len(block) == 2 else None
        return QuantSpec(
            method="fp8", weight_bits=8, block=block_tuple, scale_bytes=4,
            excluded=_exclusions(qc, "modules_to_not_convert", "ignored_layers"), source=source,
        )  # fmt: skip
    if method == "mxfp4":
        return QuantSpec(
            method="mxfp4", weight_bits=4, group_size=32, scale_bytes=1,
            excluded=_exclusions(qc, "modules_to_not_convert"), source=source,
        )  # fmt: skip
    if method in ("awq", "gptq", "awq_marlin", "gptq_marlin"):
        bits = int(str(qc.get("bits", qc.get("w_bit", 4))))
        group = int(str(qc.get("group_size", qc.get("q_group_size", 128))))
        return QuantSpec(
            method=f"int{bits}", weight_bits=bits, group_size=group if group > 0 else None,
            scale_bytes=2, zero_point_bits=bits, excluded=_exclusions(qc, "modules_to_not_convert"),
            source=source,
        )  # fmt: skip
    if method == "compressed-tensors":
        return _compressed_tensors(qc, source)
    if method == "quark":
        global_config = qc.get("global_quant_config")
        weight = global_config.get("weight") if isinstance(global_config, dict) else None
        dtype = str(weight.get("dtype", "")) if isinstance(weight, dict) else ""
        if dtype.startswith("fp8"):
            return QuantSpec(
                method="fp8", weight_bits=8, scale_bytes=4, excluded=_exclusions(qc, "exclude"), source=source
            )
    raise InputError(
        f"quantization method {method!r} is not modelled yet",
        field="quantization_config.quant_method",
        source=source,
    )


def _modelopt(block: dict[str, object], source: str) -> QuantSpec:
    algo = str(block.get("quant_algo", "")).upper()
    kv_algo = block.get("kv_cache_quant_algo")
    excluded = _exclusions(block, "exclude_modules", "ignore")
    kv = str(kv_algo) if kv_algo else None
    if algo == "NVFP4":
        group = int(str(block.get("group_size", 16)))
        return QuantSpec(
            method="nvfp4",
            weight_bits=4,
            group_size=group,
            scale_bytes=1,
            excluded=excluded,
            kv_cache_quant_algo=kv,
            source=source,
        )
    if algo == "FP8":
        return QuantSpec(
            method="fp8",
            weight_bits=8,
            scale_bytes=4,
            excluded=excluded,
            kv_cache_quant_algo=kv,
            source=source,
        )
    raise InputError(
        f"ModelOpt algorithm {algo!r} is not modelled yet", field="quantization.quant_algo", source=source
    )


def _compressed_tensors(qc: dict[str, object], source: str) -> QuantSpec:
    groups = qc.get("config_groups")
    if not isinstance(groups, dict) or not groups:
        raise InputError(
            "compressed-tensors config has no config_groups",
            field="quantization_config.config_groups",
            source=source,
        )
    first = next(iter(groups.values()))
    weights = first.get("weights", {}) if isinstance(first, dict) else {}
    bits = int(weights.get("num_bits", 8))
    kind = str(weights.get("type", "int"))
    group = weights.get("group_size")
    excluded = _exclusions(qc, "ignore")
    if kind == "float" and bits == 8:
        return QuantSpec(method="fp8", weight_bits=8, scale_bytes=4, excluded=excluded, source=source)
    if kind == "float" and bits == 4:
        return QuantSpec(
            method="nvfp4",
            weight_bits=4,
            group_size=int(group or 16),
            scale_bytes=1,
            excluded=excluded,
            source=source,
        )
    zero = 0 if weights.get("symmetric", True) else bits
    return QuantSpec(
        method=f"int{bits}", weight_bits=bits, group_size=int(group) if group else None,
        scale_bytes=2, zero_point_bits=zero, excluded=excluded, source=source,
    )  # fmt: skip
