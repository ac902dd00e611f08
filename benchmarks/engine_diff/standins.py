"""Stand-ins shared by the engine runners (standard library and torch only: imported inside the
engine's venv, beside the runner)."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import traceback
import types
from collections.abc import Callable
from typing import Any

# What the device-queries stand-in's mem_get_info answers (SGLang): free memory before, then after,
# weight load, in bytes.
FREE_BYTES = {"now": 0}


class PlaceholderModule(importlib.abc.Loader):
    """absent-packages: a package that is not installed here loads as a module (and package) whose
    every attribute is `placeholder()` (each runner brings the placeholder its engine needs)."""

    def __init__(self, placeholder: Callable[[], Any]) -> None:
        self._placeholder = placeholder

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = types.ModuleType(spec.name)
        module.__path__ = []
        placeholder = self._placeholder

        def __getattr__(attr: str) -> Any:
            if attr.startswith("__"):
                raise AttributeError(attr)
            return placeholder()

        module.__getattr__ = __getattr__  # type: ignore[method-assign]
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        return None


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
