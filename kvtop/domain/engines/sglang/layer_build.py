"""What SGLang's linear layers hold beside the checkpoint's matrices (docs/engines/sglang.md §20), as the stage parts
the weights book reads (`StageParts.linear_shape_bytes`).

A compressed-tensors weight-only int (WNA16) linear module registers `weight_shape`, int64 [2] (16 B), whole on
every rank (0.5.23 compressed_tensors/schemes/compressed_tensors_wNa16.py `CompressedTensorsWNA16.create_weights`:
a BasevLLMParameter of 2 int64). The recon Llama-3.1-8B-Instruct-CT-w4a16 meta build (0.5.23): qkv_proj, o_proj,
gate_up_proj and down_proj each hold one, 2,048 B over 32 layers at TP 1 and on each rank at TP 2. Earlier releases
are not checked, so the book's count stands for them.

A bitsandbytes 8-bit (LLM.int8) checkpoint's per-row scales (SCB) are not on the GPU when the pools are sized: the
loader keeps the checkpoint's tensor, read on the CPU (`_quantized_8bit_generator` into `bnb_quant_state`,
srt/model_loader/loader.py; safetensors opened with device="cpu"), and `BitsAndBytesLinearMethod._apply_8bit_weight`
copies it to the GPU at the first forward (`quant_states[i].to(x.device)`, layers/quantization/bitsandbytes.py).
The recon Llama-3.1-8B-Instruct-bnb-8bit meta build at TP 1: int8 weights only, 9,081,200,640 B.
"""

from __future__ import annotations

from kvtop.domain.engines.sglang.weights_built import CHECKED_ERAS
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.layout import StageParts
from kvtop.domain.model import ModelSpec

WNA16_SHAPE_BYTES = 2 * 8  # weight_shape: torch.empty(2, dtype=torch.int64)


def with_linear_shapes(parts: StageParts, model: ModelSpec, version: ResolvedVersion) -> StageParts:
    """`parts` with the weight_shape each WNA16 linear module of `model` holds in this release."""
    if not model.quant.weight_only_int or not CHECKED_ERAS.at(version):
        return parts
    return parts.model_copy(update={"linear_shape_bytes": WNA16_SHAPE_BYTES})


def with_host_scales(parts: StageParts, model: ModelSpec, version: ResolvedVersion) -> StageParts:
    """`parts` with a bitsandbytes 8-bit checkpoint's row scales left on the host in this release."""
    quant = model.quant
    if quant.scheme != "bitsandbytes" or quant.weight_bits != 8 or not CHECKED_ERAS.at(version):
        return parts
    return parts.model_copy(update={"host_row_scales": True})
