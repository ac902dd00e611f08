"""What a weight-only FP8 Marlin repack (W8A16, on a GPU without FP8 compute) holds of a block-FP8 checkpoint beyond
the checkpoint's own bytes: Marlin takes group scales, not block scales, so a block's float32 scale
[⌈N ÷ block_n⌉, ⌈K ÷ block_k⌉] becomes one a column of every group of `block_k` inputs, [K ÷ block_k, N], in the
model's dtype. The weight itself is repacked at its own size (four FP8 values to an int32) and the block scales are
dropped, so the difference is the scales' alone: a 128 × 128-block matrix holds K × N ÷ 64 B of bf16 group scales where
the checkpoint's were K × N ÷ 4,096 B, about 1.5 % of its FP8 bytes more.

Engine-neutral arithmetic: which engine, release and GPU repack so (and the cites) is each engine's rule
(`engines/vllm/weights_fp8_marlin.py`, `engines/sglang/weights_fp8_marlin.py`).
"""

from __future__ import annotations

from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.tower_spec import TowerSplit
from kvtop.domain.weights import weights_book


def block_fp8_checkpoint(model: ModelSpec) -> bool:
    """Whether the model is a block-FP8 checkpoint in one format for every module (Fp8Config's `quant_method: "fp8"`
    with a `weight_block_size`; not compressed-tensors' or ModelOpt's FP8, not a mixed checkpoint)."""
    quant = model.quant
    return quant.method == "fp8" and quant.scheme == "fp8" and quant.block is not None and not quant.mixed


def block_fp8_compressed_tensors(model: ModelSpec) -> bool:
    """Whether the model is a compressed-tensors checkpoint of block-FP8 weights in one format for every module (a
    config group of float 8-bit weights, `strategy: "block"` with a `block_structure`)."""
    quant = model.quant
    return quant.method == "fp8" and quant.scheme == "compressed-tensors" and quant.block is not None and not quant.mixed


def as_marlin_groups(model: ModelSpec) -> ModelSpec:
    """The block-FP8 model as Marlin holds it: group scales of the block's input width in the model's dtype."""
    quant = model.quant
    assert quant.block is not None
    grouped = quant.model_copy(update={"block": None, "group_size": quant.block[1], "scale_bytes": model.dtype_bytes})
    return model.model_copy(update={"quant": grouped})


def group_scales_extra(model: ModelSpec, layout: ParallelLayout, tower_split: TowerSplit | None = None) -> int:
    """Bytes the Marlin group scales hold beyond the checkpoint's block scales on the largest rank: the book of every
    layer read as Marlin holds it less the book as stored, divided by the pipeline stages. `tower_split`: the
    engine's build (its `architectures.TOWER_SPLIT`), so a matrix the engine builds beyond the checkpoint's (vLLM's
    Gemma-4 V beside K on `attention_k_eq_v` layers, repacked with the fused QKV) has its scales too."""

    def total(spec: ModelSpec) -> int:
        book = weights_book(spec, layout, range(model.num_layers), first_stage=True, last_stage=True,
                            tower_split=tower_split)  # fmt: skip
        return book.total_bytes

    return (total(as_marlin_groups(model)) - total(model)) // max(layout.pp, 1)


def group_scale_tensors(model: ModelSpec, layout: ParallelLayout) -> list[int]:
    """The bytes of each group-scale tensor Marlin makes, in the modules' order: the tensors of the book read as
    Marlin holds it that differ from the book as stored (the two list the same tensors in the same order)."""
    layers = range(model.num_layers)
    stored = weights_book(model, layout, layers, first_stage=True, last_stage=True).tensor_bytes
    grouped = weights_book(as_marlin_groups(model), layout, layers, first_stage=True, last_stage=True).tensor_bytes
    if stored is None or grouped is None or len(stored) != len(grouped):
        return []
    return [new for old, new in zip(stored, grouped, strict=True) if new != old]
