"""SGLang's GPTQ checkpoints as built: the tensors its Marlin methods register beside the packed weights and
scales the weights book counts (read at 0.5.23; engine check: Qwen3-30B-A3B-GPTQ-Int4 built on the meta device by
the registry sweep at TP 1 and 2, gptq converted to gptq_marlin on sm90, equal to the byte).

A symmetric GPTQ checkpoint (sym=true: the only kind Marlin takes, GPTQMarlinConfig.TYPE_MAP) is served as
gptq_marlin, whose methods register, per rank:
- each linear layer (gptq/schemes/gptq_marlin.py GPTQMarlinLinearScheme.create_weights): `g_idx` (int32, one per
  input row of the partition) and `qzeros` (int32, [groups, output ÷ pack]) though the checkpoint is symmetric; the
  groups cover the whole input on every rank where `marlin_repeat_scales_on_all_ranks` says (act order, or
  channelwise on a row-parallel layer), and so do the scales;
- each expert (gptq/schemes/gptq_moe.py GPTQMarlinMoEScheme.create_weights): `w13_qzeros` / `w2_qzeros` in the
  model dtype, `w13_g_idx`, `w2_g_idx` and their `_sort_indices` (int32), and w2's scales over the whole
  intermediate width on every rank unless act order (`w2_scales_size = intermediate × moe_tp_size`).
Models with MLA, shared experts or state layers are left to the book (not read).
"""

from __future__ import annotations

from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import LayerKind, MlpKind, ModelSpec
from kvtop.domain.quant import QuantSpec
from kvtop.domain.weights import WeightRow

INT32 = 4
HALF = 2  # the MoE scales are torch.half whatever the model dtype
PACKED_BITS = 32


def _linear_extra(fmt: QuantSpec, in_full: int, in_part: int, out_part: int, row_parallel: bool) -> int:
    """g_idx, qzeros and (where repeated on every rank) the scales beyond the book's, of one linear layer."""
    group = fmt.group_size or 0
    repeat = fmt.act_order or (group == 0 and row_parallel)
    groups = 1 if group == 0 else (in_full if repeat else in_part) // group
    book_groups = 1 if group == 0 else in_part // group
    pack = PACKED_BITS // fmt.weight_bits
    extra = in_part * INT32 + groups * (out_part // pack) * INT32
    return extra + (groups - book_groups) * out_part * fmt.scale_bytes


def _expert_extra(fmt: QuantSpec, hidden: int, width: int, moe_tp: int, gemm1: int, dtype_bytes: int) -> int:
    """One expert's qzeros, g_idx, sort indices and w2 scales beyond the book's."""
    group = fmt.group_size or 0
    pack = PACKED_BITS // fmt.weight_bits
    groups13 = hidden // group if group else 1
    groups2 = ((width if fmt.act_order else width * moe_tp) // group) if group else 1
    book_groups2 = width // group if group else 1
    qzeros = groups13 * (gemm1 * width // pack) * dtype_bytes + groups2 * (hidden // pack) * dtype_bytes
    indices = 2 * (hidden + width) * INT32
    return qzeros + indices + (groups2 - book_groups2) * hidden * HALF


def gptq_marlin_row(model: ModelSpec, layout: ParallelLayout, layers: range) -> WeightRow | None:
    """The row SGLang's gptq_marlin methods add on one rank of the stage holding `layers`."""
    quant, moe = model.quant, model.moe
    if quant.scheme not in ("gptq", "gptq_marlin") or quant.zero_point_bits or quant.mixed:
        return None
    if model.mla is not None or model.state is not None or (moe is not None and moe.shared_intermediate_size):
        return None
    tp, hidden = layout.tp, model.hidden_size
    nbytes = 0
    for layer in layers:
        prefix = f"model.layers.{layer}"
        if model.layer_attention[layer] in (LayerKind.FULL, LayerKind.SLIDING):
            fmt = quant.format_of((f"{prefix}.self_attn.qkv_proj", f"{prefix}.self_attn.q_proj"))
            if fmt is not None:
                g = model.geometry(layer)
                qkv_rows = (g.heads // tp + 2 * max(1, g.kv_heads // tp)) * g.head_dim
                nbytes += _linear_extra(fmt, hidden, hidden, qkv_rows, row_parallel=False)
                nbytes += _linear_extra(fmt, g.heads * g.head_dim, g.heads * g.head_dim // tp, hidden, True)
        gemm1 = 2 if model.mlp_gated else 1
        if model.layer_mlp[layer] is MlpKind.DENSE:
            fmt = quant.format_of((f"{prefix}.mlp.down_proj",))
            width = model.layer_intermediate[layer] if model.layer_intermediate else model.intermediate_size
            if fmt is not None:
                nbytes += _linear_extra(fmt, hidden, hidden, gemm1 * width // tp, row_parallel=False)
                nbytes += _linear_extra(fmt, width, width // tp, hidden, row_parallel=True)
        elif model.layer_mlp[layer] is MlpKind.MOE and moe is not None:
            fmt = quant.format_of((f"{prefix}.mlp.experts", f"{prefix}.mlp.experts.0.down_proj"))
            if fmt is not None:
                moe_tp = max(1, layout.moe_shards // layout.ep)
                local = moe.num_routed_experts // layout.ep
                width = moe.expert_intermediate_size // moe_tp
                nbytes += local * _expert_extra(fmt, hidden, width, moe_tp, gemm1, model.dtype_bytes)
    if nbytes <= 0:
        return None
    return WeightRow(component="gptq_marlin", params=0, bytes=nbytes, shards=1, bytes_per_param=0.0,
                     note="SGLang's gptq_marlin: g_idx and qzeros of every quantized layer (a symmetric checkpoint's "
                     "too), the experts' sort indices and their w2 scales over the whole width "
                     "(gptq/schemes/gptq_marlin.py, gptq_moe.py)")  # fmt: skip
