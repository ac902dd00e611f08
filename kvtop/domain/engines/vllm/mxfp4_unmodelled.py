"""Where vLLM builds a launch's MXFP4 experts in a layout kvtop does not model: said aloud, never a silent book
(docs/engines/vllm.md §20.1).

weights_built.py pads the experts as Hopper's Triton backend and as Marlin build them (SM 8.x; SM 11.x / 12.x from
v0.12.0, mxfp4_sm12.py); elsewhere the weights book counts the checkpoint's experts unpadded, a figure vLLM does not
hold: on family 100 (FlashInfer TRTLLM or Triton, `_get_priority_backends_for_gpt_oss`), on SM 11.x at v0.32.0 …
v0.33.x (Triton ahead of Marlin, in triton_kernels' Blackwell layouts), where a log printed Triton on SM 11.x / 12.x
or a backend whose layout kvtop does not build (FlashInfer's, DeepGEMM's: mxfp4_backend.py PRINTED_LAYOUTS), or on a
GPU whose compute capability kvtop does not know. The plan names it (`EngineResult.not_modelled`, read through
`Ledger.not_modelled`: `plan`'s and `explain`'s 'note: not modelled: …' lines, their JSON, the planner's table).
"""

from __future__ import annotations

from kvtop.domain.engines.versions import ResolvedVersion, parse_release
from kvtop.domain.engines.vllm.mxfp4_backend import mxfp4_backend, printed_name, printed_unbuilt
from kvtop.domain.engines.vllm.mxfp4_sm12 import TRITON_FIRST, is_sm12, sm12_rule, sm12_triton_source
from kvtop.domain.engines.vllm.weights_built import GPT_OSS_SINCE, mxfp4_experts
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.gpus import compute_capability
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec


def mxfp4_not_modelled(
    model: ModelSpec, layout: ParallelLayout, settings: LaunchSettings | None, gpu_name: str | None,
    version: ResolvedVersion,
) -> str | None:
    """Why the weights book's MXFP4 experts are not the layout vLLM builds on this launch; None where kvtop builds
    that layout (or the model has no MXFP4 experts, or the release no MXFP4 MoE method)."""
    moe = model.moe
    if moe is None or model.quant.method != "mxfp4" or model.quant.format_of(moe.expert_names(0)) is None:
        return None
    first = parse_release(GPT_OSS_SINCE)
    if version.release is not None and first is not None and version.release < first:
        return None
    try:
        backend = mxfp4_backend(settings, gpu_name, version)
    except (InputError, UnsupportedModelError):  # refused where the backend is chosen (the weights term)
        return None
    capability = compute_capability(gpu_name)
    built = mxfp4_experts(model, layout, gpu_name, version, backend=backend.name if backend is not None else None)
    # the log named it: measured, so no release's guess stands in for it (a Marlin printed on a GPU kvtop builds none
    # for, family 100, is named too)
    printed = printed_unbuilt(settings) or (printed_name(settings) if backend is None and built is None else None)
    if printed is not None:
        counted = f"{built.backend}'s padding" if built is not None else "the checkpoint's experts unpadded"
        return (f"vLLM {version.label}'s MXFP4 experts as the log's '{printed}' MoE backend lays them out, not modelled; "
                f"the weights count {counted}")  # fmt: skip
    if built is not None and (backend is not None or not is_sm12(capability)):
        return None
    where = f"vLLM {version.label}'s MXFP4 experts on "
    if capability is None:
        return (f"{where}a GPU whose compute capability kvtop does not know: the backend vLLM picks, and how it pads "
                "them, not modelled; the weights count the checkpoint's experts unpadded")  # fmt: skip
    sm = f"{gpu_name} (SM {capability[0]}.{capability[1]})"
    if sm12_rule(capability, version) == TRITON_FIRST:
        return (f"{where}{sm}: Triton runs ahead of Marlin ({sm12_triton_source(version)}), in triton_kernels' "
                "Blackwell layouts, not modelled; the weights count the checkpoint's experts unpadded")  # fmt: skip
    if built is not None:  # SM 11.x / 12.x where the log printed Triton: the book keeps the release's Marlin
        return (f"{where}{sm}: the log's Triton backend lays them out in triton_kernels' Blackwell layouts, not "
                "modelled; the weights count Marlin's padding")  # fmt: skip
    # family 100's priority list (`_get_priority_backends_for_gpt_oss`): FlashInfer TRTLLM, then Triton; below SM 8.0
    # vLLM refuses MXFP4 before any backend is picked (kernels.MXFP4_MIN_CAPABILITY_ERAS)
    picks = " (on family 100 FlashInfer TRTLLM or Triton)" if capability[0] == 10 else ""
    return (f"{where}{sm}: the backend vLLM picks there{picks} and its padding not modelled; the weights count the "
            "checkpoint's experts unpadded")  # fmt: skip
