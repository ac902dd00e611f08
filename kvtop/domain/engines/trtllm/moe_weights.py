"""What TensorRT-LLM's PyTorch backend builds of MXFP4 experts beyond the checkpoint's tensors (docs/engines/trtllm.md §24).

The fused-MoE quantization methods register each rank's expert weights at padded sizes before they load
(`MXFP4WeightFusedMoEMethod.create_weights`, _torch/modules/fused_moe/quantization.py; stored copy search-index id
287529276): w3_w1 [experts, 2 × I_pad, H_in_pad / 2] 4-bit weights with [.., H_in_pad / 32] E8M0 scales, w2
[experts, H_out_pad, I_pad / 2] with [.., I_pad / 32] scales, and biases [experts, 2 × I_pad] and [experts, H_out_pad].
By `moe_config.backend`:
- CUTLASS (`MXFP4WeightCutlassFusedMoEMethod.weight_alignment = 128`): I and H both to 128, biases in the model dtype;
- TRTLLM (TRTLLM-Gen, `MXFP4WeightTRTLLMGenFusedMoEMethod`): I and w2's output rows to 128 (`weight_alignment`), the
  hidden size w3_w1 reads to 512 (`input_hidden_alignment`), biases float32 (the 1.3 tree: its auto-deploy mirror
  `mxfp4_weight_prep.py` says "keep in sync with MXFP4WeightTRTLLMGenFusedMoEMethod … INPUT_HIDDEN_ALIGNMENT = 512,
  WEIGHT_ALIGNMENT = 128", id 57376136956; its unit test pads fc1 biases `.float()`, id 56461415563).
Under TP the width is padded before it is split (`_get_weight_alignment`: lcm(128, 32, moe TP), then each shard to 128).
gpt-oss-120b at TP 1 (36 layers × 128 experts, I = H = 2,880): TRTLLM grows each expert from 13,236,480 B to 14,248,960
B, 4.35 GiB in all (zufayu's 1.3.0rc10 B200 start held 65.40 GiB in torch against the book's 60.77); CUTLASS to
13,830,912 B, 2.55 GiB (its B300 start 64.12).
Not read per release: when TRTLLM-Gen took these alignments (an older stored copy, id 2465584323, registers its weights
unpadded) and the AUTO backend's choice; an unset backend is the MoeConfig default, CUTLASS (assumed).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from kvtop.domain.launch import LaunchSettings
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import MlpKind, ModelSpec
from kvtop.domain.rounding import ceil_div, round_up
from kvtop.domain.wording import gib

BACKEND_FLAG = "moe_config.backend"
CUTLASS, TRTLLM = "CUTLASS", "TRTLLM"
MXFP4_BLOCK = 32  # weights per E8M0 scale
WEIGHT_ALIGNMENT = 128  # both backends' weight_alignment
TRTLLM_INPUT_HIDDEN_ALIGNMENT = 512  # TRTLLM-Gen: the hidden size w3_w1 reads
BIAS_BYTES = {CUTLASS: None, TRTLLM: 4}  # None: the model dtype; TRTLLM-Gen keeps float32 biases


@dataclass(frozen=True)
class Mxfp4Experts:
    """One rank's MXFP4 experts on one MoE layer as the backend registers them."""

    backend: str
    stated: bool  # the launch names the backend (else the default, assumed)
    experts: int
    width: int  # the checkpoint's intermediate size per shard
    padded: int
    hidden_in: int  # the hidden size w3_w1 reads, padded
    hidden_out: int  # w2's output rows, padded
    hidden: int


def shard_width(intermediate: int, moe_tp: int) -> int:
    """`_get_weight_alignment` then the shard: the full width padded to lcm(128, 32, moe TP), each shard to 128 (the
    one count of an MXFP4 expert's padded width, read by moe_workspace.py)."""
    alignment = math.lcm(WEIGHT_ALIGNMENT, MXFP4_BLOCK, moe_tp)
    per_shard = round_up(intermediate, alignment) // moe_tp
    return round_up(per_shard, WEIGHT_ALIGNMENT)


def moe_backend(settings: LaunchSettings) -> tuple[str, bool] | None:
    """`moe_config.backend` as the launch states it (CUTLASS where unset: the MoeConfig default, assumed); None for a
    backend whose layout kvtop does not read (DEEPGEMM, CUTEDSL, WIDEEP, TRITON, AUTO)."""
    raw = settings.flags.get(BACKEND_FLAG)
    if raw is None or raw is True:
        return CUTLASS, False
    name = str(raw).strip().upper()[:20]
    return (name, True) if name in BIAS_BYTES else None


def mxfp4_experts(model: ModelSpec, layout: ParallelLayout, settings: LaunchSettings) -> Mxfp4Experts | None:
    """The MXFP4 experts one rank registers, by backend; None where the model has none or the layout is not read."""
    moe = model.moe
    if moe is None or model.quant.method != "mxfp4" or model.quant.format_of(moe.expert_names(0)) is None:
        return None
    found = moe_backend(settings)
    if found is None:
        return None
    backend, stated = found
    ep = max(layout.ep, 1)
    moe_tp = max(layout.tp // ep, 1)  # Mapping: moe_tp_size = tp_size // moe_ep_size
    experts = ceil_div(moe.num_routed_experts, ep)
    width = moe.expert_intermediate_size // moe_tp
    padded = shard_width(moe.expert_intermediate_size, moe_tp)
    hidden = model.hidden_size
    hidden_in = round_up(hidden, TRTLLM_INPUT_HIDDEN_ALIGNMENT if backend == TRTLLM else WEIGHT_ALIGNMENT)
    return Mxfp4Experts(backend, stated, experts, width, padded, hidden_in, round_up(hidden, WEIGHT_ALIGNMENT), hidden)


def _expert_bytes(width: int, hidden_in: int, hidden_out: int, bias_bytes: int) -> float:
    """One expert's w3_w1 and w2 (4-bit weights and their scales) and biases."""
    per_weight = 0.5 + 1 / MXFP4_BLOCK
    return (2 * width * hidden_in + hidden_out * width) * per_weight + (2 * width + hidden_out) * bias_bytes


def padding_bytes(model: ModelSpec, built: Mxfp4Experts) -> int:
    """What the backend's padding (and float32 biases) adds over the checkpoint's experts on one rank, all layers."""
    dtype = model.dtype_bytes
    bias = (BIAS_BYTES[built.backend] or dtype) if model.moe is not None and model.moe.expert_bias else 0
    book_bias = dtype if bias else 0
    grown = (_expert_bytes(built.padded, built.hidden_in, built.hidden_out, bias)
             - _expert_bytes(built.width, built.hidden, built.hidden, book_bias))  # fmt: skip
    moe_layers = sum(1 for kind in model.layer_mlp if kind is MlpKind.MOE)
    return max(round(moe_layers * built.experts * grown), 0)


def held_beside(model: ModelSpec | None, layout: ParallelLayout, settings: LaunchSettings) -> tuple[int, str] | None:
    """(bytes, why) the MXFP4 experts' padding adds to the weights book, for `weights_estimate(extra=…)`."""
    if model is None:
        return None
    built = mxfp4_experts(model, layout, settings)
    if built is None:
        return None
    nbytes = padding_bytes(model, built)
    if nbytes <= 0:
        return None
    said = "as the launch states" if built.stated else "the MoeConfig default, assumed"
    return nbytes, (f"{gib(nbytes)} of MXFP4 experts padded by the {built.backend} MoE backend ({said}: "
                    f"width {built.width:,} → {built.padded:,}, hidden {built.hidden:,} → {built.hidden_in:,} in, "
                    f"{built.hidden_out:,} out; quantization.py create_weights, §24)")  # fmt: skip
