"""What SGLang's MXFP4 experts hold after the load beside the checkpoint's tensors on the triton_kernels runner
(gpt-oss on Hopper; docs/engines/sglang.md §20.7).

The runner: for GptOssForCausalLM with an MXFP4 checkpoint SGLang's auto `moe_runner_backend` is `flashinfer_mxfp4`
on SM 10.x, `triton_kernel` on SM 12.x to 0.5.13 (then Marlin, then flashinfer_mxfp4: `SM120_TRITON_ERAS`) and, with
EP 1, no `--quantization` and triton_kernels installed, everywhere else (server_args.py 0.5.3 :763/:775-777, 0.5.9
:1372/:1392-1395, 0.5.10.post1 :1744/:1768-1784; 0.5.23 arg_groups/model_overrides/gpt_oss.py:102-117). triton_kernels is assumed installed (SGLang's images ship it; the
corpus's H100 starts print `moe_runner_backend: triton_kernel`); kvtop reads no `--moe-runner-backend` (a typed one
is refused, flags_unmodelled_late.py); there a typed `--quantization` or EP > 1 leaves the runner auto, which
upcasts the experts to bf16 instead (an all-to-all backend's runner is not read): refused (`check_quantization_upcast`,
by release with file:line).

What `Mxfp4MoEMethod.process_weights_after_loading` keeps on that runner (quantization/mxfp4.py, the triton branch):
- the expert biases re-made in float32 in place of the bf16 ones (`layer.w13_weight_bias.to(torch.float32)`);
- `_swizzle_mxfp4` hands weights and scales to triton_kernels' `convert_layout`; the swizzled weights replace the
  checkpoint's (`del layer.w13_weight` / `w2_weight`), but the scales are not deleted: `w13_weight_scale` /
  `w2_weight_scale` stay registered on the layer beside the swizzled copy in the method's `PrecisionConfig` (only
  the upcast branch deletes them). On SM 9.x the scale layout is `HopperMXScaleLayout`, whose `swizzle_data` pads
  the rows to 2 × num_warps × 2 × 8 = 256 (num_warps 8) and the block-32 width to even, then copies (permute +
  flatten): a second, padded copy. SM 8.x and 12.x take `StridedLayout`, whose `swizzle_data` returns the tensor
  (a view: nothing held twice). (triton_kernels tensor_details/layout.py and layout_details/hopper_scale.py as vLLM
  0.15.0 bundles them; SGLang pins no triton_kernels, so its layout is read there.) From 0.5.19 `_swizzle_mxfp4` first
  pads the scales' K to a multiple of 128 weights on SM 9.x (`_pad_hopper_mxfp4_scale`, 0.5.19 :216-224/:251, 0.5.23
  :220-227/:269; absent at 0.5.18): 2,880 → 92 columns, not 90 (`HOPPER_K_PAD_ERAS`). Those releases import
  triton_kernels' newer `matmul_details` API, whose scale layout is not read: its row padding is assumed the same.
Read in the wheels: 0.5.3rc0 and 0.5.3 mxfp4.py:557 (bias) / :581 (del weights) / :592-594 (upcast branch deletes
the scales), 0.5.5 :548/:572/:583-585, 0.5.9 :678/:702-703/:719-721, 0.5.10.post1 :693/:717-718/:734-737, 0.5.14
:811/:835/:876-878, 0.5.17 :937/:961/:1002-1004, 0.5.19 :1013/:1037/:1078-1080, 0.5.23 :1049/:1074-1075/:1130-1132.
0.5.0rc0 takes the runner from `--enable-triton-kernel-moe` (its own branch, not read further); 0.5.1, 0.5.2 not read:
nothing is charged before 0.5.3rc0.

Judged against SGLang 0.5.10.post1's `weight: 14.67` GiB of gpt-oss-20b on an H100 PCIe (tests/data/calibration/
sglang.jsonl, chiatzen…-auto): 24 layers × (32 × (5,888 + 3,072) × 90 B of swizzled scales + 32 × 8,640 × 2 B more of
float32 biases) = 632,586,240 B (0.59 GiB) of the 1.63 GiB the book missed (with their rounding the term 13.04 →
13.71 GiB); the other ≈ 0.96 GiB is not found in the code read (2,880 needs no padding in HopperMXValueLayout; every temporary is freed before `empty_cache`; the caching
allocator's segments the swizzle leaves are not modelled) and stays in the term's error.
"""

from __future__ import annotations

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.sglang.pp_split import PP_SPLIT_ERAS
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.gpus import compute_capability
from kvtop.domain.layout import pp_layer_range
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_layers import MlpKind
from kvtop.domain.rounding import round_up

GPT_OSS = "GptOssForCausalLM"
MXFP4_BLOCK = 32  # one E8M0 scale (uint8) per 32 weights
# HopperMXScaleLayout.swizzle_data: rows to SWIZZLE_ALIGN_M = 2 × num_warps × 2 × 8 (num_warps 8), width to 2
HOPPER_SCALE_ROWS, HOPPER_SCALE_WIDTH = 2 * 8 * 2 * 8, 2
FLOAT32 = 4

# the weights a scale column's K is padded to before the Hopper swizzle (1: no padding)
HOPPER_K_PAD_ERAS: Eras[int] = Eras((
    Era("", 1, "no _pad_hopper_mxfp4_scale (0.5.18 quantization/mxfp4.py:172 _swizzle_mxfp4 read)"),
    Era("0.5.19", 128, "quantization/mxfp4.py _pad_hopper_mxfp4_scale: round_up(k_size, 128) // 32 columns on SM 9.x "
                       "(0.5.19 :216-224, :251; 0.5.23 :220-227, :269)"),
))  # fmt: skip
SCALES_KEPT_ERAS: Eras[bool] = Eras((
    Era("", False, "0.5.0rc0: the runner from --enable-triton-kernel-moe (not read further); 0.5.1, 0.5.2 not read"),
    Era("0.5.3rc0", True, "quantization/mxfp4.py Mxfp4MoEMethod.process_weights_after_loading, triton branch: float32 "
                          "biases, `del layer.w13_weight` / `w2_weight` only (0.5.3rc0 :557/:581, 0.5.10.post1 "
                          ":693/:717-718, 0.5.23 :1049/:1074-1075): the checkpoint's scales kept beside the swizzled copy"),
))  # fmt: skip
# SM 12.x's auto runner for an MXFP4 gpt-oss (its own branch, before the EP / --quantization test): triton_kernel, then
# Marlin, then flashinfer_mxfp4
SM120_TRITON_ERAS: Eras[bool] = Eras((
    Era("", True, "server_args.py's SM120 branch: triton_kernel (0.5.10.post1 :1748-1753, 0.5.12 :2077, 0.5.13 :2196 "
                  "its warning)"),
    Era("0.5.14", False, "the SM120 branch takes Marlin (0.5.14 server_args.py:3886, 0.5.15 arg_groups/overrides.py:525), "
                         "then flashinfer_mxfp4 (0.5.17 overrides.py:922, 0.5.23 model_overrides/gpt_oss.py:70-74); "
                         "0.5.16 not read"),
))  # fmt: skip


def _mxfp4_gpt_oss(model: ModelSpec | None) -> bool:
    return model is not None and model.architecture == GPT_OSS and model.moe is not None and model.quant.method == "mxfp4"


def _takes_triton_kernels(ep: int, quantization: str | None) -> bool:
    """The auto runner's own test on every GPU but SM 10.x and 12.x: `ep_size == 1 and … quantization is None`
    (0.5.12 server_args.py:2098-2102, 0.5.23 model_overrides/gpt_oss.py:102-107); else it stays auto and upcasts."""
    return ep == 1 and quantization is None


def a2a_ep(ep: int, tp: int, a2a_backend: str | None) -> int:
    """The EP SGLang runs at: an all-to-all backend spans the experts over the TP group, whatever `--ep-size` says
    (`self.ep_size = self.tp_size` for deepep, mooncake, nixl, flashinfer, mori: 0.5.12 server_args.py:3215-3219 and
    its siblings in `_handle_a2a_moe`, :3188 on; 0.5.23 arg_groups/overrides.py:1611-1619, `_A2A_EP_SPANNING_BACKENDS`
    :1578). The order against gpt-oss's runner choice differs by release (0.5.12 chooses first, :929 before :967;
    0.5.23 asserts triton_kernel at EP 1, model_hook.py:569-571), so kvtop reads the EP the experts are split by."""
    return tp if a2a_backend is not None and tp > 1 else ep


def check_quantization_upcast(model: ModelSpec, gpu_name: str | None, version: ResolvedVersion,
                              quantization: str | None, *, ep: int, a2a_backend: str | None) -> None:
    """Refuse an MXFP4 gpt-oss launched with `--quantization`, or at EP > 1, where SGLang then upcasts its experts
    to bf16: the auto runner takes triton_kernels only at `ep_size == 1` with no `--quantization` (server_args.py
    0.5.10.post1 :1768-1771, 0.5.12 :2098-2102; 0.5.17 arg_groups/overrides.py:949-953; 0.5.23
    arg_groups/model_overrides/gpt_oss.py:102-107), so on every GPU but SM 10.x (flashinfer_mxfp4, its own branch
    first) and SM 12.x (its own branch: triton_kernel, Marlin, flashinfer_mxfp4) the runner stays auto and
    `Mxfp4MoEMethod.process_weights_after_loading` takes its upcast branch (0.5.10.post1 quantization/mxfp4.py:719-739,
    0.5.12 :852-870, 0.5.17 :987-1005, 0.5.23 :1115-1135, its `else`: no test of EP or the flag): 16 bits a weight
    where MXFP4 holds 4.25, not modelled. With an all-to-all backend at EP > 1 the runner is not read: `deepep`
    leaves it auto (no resolution in 0.5.12 server_args.py, 0.5.17 server_args.py/overrides.py, 0.5.23
    arg_groups/moe_hook.py:362-398), so the same `else` upcasts; 0.5.23 resolves deepep_v2 and pplx to deep_gemm
    (moe_hook.py:404-409, :603-609), whose kept bytes (mxfp4.py:669 on) are not read: refused on `--moe-a2a-backend`.
    From 0.5.3rc0 (`SCALES_KEPT_ERAS`; 0.5.3 server_args.py :775-777 and mxfp4.py :592-594 as read for the triton branch);
    an unknown GPU is not refused."""
    capability = compute_capability(gpu_name)
    if _takes_triton_kernels(ep, quantization) or not _mxfp4_gpt_oss(model) or not SCALES_KEPT_ERAS.at(version):
        return
    if capability is None or capability[0] in (10, 12):
        return
    if quantization is not None:
        raise UnsupportedModelError(
            f"SGLang {version.label} upcasts gpt-oss's MXFP4 experts to bf16 on {gpu_name} when --quantization is given "
            f"(its auto MoE runner takes triton_kernels only without it; quantization/mxfp4.py's upcast branch), which "
            f"kvtop does not model: drop --quantization: SGLang's auto path keeps the MXFP4 experts",
            field="--quantization",
        )
    if a2a_backend is not None:
        raise UnsupportedModelError(
            f"SGLang {version.label}'s MoE runner for gpt-oss's MXFP4 experts on {gpu_name} at EP {ep} with "
            f"--moe-a2a-backend {a2a_backend} is not read by kvtop (deepep leaves it auto, whose load upcasts the experts "
            f"to bf16; 0.5.23 takes deep_gemm for deepep_v2 and pplx): plan it at EP 1 (drop --ep-size and "
            f"--moe-a2a-backend): SGLang's auto path keeps the MXFP4 experts there",
            field="--moe-a2a-backend",
        )
    raise UnsupportedModelError(
        f"SGLang {version.label} upcasts gpt-oss's MXFP4 experts to bf16 on {gpu_name} at EP {ep} (its auto MoE runner "
        f"takes triton_kernels only at EP 1; quantization/mxfp4.py's upcast branch), which kvtop does not model: "
        f"plan it at EP 1 (drop --ep-size): SGLang's auto path keeps the MXFP4 experts there",
        field="--ep-size",
    )


def _triton_kernels_major(inputs: CalibrationInputs) -> int | None:
    """The GPU's SM major where SGLang's auto runner takes triton_kernels for this launch's MXFP4 gpt-oss; else None."""
    model = inputs.model
    if not _mxfp4_gpt_oss(model):
        return None
    assert model is not None
    capability = compute_capability(inputs.gpu_name)
    if capability is None or capability[0] == 10 or not SCALES_KEPT_ERAS.at(inputs.version):  # SM 10.x: flashinfer
        return None
    if capability[0] == 12:
        return 12 if SM120_TRITON_ERAS.at(inputs.version) else None
    # every other GPU: triton_kernel only at EP 1 with no --quantization (`_takes_triton_kernels`)
    return capability[0] if _takes_triton_kernels(inputs.layout.ep, inputs.settings.quantization) else None


def _moe_layers(inputs: CalibrationInputs) -> int:
    """The MoE layers of the stage that holds the most (SGLang's pipeline split by release, pp_split.py)."""
    model = inputs.model
    assert model is not None
    moe = {index for index, kind in enumerate(model.layer_mlp) if kind is MlpKind.MOE}
    if not model.layer_mlp:
        moe = set(range(model.num_layers))
    pp, remainder = inputs.layout.pp, PP_SPLIT_ERAS.at(inputs.version)
    return max(len(moe.intersection(pp_layer_range(model.num_layers, rank, pp, remainder))) for rank in range(pp))


def _local_experts(inputs: CalibrationInputs) -> tuple[int, int]:
    """(the rank's experts, its intermediate shard): experts over EP, the intermediate over the MoE TP (TP ÷ EP),
    padded to 64 (create_weights' triton_kernels_padding_alignment, mxfp4.py 0.5.10.post1 :340/:366-369)."""
    model = inputs.model
    assert model is not None and model.moe is not None
    moe, layout = model.moe, inputs.layout
    moe_tp = layout.moe_shards // layout.ep
    return moe.num_routed_experts // layout.ep, round_up(moe.expert_intermediate_size // moe_tp, 64)


def swizzled_scale_tensors(inputs: CalibrationInputs) -> list[int]:
    """Bytes of each swizzled scale tensor the rank keeps beside the checkpoint's (w13's then w2's, a MoE layer each;
    SM 9.x only): local experts × rows padded to 256 × (width ÷ 32) padded to even."""
    if _triton_kernels_major(inputs) != 9:
        return []
    model = inputs.model
    assert model is not None and model.moe is not None
    experts, shard = _local_experts(inputs)
    hidden, k_pad = model.hidden_size, HOPPER_K_PAD_ERAS.at(inputs.version)

    def padded(rows: int, width: int) -> int:
        columns = round_up(width, k_pad) // MXFP4_BLOCK
        return experts * round_up(rows, HOPPER_SCALE_ROWS) * round_up(columns, HOPPER_SCALE_WIDTH)

    return [padded(2 * shard, hidden), padded(hidden, shard)] * _moe_layers(inputs)


def mxfp4_held(inputs: CalibrationInputs) -> tuple[int, str] | None:
    """(bytes, why) the triton_kernels runner keeps beside the book: the swizzled scales' copy (SM 9.x) and the
    biases' float32 half beyond their bf16 bytes; None where SGLang takes another runner."""
    major = _triton_kernels_major(inputs)
    if major is None:
        return None
    model = inputs.model
    assert model is not None and model.moe is not None
    experts, shard = _local_experts(inputs)
    biases = experts * (2 * shard + model.hidden_size) * (FLOAT32 - model.dtype_bytes) if model.moe.expert_bias else 0
    scales = sum(swizzled_scale_tensors(inputs))
    held = scales + biases * _moe_layers(inputs)
    if held <= 0:
        return None
    kept = "the checkpoint's block scales kept beside their swizzled, padded copy and " if scales else ""
    # the two assumptions the module's docstring names, said where the figure is
    newer = scales > 0 and HOPPER_K_PAD_ERAS.at(inputs.version) != 1
    rows = "; the newer triton_kernels' scale rows assumed padded to 256 as before" if newer else ""
    return held, (f"SGLang's MXFP4 experts on triton_kernels (SM {major}.x; assumed installed, as SGLang's images ship "
                  f"it{rows}): {kept}float32 expert biases (quantization/mxfp4.py)")
