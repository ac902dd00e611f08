"""SGLang's stand-ins (listed in sglang_runner.py's docstring): the device queries and absent
packages installed before SGLang is imported, the pipeline stage's process group, the parallel
groups, and the model built on the meta device. Standard library and torch only; imported by the
SGLang runners inside the engine's venv."""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from standins import (
    FREE_BYTES,
    PLACEHOLDER_READS,
    PlaceholderModule,
    cuda_to_meta,
    host_linspace,
    host_scalars,
    stand_in_mel_banks,
    stand_in_mistral_mel_filters,
)

GPUS = {
    "sm80": ((8, 0), "NVIDIA A100-SXM4-80GB", 85_899_345_920, 108),
    "sm90": ((9, 0), "NVIDIA H100 80GB HBM3", 85_520_809_984, 132),
    "sm100": ((10, 0), "NVIDIA B200", 192_265_846_784, 148),
}
ABSENT_PACKAGES = (
    "torchvision",
    "torchao",
    "torchaudio",
    "quack",
    "cutlass",
    "deep_gemm",
    "sgl_kernel",
    "flashinfer",
)
# absent-packages: modules of those packages whose import SGLang guards with its own fallback: they fail
# to import, as they do where the package is absent, so SGLang takes its fallback. `sgl_kernel.scalar_type`:
# quantization/utils.py get_scalar_types() falls back to MockScalarTypes (names that compare equal); a
# placeholder's types compare unequal, so Marlin's check refused every GPTQ checkpoint (gptq -> gptq_marlin).
ENGINE_FALLBACKS = ("sgl_kernel.scalar_type",)


class _Anything:
    """absent-packages: any attribute or call of a package that is not installed here."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __call__(self, *args: Any, **kwargs: Any) -> _Anything:
        return _Anything()

    def __getattr__(self, attr: str) -> _Anything:
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Anything()

    def __iter__(self) -> Any:
        return iter(())

    def __bool__(self) -> bool:
        return False

    def __mro_entries__(self, bases: tuple[Any, ...]) -> tuple[type, ...]:
        return (_Anything,)  # `class X(absent.Base)` builds a class of placeholders


_ABSENT_CHECKED: dict[str, bool] = {}


class _AbsentPackages(importlib.abc.MetaPathFinder):
    def find_spec(self, name: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        top = name.split(".")[0]
        if top not in ABSENT_PACKAGES or name in ENGINE_FALLBACKS:
            return None
        if top not in _ABSENT_CHECKED:  # an installed package is used as it is
            _ABSENT_CHECKED[top] = importlib.machinery.PathFinder.find_spec(top) is None
        if _ABSENT_CHECKED[top]:
            return importlib.machinery.ModuleSpec(name, PlaceholderModule(_Anything), is_package=True)
        return None


def install_stand_ins(gpu: str) -> None:
    """device-queries and absent-packages: in place before SGLang is imported."""
    import torch
    import torch.distributed

    capability, name, total, sms = GPUS[gpu]

    class Properties:
        major, minor = capability
        total_memory = total
        multi_processor_count = sms
        is_integrated = False
        uuid = "GPU-stand-in"
        L2_cache_size = 50 << 20

    Properties.name = name  # type: ignore[attr-defined]
    torch.cuda.is_available = lambda: True  # type: ignore[assignment]
    torch.version.cuda = "12.9"  # type: ignore[misc]
    torch.cuda.device_count = lambda: 8  # type: ignore[assignment]
    torch.cuda.current_device = lambda: 0  # type: ignore[assignment]
    torch.cuda.get_device_capability = lambda device=None: capability  # type: ignore[assignment]
    torch.cuda.get_device_name = lambda device=None: name  # type: ignore[assignment]
    torch.cuda.get_device_properties = lambda device=None: Properties()  # type: ignore[assignment]
    torch.cuda.mem_get_info = lambda device=None: (FREE_BYTES["now"], total)  # type: ignore[assignment]
    torch.cuda.empty_cache = lambda: None  # type: ignore[assignment]
    torch.cuda.set_device = lambda device: None  # type: ignore[assignment]
    torch.cuda.Stream = _Anything  # type: ignore[misc,assignment]
    torch.cuda.Event = _Anything  # type: ignore[misc,assignment]
    register_fake = torch.library.register_fake

    def _register_fake(op: Any, *args: Any, **kwargs: Any) -> Any:  # absent-packages: their ops
        if isinstance(op, str) and op.split("::")[0] in ABSENT_PACKAGES:
            return args[0] if args else (lambda fn: fn)
        return register_fake(op, *args, **kwargs)

    torch.library.register_fake = _register_fake  # type: ignore[assignment]
    import transformers.utils.import_utils  # noqa: F401  (decides torchvision is absent, as it is)

    sys.meta_path.insert(0, _AbsentPackages())
    stand_in_mel_banks()
    stand_in_mistral_mel_filters()
    if importlib.machinery.PathFinder.find_spec("deep_gemm") is None:  # device-queries: DeepGEMM's SM count
        import deep_gemm  # the placeholder module

        deep_gemm.get_num_sms = lambda: sms  # is the device's (the DSA indexer sizes its schedule with it)
    if shutil.which("nvidia-smi") is None:  # device-queries: an nvidia-smi that reports nothing, so
        folder = tempfile.mkdtemp(prefix="engine-diff-")  # SGLang takes its own mem_get_info fallback
        with open(os.path.join(folder, "nvidia-smi"), "w") as fh:
            fh.write("#!/bin/sh\nexit 0\n")
        os.chmod(os.path.join(folder, "nvidia-smi"), 0o755)
        os.environ["PATH"] = folder + os.pathsep + os.environ.get("PATH", "")


def server_argv(case: dict[str, Any]) -> list[str]:
    """The command line a person would type (the case's flags last, as typed)."""
    return [
        "--model-path", case["dir"], "--tp-size", str(case["tp"]), "--kv-cache-dtype", case["kv_dtype"],
        "--mem-fraction-static", str(case["mem_fraction_static"]), "--context-length", str(case["max_model_len"]),
        *case.get("flags", ()),
    ]  # fmt: skip


def join_stage_group(store: str, pp_rank: int, pp: int) -> dict[int, Any]:
    """stage-processes: this process is the TP rank 0 of pipeline stage `pp_rank`; the stages'
    processes form a real torch.distributed gloo group (its WORLD), so the engine's own collectives
    (the MIN of the token count over the ranks, barriers) really run between the stages. TP ranks of
    one stage hold the same values, so a collective over them is one over their rank 0. Returns one
    single-member group per stage (the TP-like groups' process group)."""
    import torch.distributed as dist

    if dist.is_initialized():  # only where cases run in one process (the order check's control)
        dist.destroy_process_group()
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=pp_rank, world_size=pp)
    return {rank: dist.new_group([rank], backend="gloo") for rank in range(pp)}


def group_shell(group_class: type, name: str, ranks: list[int], rank: int, process_group: Any) -> Any:
    """parallel-groups: SGLang's own GroupCoordinator class holding `rank` of `ranks`, without its
    __init__ (which builds NCCL communicators); its fields set as __init__ sets them, its methods
    and properties the class's own; its process group a real gloo one (see join_stage_group)."""
    group = group_class.__new__(group_class)
    group.unique_name = name
    group.rank = rank
    group.local_rank = rank % 8
    group.ranks = list(ranks)
    group.world_size = len(ranks)
    group.rank_in_group = ranks.index(rank)
    group.cpu_group = process_group
    group.device_group = process_group
    group.active_ranks = None
    group.active_ranks_cpu = None
    # no custom all-reduce communicator (its __init__ builds one only on GPUs, `self.ca_comm = None` before): what
    # the group holds at world size 1 or with custom all-reduce off. Its reader at build time, Kimi-K3's SP
    # collective gate (0.5.23 layers/communication/k3_sp_collective.py _init_state), needs SM100/SM103 first:
    # on the sweep's sm90 it falls back to NCCL whatever the communicator is.
    group.ca_comm = None
    return group


# Parameters SGLang's loader replaces with empty ones after loading, before `Load weight end` measures the weights
# (get_available_gpu_memory empties the cache first): the meta build has them, the loaded model does not. A Marlin
# WNA16 MoE's act-order indices where the checkpoint has no group act-order (0.5.23
# compressed_tensors_wNa16_moe.py CompressedTensorsWNA16MoE.process_weights_after_loading: [E, 0] int32 each; its
# Triton subclass, SGLang's default on SM100, keeps them).
EMPTIED_AFTER_LOADING = {
    "CompressedTensorsWNA16MoE": ("w13_weight_g_idx", "w2_weight_g_idx", "w13_g_idx_sort_indices",
                                  "w2_g_idx_sort_indices"),
}  # fmt: skip


def emptied_after_loading(model: Any) -> set[str]:
    """The names of the parameters the loader empties (EMPTIED_AFTER_LOADING) in this model."""
    names: set[str] = set()
    for prefix, module in model.named_modules():
        scheme = getattr(module, "scheme", None)
        emptied = EMPTIED_AFTER_LOADING.get(type(scheme).__name__, ())
        if emptied and getattr(scheme, "actorder", None) != "group":
            names.update(f"{prefix}.{name}" if prefix else name for name in emptied)
    return names


def param_bytes(model: Any) -> dict[str, int]:
    """Parameter bytes of a stage's model as loaded (on meta: shape × element size), by top-level child, less the
    parameters the loader empties after loading (EMPTIED_AFTER_LOADING); a child that nests the language model
    beside the towers (the Transformers backend's `model`: model.language_model, model.vision_tower,
    model.multi_modal_projector, model.image_newline) by its own children, so the judge tells the towers from the
    language model (architectures._language_bytes); SGLang 0.5.23 qwen3_omni_moe.py's `thinker` (the language model
    `thinker.model` / `thinker.lm_head` beside `thinker.audio_tower` and `thinker.visual`) likewise."""
    names = [name for name, _ in model.named_parameters(remove_duplicate=True)]
    nesting = {name.split(".", 1)[0] for name in names if name.split(".")[1:2] == ["language_model"]}
    nesting |= {"thinker"} & {name.split(".", 1)[0] for name in names}
    out: dict[str, int] = {}
    emptied = emptied_after_loading(model)
    for name, param in model.named_parameters(remove_duplicate=True):
        if name in emptied:
            continue
        parts = name.split(".")
        child = ".".join(parts[:2]) if parts[0] in nesting and len(parts) > 1 else parts[0]
        out[child] = out.get(child, 0) + param.numel() * param.element_size()
    return out


def build_model(model_config: Any) -> Any:
    """meta-device: the model SGLang's loader builds (its class from SGLang's registry, the
    quantization config its loader hands the constructor), under `torch.device("meta")`: every
    layer exists, no weight is allocated or loaded (a dummy load's fill and post-processing of the
    weights are not run)."""
    import inspect

    import torch
    from sglang.srt.configs.load_config import LoadConfig
    from sglang.srt.model_loader import loader

    load_config = LoadConfig(load_format="dummy")
    arguments: list[Any] = [model_config, load_config]
    if "quant_config" in inspect.signature(loader._initialize_model).parameters:  # 0.5.2x: the caller's
        arguments.append(loader._get_quantization_config(model_config, load_config))
    with (
        loader.set_default_torch_dtype(model_config.dtype),
        torch.device("meta"),
        cuda_to_meta(),
        host_linspace(),
        host_scalars(),
    ):
        return loader._initialize_model(*arguments)


# named-tower: the published configs of the vision checkpoints a LLaVA-NeXT config names (`mm_vision_tower`), as
# tests/data/configs/towers_named/SOURCES.md records them (the Hub is not reachable here)
NAMED_TOWER_CONFIGS = Path(__file__).resolve().parents[2] / "tests" / "data" / "configs" / "towers_named"


def load_named_tower(model: Any, hf_config: Any) -> str | None:
    """named-tower: a class that loads its vision tower in `load_weights` with transformers'
    `CLIPVisionModel` / `SiglipVisionModel.from_pretrained(config.mm_vision_tower, torch_dtype=...)` (0.5.23
    models/llava.py LlavaBaseForCausalLM) has none after its constructor. The class's own load_weights runs here
    with no weights, each from_pretrained answering with its class built from the named checkpoint's published
    vision config on the meta device, in the dtype asked: the engine's code picks the class, the dtype and where it
    goes. A class loading it from a folder of its own checkpoint (`subfolder=`, SGLang 0.5.23 yivl.py) gets the
    class built from that folder's config.json, which the sweep places (registry_configs.SUBFOLDER_CONFIGS).
    Returns the id loaded, or None (no id, a tower already built, or an id without a published config here:
    then the build holds no tower, as before)."""
    import torch
    import transformers

    name = getattr(hf_config, "mm_vision_tower", None)
    if not isinstance(name, str) or getattr(model, "vision_tower", False) is not None:
        return None
    path = NAMED_TOWER_CONFIGS / (name.replace("/", "--") + ".json")
    # or a folder the checkpoint itself ships (Yi-VL's "./vit/…": yivl.py from_pretrained(model, subfolder=…)),
    # its config.json placed there by the sweep (registry_configs.SUBFOLDER_CONFIGS)
    shipped = (Path(str(getattr(hf_config, "_name_or_path", ""))) / name / "config.json").is_file()
    if not path.is_file() and not shipped:
        return None
    vision = json.loads(path.read_text())["vision_config"] if path.is_file() else {}

    def from_config(cls: Any, _name: str, *args: Any, torch_dtype: Any = None, dtype: Any = None,
                    subfolder: str = "", **kw: Any) -> Any:  # fmt: skip
        config = cls.config_class.from_pretrained(_name, subfolder=subfolder) if subfolder else cls.config_class(**vision)
        with torch.device("meta"):
            tower = cls(config)
        return tower.to(torch_dtype or dtype or torch.get_default_dtype())

    own = {cls: cls.__dict__.get("from_pretrained") for cls in (transformers.CLIPVisionModel, transformers.SiglipVisionModel)}
    for cls in own:
        cls.from_pretrained = classmethod(from_config)
    try:
        model.load_weights(iter(()))
    finally:
        for cls, method in own.items():
            if method is None:
                del cls.from_pretrained  # the inherited one again
            else:
                cls.from_pretrained = method
    return name


@contextlib.contextmanager
def placeholder_reads() -> Any:
    """The placeholders of absent packages one case reads (not the parent's imports')."""
    PLACEHOLDER_READS.clear()
    yield PLACEHOLDER_READS
