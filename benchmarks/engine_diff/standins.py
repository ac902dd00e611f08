"""Stand-ins shared by the engine runners (standard library and torch only: imported inside the
engine's venv, beside the runner)."""

from __future__ import annotations

from typing import Any


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
