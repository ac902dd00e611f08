"""Stand-ins shared by the engine runners (standard library and torch only: imported inside the
engine's venv, beside the runner)."""

from __future__ import annotations

import traceback
from typing import Any

# What the device-queries stand-in's mem_get_info answers (SGLang): free memory before, then after,
# weight load, in bytes.
FREE_BYTES = {"now": 0}


def _is_accelerator(device: Any) -> bool:
    import torch

    if isinstance(device, torch.device):
        return device.type == "cuda"
    if isinstance(device, str):
        return device.split(":")[0] == "cuda"
    return isinstance(device, int) and not isinstance(device, bool)


def cuda_to_meta(target: str = "meta") -> Any:
    """meta-device: tensors a constructor puts on `cuda` (explicitly) go to meta (or, where the
    engine reads values back from small bookkeeping tensors, to the CPU)."""
    import torch
    from torch.overrides import TorchFunctionMode

    class CudaToMeta(TorchFunctionMode):
        def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            kwargs = dict(kwargs or {})
            if _is_accelerator(kwargs.get("device")):
                kwargs["device"] = target
            if func is torch.Tensor.cuda:
                return args[0].to(target)
            if func is torch.Tensor.to:
                args = tuple(target if i and _is_accelerator(a) else a for i, a in enumerate(args))
            return func(*args, **kwargs)

    return CudaToMeta()


HARNESS_ERRORS = (AttributeError, ImportError, NameError, TypeError)


def refusal_or_harness_error(exc: BaseException, package: str) -> str:
    """ "refused" when the engine's own code raised it (a check it makes on a real GPU too);
    "harness-error" when a stand-in or this runner is the likely cause (not a result)."""
    frames = traceback.extract_tb(exc.__traceback__)
    innermost = frames[-1].filename if frames else ""
    in_engine = f"/site-packages/{package}/" in innermost or "/pydantic" in innermost
    if "trust_remote_code" in str(exc) or "custom code" in str(exc):
        return "harness-error"  # the config folder holds no modeling code (a hub checkout would)
    return "refused" if in_engine and not isinstance(exc, HARNESS_ERRORS) else "harness-error"
