"""Quantization sections as typed values: `quantization_config` and ModelOpt's `hf_quant_config.json`.

Checked where they enter, like the rest of the config (`config_schema`): bit widths are 1–16
(`bits: 0` is refused, not divided by), group sizes are positive or -1 (per channel), block
sizes are two positive integers, module lists are lists of strings. Digit strings ("4") are
accepted for bit widths and group sizes, which some exporters write as text.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field, field_validator

from kvtop.domain.config_types import ConfigSection, Dim, Flag, Name

MAX_GROUP = 1 << 20
MAX_MODULES = 1 << 20


def _digits_to_int(value: Any) -> Any:
    """ "4" → 4 (ASCII digits, an optional leading minus); anything else is left to strict checking."""
    if isinstance(value, str) and value.removeprefix("-").isascii() and value.removeprefix("-").isdigit():
        return int(value[:8])
    return value


Bits = Annotated[int, BeforeValidator(_digits_to_int), Field(strict=True, ge=1, le=16)]
GroupSize = Annotated[int, BeforeValidator(_digits_to_int), Field(strict=True, ge=-1, le=MAX_GROUP)]
ModuleName = Annotated[str, Field(strict=True, max_length=4096)]
ModuleList = Annotated[list[ModuleName], Field(max_length=MAX_MODULES)]


def _group_is_not_zero(value: int | None) -> int | None:
    if value == 0:
        raise ValueError("must be a positive group size or -1 (per channel), not 0")
    return value


class ModeloptLayer(ConfigSection):
    """One module of a MIXED_PRECISION checkpoint's `quantized_layers`."""

    quant_algo: Name | None = None
    group_size: GroupSize | None = None

    _nonzero_group = field_validator("group_size")(_group_is_not_zero)


class KvCacheScheme(ConfigSection):
    """ModelOpt's `kv_cache_scheme` as compressed-tensors writes it ({num_bits, type, dynamic})."""

    num_bits: Bits | None = None
    type: Name | None = None
    strategy: Name | None = None  # compressed-tensors: "tensor" (one scale), "attn_head", …
    dynamic: Flag | Name | None = None  # true, false, or a word ("local")
    symmetric: Flag | None = None


class ModeloptQuant(ConfigSection):
    """ModelOpt's block (`hf_quant_config.json` → `quantization`, or inline with `quant_algo`)."""

    quant_algo: Name | None = None
    kv_cache_quant_algo: Name | None = None
    kv_cache_scheme: Name | KvCacheScheme | None = None
    group_size: GroupSize | None = None
    exclude_modules: ModuleList | None = None
    ignore: ModuleList | None = None
    quantized_layers: Annotated[dict[ModuleName, ModeloptLayer], Field(max_length=MAX_MODULES)] | None = None

    _nonzero_group = field_validator("group_size")(_group_is_not_zero)


class Producer(ConfigSection):
    """`producer` of a ModelOpt export (`{"name": "modelopt", "version": …}`)."""

    name: Name | None = None


class HfQuantConfig(ConfigSection):
    """`hf_quant_config.json`: the ModelOpt block under `quantization`, and the tool that wrote it."""

    quantization: ModeloptQuant | None = None
    producer: Producer | Name | None = None  # a bare name claims nothing: vLLM reads `producer.name`


class CompressedWeights(ConfigSection):
    num_bits: Bits = 8
    type: Name = "int"
    group_size: GroupSize | None = None
    symmetric: Flag | None = None
    strategy: Name | None = None  # tensor | channel | group | block
    block_structure: tuple[Dim, Dim] | None = None

    _nonzero_group = field_validator("group_size")(_group_is_not_zero)


class CompressedGroup(ConfigSection):
    weights: CompressedWeights | None = None
    targets: ModuleList | None = None  # the module names or `re:` patterns the group quantizes (named in refusals)
    # quantized activations (W8A8); absent or null: weight-only (WNA16). Only its presence is read.
    input_activations: dict[str, object] | None = None


class QuarkWeight(ConfigSection):
    dtype: Name | None = None


class QuarkGlobal(ConfigSection):
    weight: QuarkWeight | None = None


class SparsityConfig(ConfigSection):
    """compressed-tensors' `sparsity_config` (2:4 sparse weights)."""

    format: Name | None = None


class QuantizationConfig(ModeloptQuant):
    """config.json's `quantization_config`, every method's fields that kvtop reads."""

    sym: Flag | None = None  # GPTQ: symmetric (no zero points in the engines' marlin layout)
    desc_act: Flag | None = None  # GPTQ: activation order (a g_idx per input row)
    load_in_4bit: Flag | None = None  # bitsandbytes
    load_in_8bit: Flag | None = None
    bnb_4bit_use_double_quant: Flag | None = None
    sparsity_config: SparsityConfig | None = None

    quant_method: Name | None = None
    moe_quant_algo: Name | None = None  # a hybrid FP8 checkpoint's experts (nvidia's DeepSeek-V4 NVFP4)
    weight_block_size: tuple[Dim, Dim] | None = None
    modules_to_not_convert: ModuleList | None = None
    llm_int8_skip_modules: ModuleList | None = None  # bitsandbytes
    ignored_layers: ModuleList | None = None
    exclude: ModuleList | None = None
    bits: Bits | None = None
    w_bit: Bits | None = None
    q_group_size: GroupSize | None = None
    config_groups: Annotated[dict[Name, CompressedGroup], Field(max_length=1024)] | None = None
    global_quant_config: QuarkGlobal | None = None

    _nonzero_q_group = field_validator("q_group_size")(_group_is_not_zero)
