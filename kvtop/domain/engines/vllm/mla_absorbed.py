"""V0's MLA absorbed matrices: what vLLM 0.7.1–0.7.3 holds beside an MLA model's checkpoint (weights_held.py).

What the code does. V0's MLA backends (`MLACommonImpl.process_weights_after_loading`, attention/backends/mla/utils.py,
read in copies of the 0.7.x file) perform matrix absorption when `VLLM_MLA_PERFORM_MATRIX_ABSORPTION` is on (its
default; an FP8 checkpoint raises "Currently fp8 requires matrix absorption" without it): W_UK is absorbed into the
query's up-projection, `W_Q_UK = einsum("qnd,lnd -> qnl", W_Q, W_UK)` (q_lora_rank, or hidden where the query has no
LoRA, × heads on the rank × kv_lora_rank), and W_UV into the output projection, `W_UV_O = einsum("lnd,hnd -> nlh",
W_UV, W_O)` (heads on the rank × kv_lora_rank × hidden). Both are new tensors kept on the layer (`self.W_Q_UK`,
`self.W_UV_O`) while q_b_proj, kv_b_proj and o_proj stay registered; with FP8 weights they are re-quantized to FP8
(`scaled_quantize`, `requantization_enabled`), else held in the activation dtype. The load's measure (V0's
`model_memory_usage`, taken around `get_model`, which runs `process_weights_after_loading`) counts them, the
checkpoint does not. Their scales (one per block) are under 1 MiB a rank and not counted.

DeepSeek-R1 (FP8) at TP 8: 61 layers × (1,536 × 16 × 512 + 16 × 512 × 7,168) × 1 B = 4.05 GiB a rank, where vLLM
0.7.3 on 8 × H200 printed 83.88 GiB of weights against the book's 79.31 (search-index file 20903468563).

Kept beside them (`kept_copies`, session 54): the rope part of the query's up-projection, `self.W_QR =
q_proj_weight[..., qk_nope_head_dim:].flatten(start_dim=1).contiguous()` then `.to(act_dtype)` ("W_QR is small so for
simplicity we dont bother requantizing it": q_lora_rank (or hidden) × heads on the rank × qk_rope_head_dim in the
activation dtype, a copy for every checkpoint; mla/utils.py:321-325 at v0.7.1, :323-327 at v0.7.3), and, for FP8
weights, the dequantized kv_b_proj: `self.W_UK, self.W_UV = kv_b_proj_weight.split(...)` (:348 at v0.7.1, :350 at
v0.7.3) keeps views of `get_and_maybe_dequant_weights(self.kv_b_proj)`, a new tensor of kv_lora_rank × heads on the
rank × (qk_nope_head_dim + v_head_dim): float32 at v0.7.1-v0.7.2 (`scaled_dequantize`'s default out_dtype,
quantization/utils/quant_utils.py:103-107 at v0.7.1, :97-101 at v0.7.2), the activation dtype at v0.7.3 (an identity
matrix in act_dtype through the layer's own `apply`, mla/utils.py:279-290, whose block-FP8 GEMM returns the input's
dtype, fp8_utils.py `apply_w8a8_block_fp8_linear`). Unquantized, the split is a view of the registered weight (no
copy). DeepSeek-R1 FP8 at TP 8, v0.7.3: 61 × (1,536 × 16 × 64 × 2 + 512 × 16 × 256 × 2) B = 0.42 GiB, which brings
the book with what vLLM holds beside it to 83.78 GiB against the 83.88 printed.

Releases. From v0.7.1 (V0's MLA backends; v0.7.0 ran DeepSeek's attention as MHA) to v0.7.3; V1, the default from
v0.8.0, keeps W_UK and W_UV apart (nothing absorbed into q or o) and is not read here.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvtop.domain.architectures.config_dtype import FLOAT32_BYTES
from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.versions import Era, Eras
from kvtop.domain.engines.vllm.pp_split import PP_SPLIT_ERAS
from kvtop.domain.layout import largest_stage_layers
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_layers import MlaSpec
from kvtop.domain.wording import gib

ABSORPTION_ERAS: Eras[bool] = Eras((
    Era("", False, "before v0.7.1: no MLA backend in V0 (DeepSeek's attention run as MHA), nothing absorbed"),
    Era("0.7.1", True, "V0 MLACommonImpl.process_weights_after_loading: VLLM_MLA_PERFORM_MATRIX_ABSORPTION on"),
    Era("0.8.0", False, "V1 by default: W_UK and W_UV kept apart, not absorbed into q or o (not read here)"),
))  # fmt: skip


# the dtype of the dequantized kv_b_proj V0's MLA keeps for an FP8 checkpoint (kept_copies): "float32" or the
# activation dtype ("activation")
DEQUANT_DTYPE_ERAS: Eras[str] = Eras((
    Era("", "float32", "scaled_dequantize(weight, scales, group_shape): out_dtype float32 by default "
                       "(quantization/utils/quant_utils.py:103-107 at v0.7.1, :97-101 at v0.7.2)"),
    Era("0.7.3", "activation", "quant_method.apply(layer, eye(act_dtype)): the GEMM returns the input's dtype "
                               "(attention/backends/mla/utils.py:279-290 at v0.7.3)"),
))  # fmt: skip


@dataclass(frozen=True)
class AbsorbedShape:
    """One rank's MLA shapes V0's absorption reads: the model's MLA block, heads on the rank, the query's rank
    (q_lora_rank, or hidden without a query LoRA), layers on the largest stage, and whether the weights are FP8."""

    model: ModelSpec
    mla: MlaSpec
    heads: int
    query_rank: int
    layers: int
    fp8: bool


def absorbed_shape(inputs: CalibrationInputs) -> AbsorbedShape | None:
    """The shapes both absorbed_matrices and kept_copies read; None where the release absorbs nothing or the model
    is not MLA."""
    model = inputs.model
    if model is None or model.mla is None or not ABSORPTION_ERAS.at(inputs.version):
        return None
    layout = inputs.layout
    return AbsorbedShape(model=model, mla=model.mla, heads=max(model.num_attention_heads // max(layout.tp, 1), 1),
                         query_rank=model.mla.q_lora_rank or model.hidden_size,
                         layers=largest_stage_layers(model.num_layers, layout.pp, PP_SPLIT_ERAS.at(inputs.version)), fp8=model.quant.method == "fp8")  # fmt: skip


def kept_copies(inputs: CalibrationInputs) -> tuple[int, str] | None:
    """(bytes, why) of what V0's absorption keeps beside W_Q_UK and W_UV_O on the largest rank: W_QR in the
    activation dtype, and for FP8 weights the dequantized kv_b_proj that W_UK and W_UV view (above); None where the
    release absorbs nothing or the model is not MLA."""
    shape = absorbed_shape(inputs)
    if shape is None:
        return None
    model, mla, heads, layers = shape.model, shape.mla, shape.heads, shape.layers
    w_qr = shape.query_rank * heads * mla.qk_rope_head_dim * model.dtype_bytes
    dequant_dtype = DEQUANT_DTYPE_ERAS.at(inputs.version)
    element = FLOAT32_BYTES if dequant_dtype == "float32" else model.dtype_bytes
    kv_b = mla.kv_lora_rank * heads * (mla.qk_nope_head_dim + mla.v_head_dim) * element if shape.fp8 else 0
    size = layers * (w_qr + kv_b)
    kv_b_words = (f" and the dequantized kv_b_proj W_UK and W_UV view ({kv_b:,} B a layer, "
                  f"{'float32' if element == FLOAT32_BYTES else 'the activation dtype'})") if kv_b else ""
    return size, (f"V0's MLA W_QR ({w_qr:,} B a layer, the activation dtype){kv_b_words}, {layers} layers: "
                  f"{gib(size)}")  # fmt: skip


def absorbed_matrices(inputs: CalibrationInputs) -> tuple[int, str] | None:
    """(bytes, why) of W_Q_UK and W_UV_O on the largest rank; None where the release absorbs nothing or the model
    is not MLA."""
    shape = absorbed_shape(inputs)
    if shape is None:
        return None
    model, mla, heads, layers = shape.model, shape.mla, shape.heads, shape.layers
    per_layer = shape.query_rank * heads * mla.kv_lora_rank + heads * mla.kv_lora_rank * model.hidden_size
    element = 1 if shape.fp8 else model.dtype_bytes
    size = layers * per_layer * element
    return size, (f"V0's MLA absorbed matrices W_Q_UK and W_UV_O ({layers} layers x {per_layer:,} elements x "
                  f"{element} B{', re-quantized to FP8' if shape.fp8 else ''}: {gib(size)})")  # fmt: skip
