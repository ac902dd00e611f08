"""The device pages TurboMind's weights take beyond their bytes, where each tensor is its own `cudaMalloc`
(docs/engines/lmdeploy.md §15.7).

Up to v0.5.x `LlamaWeight` and `LlamaDecoderLayerWeight::mallocWeights` allocate every weight tensor with
`deviceMalloc`, one `cudaMalloc` each (`utils/memory_utils.cu`), before `LlamaBatch`'s `SequenceManager` measures
`cudaMemGetInfo` free. The driver hands device memory out in pages: a tensor of 37.5 MiB holds 38. kvtop assumes
the 2 MiB large page of every NVIDIA GPU since Pascal for a tensor of 2 MiB or more and charges nothing for a
smaller one (the driver packs small allocations into shared pages); the granularity is not printed, so the charge
is an estimate and its error is the charge itself. Read at v0.2.2, v0.3.0, v0.4.2 and v0.5.3: a layer
holds the fused qkv (hidden × (heads + 2 kv heads) × head_dim ÷ TP), the output ((hidden ÷ TP) × hidden), the MLP's
gate and up (fused in one tensor for a 4-bit checkpoint, `fused_up_and_gate_`) and down, each a kernel and, for a
4-bit one, `scales_and_zeros` of input ÷ group × output × 2 halves; the embedding and LM head are whole on every
rank (vocabulary padded to a multiple of TP). v0.6.0 lays the tensors out anew (scales and zeros apart) and v0.6.4
allocates them from the device's stream-ordered pool (`cudaMallocAsync`): not read for pages, charged nothing.
"""

from __future__ import annotations

from kvtop.domain.engines.lmdeploy.eras import TURBOMIND_WEIGHT_PAGES_ERAS
from kvtop.domain.engines.versions import ResolvedVersion, era_for
from kvtop.domain.model import LayerKind, MlpKind, ModelSpec
from kvtop.domain.rounding import round_up

PAGE_BYTES = 2 << 20  # the driver's large page (assumed: not printed)
HALF_BYTES = 2  # scales_and_zeros are half whatever T


def charged_page_bytes(model: ModelSpec, tp: int, version: ResolvedVersion) -> int | None:
    """The pages charge of a TurboMind start of `version`: `page_rounding_bytes` in the releases that cudaMalloc each
    weight tensor (eras.TURBOMIND_WEIGHT_PAGES_ERAS), 0 in the others; None where the release charges them but kvtop
    does not list the model's tensors. The one rule the budget's step and the calibration's error both read."""
    if not era_for(TURBOMIND_WEIGHT_PAGES_ERAS, version).value:
        return 0
    return page_rounding_bytes(model, tp)


def page_rounding_bytes(model: ModelSpec, tp: int) -> int | None:
    """What one rank's weight tensors take beyond their bytes when each is rounded up to whole pages; None for a
    model whose TurboMind tensors this does not list (MoE, MLA, linear or shared layers, a quantization other than
    16-bit or 4-bit groups)."""
    quant = model.quant
    four_bit = quant.quantized and quant.weight_bits == 4 and bool(quant.group_size) and not quant.mixed
    if quant.quantized and not four_bit:
        return None
    if model.moe is not None or model.mla is not None or model.state is not None:
        return None
    if any(kind not in (LayerKind.FULL, LayerKind.SLIDING) for kind in model.layer_attention):
        return None
    if any(kind is not MlpKind.DENSE for kind in model.layer_mlp):
        return None
    tp = max(tp, 1)
    h, hd = model.hidden_size, model.head_dim
    inter = model.intermediate_size // tp
    shapes = [
        (h, (model.num_attention_heads + 2 * model.num_kv_heads) * hd // tp),  # qkv
        (model.num_attention_heads * hd // tp, h),  # output
        *([(h, 2 * inter)] if four_bit else [(h, inter), (h, inter)]),  # gate + up
        (inter, h),  # down
    ]
    layer = sum(_matrix_pages(rows, cols, model, four_bit) for rows, cols in shapes)
    vocab = round_up(model.vocab_size, tp)
    table = _over(vocab * h * model.dtype_bytes)
    return model.num_layers * layer + 2 * table


def _matrix_pages(rows: int, cols: int, model: ModelSpec, four_bit: bool) -> int:
    if not four_bit:
        return _over(rows * cols * model.dtype_bytes)
    group = model.quant.group_size or 1
    return _over(rows * cols // 2) + _over(rows // group * cols * 2 * HALF_BYTES)


def _over(size: int) -> int:
    """Bytes a tensor's last page leaves unused (0 below one page: packed with others)."""
    if size < PAGE_BYTES:
        return 0
    return -size % PAGE_BYTES
