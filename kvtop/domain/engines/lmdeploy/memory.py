"""Which LMDeploy engine serves the model (TurboMind or the PyTorch engine), and the memory both
measure before sizing their cache (docs/engines/lmdeploy.md §1, §2.2, §4.2, §6).

Both measure free memory once every weight is resident (with the CUDA context, NCCL and any other
process's bytes gone from it), take the least over the TP ranks, and give `cache_max_entry_count`
of it to KV blocks. Unlike vLLM and SGLang, the share is of the memory left *after* the weights
(before v0.2.2, TurboMind's was of the total).
"""

from __future__ import annotations

from kvtop.domain.calibration.host_memory import HOST_AND_CONTEXT_MEASURED
from kvtop.domain.engines.base import CALIBRATED_FREE_BEFORE_LOAD, UNIFIED_SHARE, EngineInputs
from kvtop.domain.engines.budget_step import BudgetStep
from kvtop.domain.engines.lmdeploy.eras import PYTORCH_SINCE, TURBOMIND_ARCHITECTURE_ERAS
from kvtop.domain.engines.versions import ResolvedVersion, era_for, parse_release
from kvtop.domain.errors import InputError
from kvtop.domain.gpus import is_unified
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import ModelSpec
from kvtop.domain.wording import gib

BACKEND_FLAG = "--backend"
WORKSPACE_FLAG = "--turbomind-workspace"  # kvtop's own (flags.py): LMDeploy reads a workspace off the model path


def resolve_backend(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> tuple[str, str]:
    """(backend, why): `--backend`, else TurboMind where its release supports the architecture
    (`lmdeploy.archs.autoget_backend`), else the PyTorch engine. A converted workspace (kvtop's
    `--turbomind-workspace`) is TurboMind's: `turbomind/supported_models.py is_supported` takes a model path holding
    `triton_models/` as supported before it reads any architecture, and the PyTorch engine reads a Hugging Face
    checkpoint's config.json, which a workspace has not (§15.1)."""
    if settings.turbomind_workspace and settings.backend == "pytorch":
        raise InputError("a TurboMind workspace (lmdeploy convert's triton_models/) is served by TurboMind only; "
                         "the PyTorch engine reads a Hugging Face checkpoint", field=WORKSPACE_FLAG)  # fmt: skip
    if settings.backend is not None:
        backend, why = settings.backend, f"{BACKEND_FLAG} {settings.backend}"
    elif settings.turbomind_workspace:
        backend = "turbomind"
        why = f"TurboMind: a converted workspace ({WORKSPACE_FLAG}; supported_models.py is_supported: triton_models/)"
    else:
        era = era_for(TURBOMIND_ARCHITECTURE_ERAS, version)
        if model.architecture in era.value:
            backend, why = "turbomind", f"TurboMind: it supports {model.architecture} ({era.source})"
        else:
            backend = "pytorch"
            why = f"the PyTorch engine: TurboMind does not support {model.architecture} ({era.source})"
    if backend == "pytorch":
        first, release = parse_release(PYTORCH_SINCE), version.release
        if release is not None and first is not None and release < first:
            raise InputError(f"LMDeploy {version.label} has no PyTorch engine (it first shipped in v{PYTORCH_SINCE})",
                             field=BACKEND_FLAG)  # fmt: skip
    return backend, why


def free_after_weights(inputs: EngineInputs, steps: list[BudgetStep], notes: list[str]) -> int:
    """The free memory the engine divides: measured after the weights (least over ranks), else the GPU
    less the CUDA context and NCCL (measured before load, else 1 GiB) less the weights."""
    meas, total = inputs.measured, inputs.gpu_total_bytes
    steps.append(meas.input_step(inputs.gpu_total_label(), "gpu_total_bytes", total, role="gpu_total"))
    if meas.free_after_load_bytes is not None:
        free = meas.free_after_load_bytes
        steps.append(meas.input_step("free after weights (least over ranks)", "free_after_load_bytes", free))
        return free
    before = meas.free_before_load(total)
    source = meas.free_before_load_source()
    within = meas.context_in_host()  # a unified host's assumed share holds the context (host_memory.py)
    if source != "measured":
        how = ("GPU total − 1 GiB (CUDA context, NCCL)" if meas.calibrated is None else
               f"CUDA's total less {UNIFIED_SHARE}" if within else CALIBRATED_FREE_BEFORE_LOAD)  # fmt: skip
        notes.append(f"free memory after the weights is estimated: {how} − weights; "
                     "--free-after-load gives the engine's own figure")  # fmt: skip
    # one context in every view: the driver's share (nvidia-smi's total less CUDA's) and a unified host's are rows
    # of their own, the context row is the plan's context term (`MeasuredInputs.context_before_load`)
    driver, calibrated = meas.driver_reserved_bytes(total), meas.calibrated
    if driver:
        steps.append(BudgetStep(label="− driver reserved (nvidia-smi's total less CUDA's)", bytes=-driver,
                                source=calibrated.cuda_total_source if calibrated is not None else None))  # fmt: skip
    context = meas.context_before_load(total)
    # what the driver and the context leave: a unified host's share (the whole share, the context in it, where within)
    host = total - before - driver - (0 if within else context)
    if host:
        # LMDeploy printed no such reading: the share is other engines' readings, each after its context (assumed alike)
        held_in = (f"the CUDA context and NCCL ({gib(context)}, {meas.context_source()}) within it: the share's "
                   "readings were taken after the engine's context was made" if within else "")  # fmt: skip
        steps.append(BudgetStep(label="− held by the host (unified memory)", bytes=-host, source="assumed", note=held_in))
    if not within:  # on a unified host the free memory before load measures its share with the context
        label = f"− {HOST_AND_CONTEXT_MEASURED}" if is_unified(inputs.gpu_name) and source == "measured" else (
            "− CUDA context, NCCL")  # fmt: skip
        steps.append(BudgetStep(label=label, bytes=-context,
                                measured=meas.is_measured("free_before_load_bytes"), source=meas.context_source()))  # fmt: skip
    steps += inputs.weight_steps()
    free = before - inputs.resident_bytes
    steps.append(BudgetStep(label="free after weights (least over ranks)", bytes=free))
    return free
