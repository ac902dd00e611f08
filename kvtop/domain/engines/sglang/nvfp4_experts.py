"""SGLang's ModelOpt NVFP4 routed experts, walked once: which MoE layers hold them, each expert's shard, and the
swizzled block-scale shapes `ModelOptNvFp4FusedMoEMethod` builds (`swizzle_blockscale`, layers/quantization/utils.py:
rows padded to 128, columns to 4; read at 0.5.9 – 0.5.13 and 0.5.23). The runner rules (blockscale_leak.py,
nvfp4_pad.py, weights_built.py, nvfp4_runner.py) read these instead of walking the layers themselves.
"""

from __future__ import annotations

from collections.abc import Iterator

from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import MlpKind, ModelSpec
from kvtop.domain.model_layers import MoeSpec
from kvtop.domain.quant import QuantSpec
from kvtop.domain.rounding import round_up

SWIZZLE_ROWS, SWIZZLE_COLS = 128, 4  # swizzle_blockscale (quantization/utils.py) pads each expert's scales to these


def nvfp4_expert_layers(model: ModelSpec, layers: range | None = None) -> Iterator[tuple[int, QuantSpec]]:
    """(layer, the experts' format) for each MoE layer of `layers` (all by default) whose routed experts are ModelOpt
    NVFP4 (the checkpoint's quant config, asked by the names the book asks: `MoeSpec.expert_names`)."""
    moe = model.moe
    if moe is None:
        return
    for layer in range(len(model.layer_mlp)) if layers is None else layers:
        if model.layer_mlp[layer] is not MlpKind.MOE:
            continue
        fmt = model.quant.format_of(moe.expert_names(layer))
        if fmt is not None and fmt.method == "nvfp4" and fmt.scheme == "modelopt":
            yield layer, fmt


def has_nvfp4_experts(model: ModelSpec) -> bool:
    """Whether any MoE layer's routed experts are ModelOpt NVFP4."""
    return next(nvfp4_expert_layers(model), None) is not None


def expert_shard(moe: MoeSpec, layout: ParallelLayout) -> int:
    """One expert's intermediate width on a rank: moe_intermediate_size over the MoE TP group (TP ÷ EP)."""
    return moe.expert_intermediate_size // max(1, layout.moe_shards // layout.ep)


def gemm1_blocks(model: ModelSpec) -> int:
    """The row blocks of an expert's w13: 2 for a gated (SwiGLU) expert, 1 for a plain one (Nemotron-H's relu²)."""
    return 2 if model.mlp_gated else 1


def _scale_shapes(gemm1: int, width: int, hidden: int, group: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """One expert's w13 scales (gemm1 × width rows, hidden ÷ group columns) and w2's (hidden rows, width ÷ group)."""
    return (gemm1 * width, hidden // group), (hidden, width // group)


def _padded(rows: int, cols: int) -> int:
    return round_up(rows, SWIZZLE_ROWS) * round_up(cols, SWIZZLE_COLS)


def swizzled_scales(gemm1: int, width: int, hidden: int, group: int) -> int:
    """The block-scale entries of one expert's w13 and w2 once `swizzle_blockscale` pads each to 128 rows and 4
    columns (the placeholders create_weights builds)."""
    return sum(_padded(rows, cols) for rows, cols in _scale_shapes(gemm1, width, hidden, group))


def unaligned_scales(gemm1: int, width: int, hidden: int, group: int) -> int:
    """The swizzled entries of those of one expert's w13 / w2 scales whose padded shape is not their own: where
    `alias_or_bind_derived_param` (0.5.12 on) cannot alias the placeholder to the scales and keeps it filled."""
    return sum(_padded(rows, cols) for rows, cols in _scale_shapes(gemm1, width, hidden, group)
               if _padded(rows, cols) != rows * cols)  # fmt: skip
