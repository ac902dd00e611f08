"""SGLang's CUTLASS NVFP4 MoE padding the experts' w13 rows to the swizzled scales' 128: refused gated, unpriced plain.

`ModelOptNvFp4FusedMoEMethod.process_weights_after_loading`, CUTLASS branch (the one neither flashinfer_trtllm nor
Marlin takes), swizzles `w13_weight_scale` ([E, gemm1 × shard, hidden ÷ group]) with `swizzle_blockscale`, which pads
its rows to a multiple of 128 (layers/quantization/utils.py), then takes `intermediate_size_pad` = the swizzled rows −
`w13_weight`'s rows. Where that is not 0 a gated expert (gemm1 = 2: SwiGLU) fails `assert not
layer.moe_runner_config.is_gated` ("The intermediate size required padding, but padding is also implemented for gated
activations"): the engine dies loading the weights. A non-gated expert (gemm1 = 1: Nemotron-H's relu²) is padded
instead: w13_weight's rows, w2_weight's and w2_weight_scale's columns (`copy_or_rebind_param` of
`torch.nn.functional.pad`), bytes kvtop's weights book does not price: named not modelled.

The same block, assert line per release (wheels from PyPI, read): 0.5.6 modelopt_quant.py:1702-1709 (assert :1706),
0.5.7 :1582-1589 (:1586), 0.5.8 :1579-1586 (:1583), 0.5.9 :1628-1635 (:1632), 0.5.10rc0 :1817-1824 (:1821), 0.5.10
:1834-1841 (:1838), 0.5.11 :1870-1877 (:1874), 0.5.12 :1875-1882 (:1879), 0.5.13 :2068-2075 (:2072), then the assert
at 0.5.14 :2203, 0.5.15.post1 :2332, 0.5.16 :2345, 0.5.17 :2435, 0.5.18 :2618, 0.5.19 :2737, 0.5.20 :2819, 0.5.21 :2923,
0.5.22 :2942, 0.5.23 :3014-3021 (:3018). 0.5.3 – 0.5.5 swizzle the scales in that branch without padding w13 or
asserting (:1329-1340 at 0.5.3,
:1547-1560 at 0.5.5): no rule there; before 0.5.3 not read.

Which runner `auto` takes is nvfp4_runner.py's: the rule holds where kvtop reads CUTLASS (SM 11.x / 12.x for every
class; SM 10.x for a class no block of the release sends to flashinfer_trtllm, e.g. MiniMax-M2 at 0.5.3 – 0.5.17, and
Nemotron-H's flashinfer_cutlass at 0.5.6 – 0.5.10); where it assumes CUTLASS (an SM 10.x pick it does not read) it is
not applied. Below 10.x:
releases before 0.5.13 refuse NVFP4 MoE, 0.5.13 on run Marlin, whose branch returns before this block.
"""

from __future__ import annotations

from kvtop.domain.engines.base import EngineInputs
from kvtop.domain.engines.sglang.nvfp4_experts import (
    SWIZZLE_ROWS,
    expert_shard,
    gemm1_blocks,
    has_nvfp4_experts,
)
from kvtop.domain.engines.sglang.nvfp4_runner import NvFp4MoeRunner, runner_pick
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.errors import InputError
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec

W13_PAD_ERAS: Eras[bool] = Eras((
    Era("", False, "modelopt_quant.py CUTLASS branch swizzles without padding (0.5.3:1329-1340, 0.5.5:1547-1560); "
                   "before 0.5.3 not read"),
    Era("0.5.6", True, "modelopt_quant.py process_weights_after_loading CUTLASS branch: intermediate_size_pad, "
                       "assert not is_gated (0.5.6:1706, 0.5.7:1586, 0.5.8:1583, 0.5.9:1632, 0.5.10rc0:1821, "
                       "0.5.10:1838, 0.5.11:1874, 0.5.12:1879, 0.5.13:2072, 0.5.14:2203, 0.5.15.post1:2332, "
                       "0.5.16:2345, 0.5.17:2435, 0.5.18:2618, 0.5.19:2737, 0.5.20:2819, 0.5.21:2923, 0.5.22:2942, 0.5.23:3018)"),
))  # fmt: skip
GATED_PAD_WORDS = (
    "The intermediate size required padding, but padding is also implemented for gated activations"
)


def w13_pad_rows(model: ModelSpec, layout: ParallelLayout) -> int:
    """The rows SGLang's CUTLASS NVFP4 MoE adds to each expert's w13 (its swizzled scales' 128-row padding less
    gemm1 × the expert's shard); 0 where the model has no ModelOpt NVFP4 routed experts."""
    moe = model.moe
    if moe is None or not has_nvfp4_experts(model):
        return 0
    return -(gemm1_blocks(model) * expert_shard(moe, layout)) % SWIZZLE_ROWS


def runs_cutlass_moe(
    model: ModelSpec, gpu_name: str | None, version: ResolvedVersion, quantization: str | None = None
) -> bool:
    """Whether SGLang's `auto` NVFP4 MoE surely takes the CUTLASS branch (read, not assumed: nvfp4_runner.py, with the
    launch's `--quantization`) at a release that pads (from 0.5.6)."""
    pick = runner_pick(model, gpu_name, version, quantization)
    return W13_PAD_ERAS.at(version) and pick.read and pick.runner is NvFp4MoeRunner.CUTLASS


def check_gated_w13_pad(inputs: EngineInputs) -> None:
    """Refuse gated NVFP4 experts whose w13 rows need padding on the CUTLASS MoE: SGLang's assert fails the load."""
    model = inputs.model
    if not model.mlp_gated or not runs_cutlass_moe(model, inputs.gpu_name, inputs.version, inputs.settings.quantization):
        return
    pad = w13_pad_rows(model, inputs.layout)
    if not pad or model.moe is None:
        return
    moe_tp = max(1, inputs.layout.moe_shards // inputs.layout.ep)
    raise InputError(
        f"SGLang {inputs.version.label} fails to load gated NVFP4 experts on {inputs.gpu_name} (CUTLASS MoE): "
        f"w13 holds 2 × (moe_intermediate_size {model.moe.expert_intermediate_size} ÷ MoE TP {moe_tp}) rows, "
        f"{pad} short of a multiple of {SWIZZLE_ROWS}, and the padding asserts '{GATED_PAD_WORDS}' "
        "(modelopt_quant.py process_weights_after_loading, from 0.5.6; :3018 at 0.5.23); pick --tp/--ep so "
        f"2 × the expert shard is a multiple of {SWIZZLE_ROWS}",
        field="--tp",
    )


def plain_w13_pad_not_modelled(
    model: ModelSpec, layout: ParallelLayout, gpu_name: str | None, version: ResolvedVersion,
    quantization: str | None = None,
) -> str | None:
    """The non-gated experts' padded w13 / w2 on the CUTLASS MoE, named: kvtop's weights book does not price it."""
    if model.mlp_gated or not runs_cutlass_moe(model, gpu_name, version, quantization):
        return None
    pad = w13_pad_rows(model, layout)
    if not pad:
        return None
    return (f"SGLang's CUTLASS NVFP4 MoE pads each non-gated expert's w13 by {pad} rows (and w2 and its scales by as "
            "many columns) to the swizzled scales' 128 rows (modelopt_quant.py process_weights_after_loading, "
            "from 0.5.6): those bytes are not in the weights")  # fmt: skip
