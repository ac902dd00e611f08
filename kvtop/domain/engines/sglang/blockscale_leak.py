"""The NVFP4 MoE block-scale placeholders SGLang 0.5.3 – 0.5.11 leave on the GPU under FlashInfer's TRT-LLM MoE.

`ModelOptNvFp4FusedMoEMethod.create_weights` (srt/layers/quantization/modelopt_quant.py:1428 and :1445, 0.5.9
wheel) registers `w13_blockscale_swizzled` / `w2_blockscale_swizzled` beside the checkpoint's block scales, each
`swizzle_blockscale(...)` of an empty scale tensor ("Only use swizzle_blockscale for shapes"): float8, every local
expert's scale matrix padded to 128 rows and 4 columns. The CUTLASS path fills them and deletes the originals; the
`flashinfer_trtllm` path (`align_fp4_moe_weights_for_flashinfer_trtllm`, srt/layers/moe/moe_runner/
flashinfer_trtllm.py:176-181, 0.5.9) deletes the weights and scales it shuffled but never these copies, so a rank
keeps them after the load, and SGLang's `mem usage` counts them.

Releases (wheels read, docs/engines/sglang.md §20.4): 0.5.0rc2 swizzles only in the CUTLASS branch (no placeholder);
0.5.3, 0.5.6.post2, 0.5.7, 0.5.8, 0.5.9, 0.5.10, 0.5.11 allocate and never free them on the TRT-LLM path; 0.5.12
aliases them to the scales after the load (modelopt_quant.py:1835-1838, 'alias to free the placeholders'); 0.5.13
on skips them. 0.5.1 and 0.5.2 were not read: the rule starts at 0.5.3.

The runner: kvtop reads no `--moe-runner-backend` (flags_unmodelled_late.py: typed, it is refused; on a `--cmd` line
named as ignored), so the rule follows SGLang's own pick at `auto`. `ServerArgs._handle_model_specific_adjustments`
(srt/server_args.py:1288-1310 at 0.5.9; the same block read in 0.5.6.post2, 0.5.7, 0.5.10, 0.5.11) sets
`flashinfer_trtllm` for `DeepseekV3ForCausalLM` on an SM100 GPU (capability 10.x) when the quantization is
modelopt_fp4 and `--moe-a2a-backend` is none (kvtop refuses that flag too); 0.5.3 has no such default (its DeepSeek
block sets none), so there `auto` is CUTLASS and nothing leaks. Other architectures' defaults (Qwen3-MoE, GLM-4
MoE: the latter on a FlashInfer version kvtop cannot see) are not modelled: no row.
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.gpus import compute_capability
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import MlpKind, ModelSpec
from kvtop.domain.rounding import round_up
from kvtop.domain.weights import WeightRow

LEAK_ERAS: Eras[bool] = Eras((
    Era("", False, "0.5.0rc2: swizzled only in the CUTLASS branch, no placeholder (0.5.1, 0.5.2 not read)"),
    Era("0.5.3", True, "modelopt_quant.py create_weights allocates *_blockscale_swizzled; flashinfer_trtllm.py "
                       "never frees them (read in 0.5.3, 0.5.6.post2, 0.5.7 – 0.5.11; 0.5.9:1428/:1445, :176-181)"),
    Era("0.5.12", False, "modelopt_quant.py:1835-1838 (0.5.12) aliases them to the scales; 0.5.13 on skips them"),
))  # fmt: skip
DEFAULT_TRTLLM_ERAS: Eras[bool] = Eras((
    Era("", False, "0.5.3's server_args.py sets no MoE runner for DeepSeek (0.5.4 – 0.5.6 not read)"),
    Era("0.5.6.post2", True, "server_args.py: flashinfer_trtllm for DeepseekV3ForCausalLM on sm100 with "
                             "modelopt_fp4 (0.5.9:1302-1310)"),
))  # fmt: skip
DEFAULT_TRTLLM_CLASSES = frozenset({"DeepseekV3ForCausalLM"})  # the 0.5.9 block's `model_arch in [...]` kvtop plans
SWIZZLE_ROWS, SWIZZLE_COLS = 128, 4  # swizzle_blockscale (quantization/utils.py) pads each expert's scales to these


def runs_trtllm_moe(model: ModelSpec, gpu_name: str | None, version: ResolvedVersion) -> bool:
    """Whether SGLang's `auto` MoE runner is `flashinfer_trtllm` for this NVFP4 model on this GPU at this release."""
    capability = compute_capability(gpu_name)
    return (DEFAULT_TRTLLM_ERAS.at(version) and model.architecture in DEFAULT_TRTLLM_CLASSES
            and capability is not None and capability[0] == 10)  # fmt: skip


def swizzled_scales(gemm1: int, width: int, hidden: int, group: int) -> int:
    """The block-scale entries of one expert's w13 (gemm1 × width rows, hidden ÷ group columns) and w2 (hidden rows,
    width ÷ group columns) once `swizzle_blockscale` pads each to 128 rows and 4 columns (the leaked placeholders
    here, the built copies in weights_built.py)."""
    return (round_up(gemm1 * width, SWIZZLE_ROWS) * round_up(hidden // group, SWIZZLE_COLS)
            + round_up(hidden, SWIZZLE_ROWS) * round_up(width // group, SWIZZLE_COLS))  # fmt: skip


def leaked_scale_bytes(
    model: ModelSpec, layout: ParallelLayout, layers: range, gpu_name: str | None, version: ResolvedVersion
) -> int:
    """Bytes a rank keeps: over its MoE layers with ModelOpt NVFP4 experts, local experts × (w13's padded
    (2 × shard) × (hidden ÷ group) + w2's padded hidden × (shard ÷ group)) × the scale's bytes (float8: 1)."""
    moe = model.moe
    if moe is None or not LEAK_ERAS.at(version) or not runs_trtllm_moe(model, gpu_name, version):
        return 0
    local = moe.num_routed_experts // layout.ep
    width = moe.expert_intermediate_size // max(1, layout.moe_shards // layout.ep)  # each expert's shard
    gemm1 = 2 if model.mlp_gated else 1
    nbytes = 0
    for layer in layers:
        if model.layer_mlp[layer] is not MlpKind.MOE:
            continue
        fmt = model.quant.format_of(moe.expert_names(layer))
        if fmt is None or fmt.method != "nvfp4" or fmt.scheme != "modelopt" or not fmt.group_size:
            continue
        nbytes += local * swizzled_scales(gemm1, width, model.hidden_size, fmt.group_size) * fmt.scale_bytes
    return nbytes


def leak_rows(
    model: ModelSpec, layout: ParallelLayout, layers: range, gpu_name: str | None, version: ResolvedVersion
) -> tuple[WeightRow, ...]:
    """The book's row for the leaked placeholders (none where nothing leaks)."""
    nbytes = leaked_scale_bytes(model, layout, layers, gpu_name, version)
    if nbytes <= 0:
        return ()
    return (WeightRow(component="leaked_blockscale_swizzled", params=0, bytes=nbytes, shards=1, bytes_per_param=0.0,
                      note="SGLang 0.5.3 – 0.5.11's NVFP4 MoE: w13/w2_blockscale_swizzled placeholders never freed "
                           "under its default flashinfer_trtllm runner (modelopt_quant.py:1428/:1445, "
                           "moe_runner/flashinfer_trtllm.py:176-181 at 0.5.9; freed from 0.5.12)"),)  # fmt: skip
