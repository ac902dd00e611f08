"""SGLang's CUTLASS NVFP4 MoE padding the experts' w13 rows to the swizzled scales' 128: refused gated, unpriced plain.

`ModelOptNvFp4FusedMoEMethod.process_weights_after_loading`, CUTLASS branch (the one neither flashinfer_trtllm nor
Marlin takes), swizzles `w13_weight_scale` ([E, gemm1 × shard, hidden ÷ group]) with `swizzle_blockscale`, which pads
its rows to a multiple of 128 (layers/quantization/utils.py), then takes `intermediate_size_pad` = the swizzled rows −
`w13_weight`'s rows. Where that is not 0 a gated expert (gemm1 = 2: SwiGLU) fails `assert not
layer.moe_runner_config.is_gated` ("The intermediate size required padding, but padding is also implemented for gated
activations"): the engine dies loading the weights. A non-gated expert (gemm1 = 1: Nemotron-H's relu²) is padded
instead: w13_weight's rows, w2_weight's and w2_weight_scale's columns (`copy_or_rebind_param` of
`torch.nn.functional.pad`), bytes kvtop's weights book does not price: named not modelled.

The same block, assert line per release (wheels from PyPI, read): 0.5.9 modelopt_quant.py:1628-1635 (assert :1632),
0.5.10rc0 :1817-1824 (:1821), 0.5.10 :1834-1841 (:1838), 0.5.11 :1870-1877 (:1874), 0.5.12 :1875-1882 (:1879),
0.5.13 :2068-2075 (:2072), 0.5.23 :3014-3021 (:3018). Releases before 0.5.9 not read: no rule there.

Which runner `auto` takes: SM 11.x / 12.x (Thor, RTX 50, RTX PRO 6000, GB10) run CUTLASS for every class (the
server's flashinfer_trtllm defaults test `is_sm100_supported`, capability 10.x only: utils/common.py:258-262 at 0.5.9;
0.5.23 arg_groups/model_overrides/*.py `get_platform().is_sm100`, the same
majors [10]: utils/common.py:309-313). On SM 10.x most MoE classes default to
flashinfer_trtllm (0.5.9 server_args.py:1558-1578 for Qwen3-MoE) and kvtop does not hold that list (blockscale_leak.py
knows DeepSeek-V3's only), so there the rule is not applied. Below 10.x: 0.5.9 – 0.5.12 refuse NVFP4 MoE, 0.5.13 on run
Marlin (blockscale_leak.runs_marlin_moe), whose branch returns before this block.
"""

from __future__ import annotations

from kvtop.domain.engines.base import EngineInputs
from kvtop.domain.engines.sglang.blockscale_leak import SWIZZLE_ROWS
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.errors import InputError
from kvtop.domain.gpus import compute_capability
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import MlpKind, ModelSpec

W13_PAD_ERAS: Eras[bool] = Eras((
    Era("", False, "modelopt_quant.py before 0.5.9: not read"),
    Era("0.5.9", True, "modelopt_quant.py process_weights_after_loading CUTLASS branch: intermediate_size_pad, "
                       "assert not is_gated (0.5.9:1632, 0.5.10rc0:1821, 0.5.10:1838, 0.5.11:1874, 0.5.12:1879, "
                       "0.5.13:2072, 0.5.23:3018)"),
))  # fmt: skip
CUTLASS_ONLY_MAJORS = (11, 12)  # Blackwell beyond SM 10.x: no flashinfer_trtllm default for any class
GATED_PAD_WORDS = (
    "The intermediate size required padding, but padding is also implemented for gated activations"
)


def w13_pad_rows(model: ModelSpec, layout: ParallelLayout) -> int:
    """The rows SGLang's CUTLASS NVFP4 MoE adds to each expert's w13 (its swizzled scales' 128-row padding less
    gemm1 × the expert's shard); 0 where the model has no ModelOpt NVFP4 routed experts."""
    moe = model.moe
    if moe is None:
        return 0
    nvfp4 = False
    for layer, kind in enumerate(model.layer_mlp):
        fmt = model.quant.format_of(moe.expert_names(layer)) if kind is MlpKind.MOE else None
        nvfp4 = nvfp4 or (fmt is not None and fmt.method == "nvfp4" and fmt.scheme == "modelopt")
    if not nvfp4:
        return 0
    shard = moe.expert_intermediate_size // max(1, layout.moe_shards // layout.ep)
    rows = (2 if model.mlp_gated else 1) * shard
    return -rows % SWIZZLE_ROWS


def runs_cutlass_moe(gpu_name: str | None, version: ResolvedVersion) -> bool:
    """Whether SGLang's `auto` NVFP4 MoE surely takes the CUTLASS branch: SM 11.x / 12.x from 0.5.9."""
    capability = compute_capability(gpu_name)
    return W13_PAD_ERAS.at(version) and capability is not None and capability[0] in CUTLASS_ONLY_MAJORS


def check_gated_w13_pad(inputs: EngineInputs) -> None:
    """Refuse gated NVFP4 experts whose w13 rows need padding on the CUTLASS MoE: SGLang's assert fails the load."""
    model = inputs.model
    if not model.mlp_gated or not runs_cutlass_moe(inputs.gpu_name, inputs.version):
        return
    pad = w13_pad_rows(model, inputs.layout)
    if not pad or model.moe is None:
        return
    moe_tp = max(1, inputs.layout.moe_shards // inputs.layout.ep)
    raise InputError(
        f"SGLang {inputs.version.label} fails to load gated NVFP4 experts on {inputs.gpu_name} (CUTLASS MoE): "
        f"w13 holds 2 × (moe_intermediate_size {model.moe.expert_intermediate_size} ÷ MoE TP {moe_tp}) rows, "
        f"{pad} short of a multiple of {SWIZZLE_ROWS}, and the padding asserts '{GATED_PAD_WORDS}' "
        "(modelopt_quant.py process_weights_after_loading, from 0.5.9; :3018 at 0.5.23); pick --tp/--ep so "
        f"2 × the expert shard is a multiple of {SWIZZLE_ROWS}",
        field="--tp",
    )


def plain_w13_pad_not_modelled(
    model: ModelSpec, layout: ParallelLayout, gpu_name: str | None, version: ResolvedVersion
) -> str | None:
    """The non-gated experts' padded w13 / w2 on the CUTLASS MoE, named: kvtop's weights book does not price it."""
    if model.mlp_gated or not runs_cutlass_moe(gpu_name, version):
        return None
    pad = w13_pad_rows(model, layout)
    if not pad:
        return None
    return (f"SGLang's CUTLASS NVFP4 MoE pads each non-gated expert's w13 by {pad} rows (and w2 and its scales by as "
            "many columns) to the swizzled scales' 128 rows (modelopt_quant.py process_weights_after_loading, "
            "from 0.5.9): those bytes are not in the weights")  # fmt: skip
