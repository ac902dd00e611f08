"""Parameters vLLM's MXFP4 experts build beyond the checkpoint's tensors: the padded expert width (docs/engines/vllm.md
§20, the weights book's rows for what the class builds; what the loader holds beside them after load:
weights_held.py).

`Mxfp4MoEMethod.create_weights` (quantization/mxfp4.py; `mxfp4_round_up_hidden_size_and_intermediate_size`,
fused_moe/oracle/mxfp4.py at 0.33) registers each expert's w13/w2 weights, E8M0 scales and biases at a padded
intermediate size per partition: to 64 on Hopper's Triton backend, so gpt-oss at TP 2 builds 1,472 rows where the
checkpoint's shard has 1,440 (w13_weight [32, 2944, 1440], w2_weight [32, 2880, 736], w13_bias [32, 2944] in the
model dtype: engine-diff's meta-built classes at 0.33.0, sm90; reading A16 before this rule); on Ampere and Ada
(SM 8.x: Marlin, the Triton kernels need SM 9.0) the width to 128 and the hidden size to 256 (the Marlin MoE kernel
needs n % 256 and k % 128; gpt-oss-20b on an A100, v0.19.0, printed 13.72 GiB: the book 12.82, padded 13.67).
Blackwell's FlashInfer backends (padding to 256) are not modelled: the book's count stands there, and the plan
says so (mxfp4_unmodelled.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from kvtop.domain.engines.versions import ResolvedVersion, parse_release
from kvtop.domain.engines.vllm.mxfp4_sm12 import HOPPER_CHECKS, sm12_marlin, sm12_rule
from kvtop.domain.gpus import compute_capability
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import MlpKind, ModelSpec
from kvtop.domain.rounding import ceil_div, round_up
from kvtop.domain.weights import WeightRow

MXFP4_BLOCK = 32  # weights per E8M0 scale
MXFP4_BYTES = (4 + 8 / MXFP4_BLOCK) / 8  # a 4-bit weight and its share of the scale
TRITON_PAD = 64  # round_up(intermediate_size_per_partition, 64) on the Triton backend
MARLIN_PAD = (128, 256)  # Marlin: the intermediate size per partition to 128, the hidden size to 256
GPT_OSS_SINCE = "0.10.1"  # Mxfp4MoEMethod (gpt-oss support)


@dataclass(frozen=True)
class Mxfp4Experts:
    """One rank's MXFP4 experts on a layer as vLLM builds them: how many, their width, and the padded sizes."""

    backend: str  # "triton" (SM 9.0) or "marlin" (SM 8.x)
    experts: int
    width: int  # the checkpoint's intermediate size per partition
    padded: int  # as create_weights registers it
    hidden: int
    padded_hidden: int


def mxfp4_experts(
    model: ModelSpec, layout: ParallelLayout, gpu_name: str | None, version: ResolvedVersion, backend: str | None = None
) -> Mxfp4Experts | None:
    """vLLM's MXFP4 experts on this rank (Hopper's Triton or Ampere/Ada's Marlin backend; SM 11.x / 12.x as Hopper's
    at v0.10.1 … v0.11.2, as Marlin's from v0.12.0 save SM 11.x's Triton at v0.32.0 … v0.33.x: mxfp4_sm12.py; `backend` "marlin" builds Hopper's as
    Marlin does: mxfp4_backend.py); None where the model has none or the backend is not modelled."""
    moe = model.moe
    if moe is None or model.quant.method != "mxfp4":
        return None
    capability = compute_capability(gpu_name)
    sm12 = sm12_marlin(capability, version) is not None  # SM 11.x / 12.x from v0.12.0: Marlin (mxfp4_sm12.py)
    as_hopper = capability == (9, 0) or sm12_rule(capability, version) == HOPPER_CHECKS  # mxfp4_sm12.py
    if not sm12 and not as_hopper and (capability is None or capability[0] != 8):
        return None
    release = version.release
    if release is not None and release < (parse_release(GPT_OSS_SINCE) or release):
        return None
    if model.quant.format_of(moe.expert_names(0)) is None:
        return None
    if layout.ep > 1:  # whole experts, split over the EP group
        experts, width = ceil_div(moe.num_routed_experts, layout.ep), moe.expert_intermediate_size
    else:  # every expert, its intermediate size split over TP (× the DP replicas: layout.moe_shards)
        experts, width = moe.num_routed_experts, moe.expert_intermediate_size // layout.moe_shards
    hidden = model.hidden_size
    if sm12 or capability is not None and capability[0] == 8 or backend == "marlin":
        return Mxfp4Experts("marlin", experts, width, round_up(width, MARLIN_PAD[0]), hidden,
                            round_up(hidden, MARLIN_PAD[1]))  # fmt: skip
    return Mxfp4Experts("triton", experts, width, round_up(width, TRITON_PAD), hidden, hidden)


def _padding_bytes(built: Mxfp4Experts, model: ModelSpec) -> float:
    """One layer's padded rows and columns: 4-bit weights and their scales (gate, up and down), and on Triton
    w13's bias rows in the model dtype."""
    grown = built.experts * 3 * (built.padded * built.padded_hidden - built.width * built.hidden) * MXFP4_BYTES
    if built.backend == "triton" and model.moe is not None and model.moe.expert_bias:
        grown += built.experts * 2 * (built.padded - built.width) * model.dtype_bytes
    return grown


def padding_bytes(model: ModelSpec, layers: range, built: Mxfp4Experts | None) -> int:
    """What `built`'s padding adds over the MoE layers among `layers` (0 where nothing is padded)."""
    if built is None or (built.padded, built.padded_hidden) == (built.width, built.hidden):
        return 0
    moe_layers = sum(1 for layer in layers if model.layer_mlp[layer] is MlpKind.MOE)
    return max(round(moe_layers * _padding_bytes(built, model)), 0)


def built_rows(
    model: ModelSpec, layout: ParallelLayout, layers: range, gpu_name: str | None, version: ResolvedVersion,
    quantization: str | None = None,
) -> tuple[WeightRow, ...]:
    """The rows vLLM's classes add to the book on one rank of the stage holding `layers` (the GPU's default backend:
    a launch's own is the calibration's, mxfp4_backend.py), and the GPTQ zero points the kernels keep and
    scales of whole groups (gptq_linear.py), GPTQ experts Marlin MoE refuses (gptq_moe_fallback.py), and AWQ's
    zero points Machete keeps in 16 bits (awq_linear.py, which reads the launch's `quantization`)."""
    from kvtop.domain.engines.vllm.awq_linear import awq_linear_rows
    from kvtop.domain.engines.vllm.gptq_linear import gptq_linear_rows
    from kvtop.domain.engines.vllm.gptq_moe_fallback import gptq_moe_fallback_row

    wna16 = gptq_moe_fallback_row(model, layout, layers, version)
    gptq = gptq_linear_rows(model, layout, layers, gpu_name, version) + ((wna16,) if wna16 is not None else ())
    awq = awq_linear_rows(model, layout, layers, gpu_name, version, quantization)
    return _padding_rows(model, layout, layers, gpu_name, version) + gptq + awq


def _padding_rows(
    model: ModelSpec, layout: ParallelLayout, layers: range, gpu_name: str | None, version: ResolvedVersion
) -> tuple[WeightRow, ...]:
    """The MXFP4 experts' padding row, where the backend pads."""
    built = mxfp4_experts(model, layout, gpu_name, version)
    nbytes = padding_bytes(model, layers, built)
    if built is None or nbytes <= 0:
        return ()
    sizes = f"width {built.width:,} → {built.padded:,}" + (
        f", hidden {built.hidden:,} → {built.padded_hidden:,}" if built.padded_hidden != built.hidden else "")
    return (WeightRow(component="expert_padding", params=0, bytes=nbytes, shards=1, bytes_per_param=0.0, note=(
        f"vLLM's MXFP4 experts padded at create_weights ({built.backend}: {sizes}; quantization/mxfp4.py)")),)  # fmt: skip
