"""Stand-ins shared by the engine runners (standard library and torch only: imported inside the
engine's venv, beside the runner)."""

from __future__ import annotations

import ast
import functools
import importlib.abc
import importlib.machinery
import inspect
import json
import os
import textwrap
import traceback
import types
from collections.abc import Callable
from typing import Any

# What the device-queries stand-in's mem_get_info answers (SGLang): free memory before, then after,
# weight load, in bytes.
FREE_BYTES = {"now": 0}


# Which placeholders of absent packages (and of absent compiled ops) a case touched: every answer one
# gives is a default the real package might not give, so each case records the ones it read.
PLACEHOLDER_READS: set[str] = set()


def stand_in_mel_banks() -> None:
    """mel-banks: torchaudio is absent here (NEVER_INSTALL: its builds pull a CUDA torch), a placeholder package; the
    one call a constructor makes of it, MiDashengLM's DashengFrontend (vLLM 0.33.0 / SGLang 0.5.23 midashenglm.py)
    registering `torchaudio.functional.melscale_fbanks(n_freqs, …, n_mels, …)` as a non-persistent buffer, needs a
    tensor: a zero (n_freqs × n_mels) one stands in. A buffer, no parameter: no figure the comparison reads."""
    import torch

    if importlib.machinery.PathFinder.find_spec("torchaudio") is not None:
        return  # installed: the real package builds its own
    import torchaudio.functional as functional  # the placeholder package (each runner's absent-packages finder)

    def melscale_fbanks(n_freqs: int, f_min: float, f_max: float, n_mels: int, sample_rate: int, *args: Any,
                        **kwargs: Any) -> Any:  # fmt: skip
        PLACEHOLDER_READS.add("torchaudio.functional.melscale_fbanks (a zero buffer)")
        return torch.zeros(n_freqs, n_mels)

    functional.melscale_fbanks = melscale_fbanks


def stand_in_mistral_mel_filters() -> None:
    """mistral-mel-filters: mistral_common is absent from SGLang's venv; SGLang 0.5.23 voxtral.py
    VoxtralForConditionalGeneration._init_mel_filters imports `mistral_common.audio.mel_filter_bank` and registers its
    (num_frequency_bins × num_mel_bins) answer as a buffer. Only that module stands in (a zero array of that shape;
    every other mistral_common import still fails, as where the package is absent). A buffer, no parameter: no
    figure the comparison reads."""
    import sys

    import numpy

    if importlib.machinery.PathFinder.find_spec("mistral_common") is not None:
        return  # installed: the real package answers

    def mel_filter_bank(num_frequency_bins: int, num_mel_bins: int, *args: Any, **kwargs: Any) -> Any:
        PLACEHOLDER_READS.add("mistral_common.audio.mel_filter_bank (a zero buffer)")
        return numpy.zeros((num_frequency_bins, num_mel_bins), dtype=numpy.float32)

    package = types.ModuleType("mistral_common")
    package.__path__ = []
    package.__spec__ = importlib.machinery.ModuleSpec("mistral_common", None, is_package=True)
    audio = types.ModuleType("mistral_common.audio")
    audio.__spec__ = importlib.machinery.ModuleSpec("mistral_common.audio", None)
    audio.mel_filter_bank = mel_filter_bank  # type: ignore[attr-defined]
    package.audio = audio  # type: ignore[attr-defined]
    sys.modules.setdefault("mistral_common", package)
    sys.modules.setdefault("mistral_common.audio", audio)


class PlaceholderModule(importlib.abc.Loader):
    """absent-packages: a package that is not installed here loads as a module (and package) whose
    every attribute is `placeholder()` (each runner brings the placeholder its engine needs); each
    attribute read is recorded in PLACEHOLDER_READS."""

    def __init__(self, placeholder: Callable[[], Any]) -> None:
        self._placeholder = placeholder

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = types.ModuleType(spec.name)
        module.__path__ = []
        placeholder = self._placeholder

        def __getattr__(attr: str) -> Any:
            if attr.startswith("__"):
                raise AttributeError(attr)
            PLACEHOLDER_READS.add(f"{spec.name}.{attr}")
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


def host_linspace() -> Any:
    """host-values: `torch.linspace` without a device runs on the CPU: a vision tower's constructor reads its
    stochastic-depth rates back as numbers (`[x.item() for x in torch.linspace(0, drop_path_rate, layers)]`,
    SGLang 0.5.23 internvl.py InternVisionEncoder), which a meta tensor does not hold; no parameter is built
    from it."""
    import torch
    from torch.overrides import TorchFunctionMode

    class HostLinspace(TorchFunctionMode):
        def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            kwargs = dict(kwargs or {})
            if func is torch.linspace and kwargs.get("device") is None:
                kwargs["device"] = "cpu"
            return func(*args, **kwargs)

    return HostLinspace()


# host-values: the constructors that size a parameter by a number they read back from `torch.tensor(<number>)`
HOST_SCALAR_CLASSES = ("NemoConvSubsampling",)


def host_scalars() -> Any:
    """host-values: `torch.tensor` of one Python number, called without a device by a constructor of
    HOST_SCALAR_CLASSES, is made on the CPU: SGLang 0.5.23 phi4mm_utils.py NemoConvSubsampling sizes its `out`
    Linear by `int(calc_length(torch.tensor(feat_in, dtype=float)))`, which a meta tensor cannot answer. Other
    callers keep meta (AbsolutePositionalEncoding moves its table to its `torch.tensor(0.0)`'s device)."""
    import sys

    import torch
    from torch.overrides import TorchFunctionMode

    class HostScalars(TorchFunctionMode):
        def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            kwargs = dict(kwargs or {})
            number = bool(args) and isinstance(args[0], (int, float)) and not isinstance(args[0], bool)
            if func is torch.tensor and number and kwargs.get("device") is None:
                caller = type(sys._getframe(1).f_locals.get("self")).__name__
                kwargs["device"] = "cpu" if caller in HOST_SCALAR_CLASSES else kwargs.get("device")
            return func(*args, **kwargs)

    return HostScalars()


HARNESS_ERRORS = (AttributeError, ImportError, NameError, TypeError)


class EngineRefusal(Exception):
    """A refusal the engine makes in lines the harness quotes (where it does not run the code that holds them)."""


# The config needs the checkpoint's own Python code, which a config folder does not hold: a custom
# code repository, or a model_type that transformers and the engine's config registry do not know
# (XiaomiMiMo/MiMo-7B-Base's `mimo`, whose configuration class ships with the checkpoint).
CHECKPOINT_CODE_MISSING = ("trust_remote_code", "custom code", "Transformers does not recognize this architecture")
UNKNOWN_MODEL_TYPE = "Transformers does not recognize this architecture"


def _names_own_code(config_dir: str | None) -> bool:
    """Whether the folder's config.json names configuration code of the checkpoint's own (`auto_map`); True
    where the folder is not known (the harness cannot tell)."""
    if config_dir is None:
        return True
    try:
        with open(os.path.join(config_dir, "config.json")) as fh:
            return "auto_map" in json.load(fh)
    except (OSError, ValueError):
        return True


# … or the checkpoint's tokenizer, which the harness skips (`--skip-tokenizer-init`): a multimodal processor that
# reads token ids from it (vLLM 0.33.0 InternVLChatModel's) stops there, where a real launch has one.
TOKENIZER_MISSING = ("`skip_tokenizer_init=True`",)

# … or a file of the checkpoint's own beyond config.json, which a config folder lacks and a hub checkout holds:
# SGLang 0.5.23 mimo_audio.py AudioEncoderMixin.build_audio_encoder opens <model>/audio_tokenizer/config.json and
# loads its weights (XiaomiMiMo/MiMo-V2.5, whose audio_config makes MiMoV2ForCausalLM build the audio encoder).
CHECKPOINT_FILE_MISSING = "audio_tokenizer"


# transformers 5.x's `@strict` config classes (huggingface_hub dataclasses) reject a config.json field of the wrong
# type as the config loads (databricks/dbrx-instruct's ffn_config.moe_normalize_expert_weights: 1, typed float): a
# served engine on that transformers meets it too, so it is the engine's refusal, not the harness's.
STRICT_CONFIG_ERROR = "StrictDataclassFieldValidationError"


def _strict_config_refusal(exc: BaseException, frames: list[traceback.FrameSummary]) -> bool:
    """A strict config class of transformers' own refused a field of the config.json (not a stand-in's class)."""
    in_transformers_config = any("/site-packages/transformers/" in f.filename for f in frames)
    return type(exc).__name__ == STRICT_CONFIG_ERROR and in_transformers_config


def refusal_or_harness_error(exc: BaseException, package: str, config_dir: str | None = None) -> str:
    """ "refused" when the engine's own code raised it (a check it makes on a real GPU too);
    "harness-error" when a stand-in or this runner is the likely cause (not a result). A model type the
    engine does not know in a config that names no code of its own (no `auto_map`: sgl-project's
    DeepSeek-V4-*-FP8, model_type `deepseek_ref`) is refused: a hub checkout holds no code either."""
    if isinstance(exc, EngineRefusal):
        return "refused"
    frames = traceback.extract_tb(exc.__traceback__)
    innermost = frames[-1].filename if frames else ""
    in_engine = f"/site-packages/{package}/" in innermost or "/pydantic" in innermost
    if _strict_config_refusal(exc, list(frames)):
        return "refused"
    if in_engine and UNKNOWN_MODEL_TYPE in str(exc) and not _names_own_code(config_dir):
        return "refused"
    if any(words in str(exc) for words in CHECKPOINT_CODE_MISSING + TOKENIZER_MISSING):
        return "harness-error"  # the config folder holds no modeling code (a hub checkout would)
    if isinstance(exc, FileNotFoundError) and CHECKPOINT_FILE_MISSING in str(exc.filename or ""):
        return "harness-error"  # a checkpoint file beyond config.json (a hub checkout holds it)
    return "refused" if in_engine and not isinstance(exc, HARNESS_ERRORS) else "harness-error"


# What each shell's fields the engine read during this case (a case runs in its own process).
SHELL_READS: dict[str, set[str]] = {}


SHELL_METHODS: dict[str, set[str]] = {}


def shell(cls: type, label: str, methods: dict[str, Any] | None = None, **fields: Any) -> Any:
    """An object of the engine's own class `cls` built without its __init__ (which needs a GPU),
    holding only `fields` (and `methods`, each replacing one of the class's own methods that needs a
    GPU): every other method and property is the class's own; a field the engine reads that the
    shell does not hold raises AttributeError (a harness error, never a default); the fields the
    engine does read are recorded under `label` for `shell_check`."""
    reads = SHELL_READS.setdefault(label, set())
    SHELL_METHODS.setdefault(label, set()).update(methods or {})
    held = frozenset(fields)

    def __getattribute__(self: Any, name: str) -> Any:
        if name in held:
            reads.add(name)
        return cls.__getattribute__(self, name)

    def __getattr__(self: Any, name: str) -> Any:
        raise AttributeError(f"stand-in {label} ({cls.__name__} without __init__) does not hold {name!r}")

    shell_cls = type(cls.__name__, (cls,), {"__getattribute__": __getattribute__, "__getattr__": __getattr__})
    obj = object.__new__(shell_cls)
    for name, value in {**fields, **(methods or {})}.items():
        object.__setattr__(obj, name, value)
    return obj


@functools.cache
def fields_assigned(cls: type) -> frozenset[str]:
    """The `self.X` fields the engine's class (and its bases in the same package) assigns in its own code."""
    package = cls.__module__.split(".")[0]
    names: set[str] = set()
    for klass in cls.__mro__:
        if klass is object or getattr(klass, "__module__", "").split(".")[0] != package:
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError, SyntaxError):
            continue
        for node in ast.walk(tree):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = list(node.targets)
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
                targets = [node.target]
            for target in targets:
                for leaf in ast.walk(target):
                    if isinstance(leaf, ast.Attribute) and isinstance(leaf.value, ast.Name) and leaf.value.id == "self":
                        names.add(leaf.attr)
    return frozenset(names)


def shell_check(classes: dict[str, type]) -> dict[str, Any]:
    """For each shell of this case: the fields the engine read from it, and those among them its real
    class never assigns (a field the real object would not have: the check fails)."""
    out: dict[str, Any] = {}
    for label, reads in sorted(SHELL_READS.items()):
        cls = classes.get(label)
        real = fields_assigned(cls) if cls is not None else frozenset()
        not_methods = {m for m in SHELL_METHODS.get(label, ()) if not callable(getattr(cls, m, None))}
        out[label] = {"read": sorted(reads), "not_in_class": sorted((reads - real) | not_methods)}
    return out
