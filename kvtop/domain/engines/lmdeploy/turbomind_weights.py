"""What TurboMind holds of a group-quantized 4-bit checkpoint beyond kvtop's weights book (docs/engines/lmdeploy.md
§15.6).

The book counts an AWQ/GPTQ matrix as the checkpoint stores it: packed 4-bit weights, a 16-bit scale per group and
output, and the zero point packed in 4 bits (AWQ's `qzeros`; none for symmetric GPTQ). TurboMind keeps the zero
point in 16 bits beside the scale: v0.1.0 – v0.5.x allocate `scales_and_zeros` of `input / group × output × 2` T
(`LlamaDecoderLayerWeight.cc mallocWeights`, "interleaved scales/zeros"), v0.6.0 on a `zeros` tensor of
`input / group × output` T that `fuse_scales_and_zeros` folds into the same half2 pairs (`LlamaDenseWeight.cc`,
v0.14+ `linear_weight.cc`). So each group holds 4 B where the book says 2.5 (AWQ) or 2 (symmetric GPTQ).
"""

from __future__ import annotations

from kvtop.domain.layout import ParallelLayout
from kvtop.domain.memo import Memo
from kvtop.domain.model import ModelSpec
from kvtop.domain.tower_spec import TowerSplit
from kvtop.domain.weights import weights_book

TURBOMIND_ZERO_BITS = 16  # a zero point in T (half), beside its 16-bit scale
ZERO_SOURCE = ("LlamaDecoderLayerWeight.cc mallocWeights (v0.1.0 – v0.5.3: scales_and_zeros, input / group × output "
               "× 2 T), LlamaDenseWeight.cc / linear_weight.cc (v0.6.0 – v0.16.0: zeros in T, fuse_scales_and_zeros); "
               "0.18.0 turbomind/weight_format.py:221-226 AWQFormat zeros_dtype TYPE_GENERIC_FLOAT (a float, as the scales; "
               "the C++ of 0.17.0 / 0.18.0 not read)")  # fmt: skip

_EXTRA: Memo[int] = Memo(64)


def zero_point_extra_bytes(model: ModelSpec, layout: ParallelLayout, tower_split: TowerSplit | None) -> int:
    """Bytes a rank holds beyond the book because TurboMind keeps each group's zero point in 16 bits: the book of
    the same checkpoint with 16-bit zero points less the book as stored (every group counted once, exclusions
    and sharding as the book has them). 0 for a checkpoint that is not group-quantized in 4 bits."""
    quant = model.quant
    if not quant.quantized or quant.weight_bits != 4 or not quant.group_size or quant.mixed:
        return 0
    if quant.zero_point_bits >= TURBOMIND_ZERO_BITS:
        return 0
    key = (id(model), layout)
    return _EXTRA.get(key, model, lambda: _extra(model, layout, tower_split))


def _extra(model: ModelSpec, layout: ParallelLayout, tower_split: TowerSplit | None) -> int:
    widened = model.model_copy(update={"quant": model.quant.model_copy(update={"zero_point_bits": TURBOMIND_ZERO_BITS})})
    layers = range(model.num_layers)
    stored = weights_book(model, layout, layers, first_stage=True, last_stage=True, tower_split=tower_split)
    held = weights_book(widened, layout, layers, first_stage=True, last_stage=True, tower_split=tower_split)
    return max(held.total_bytes - stored.total_bytes, 0)
