"""vLLM's stand-ins: what must be in place before vLLM is imported on a machine without a GPU, and the
parallel groups of rank 0. Standard library and torch only; imported by vllm_runner.py inside the engine's venv.

Stand-ins (each minimal; none computes a number the comparison reads):
  compiled-extensions    vLLM's compiled modules (`vllm/*.so`: _C, _moe_C, flash-attn, FlashMLA, …)
                         load as empty modules (and `torch.ops.load_library` of them does
                         nothing): they need libcuda.so.1.
  absent-packages        torchvision (its CUDA build cannot sit beside CPU torch 2.13; transformers'
                         image processors import it at module level), flashinfer.comm (its
                         import opens libcudart; all-reduce fusion only), cuda-python (fused
                         all-reduce workspaces), torchaudio (its one constructor call, a mel filter bank
                         buffer: standins.stand_in_mel_banks), tilelang (DeepSeek-V4's mHC kernels) and DeepSeek-V4's
                         CuteDSL compressor kernels (their JIT warmup registered at build) resolve to
                         placeholders; every placeholder a case
                         reads is recorded in its row (`placeholder_reads`).
  torch-ops              the `torch.ops` namespaces of those libraries answer any op with a callable
                         returning False (import-time capability queries; layer constructors only
                         look ops up); fake-tensor registrations for them are skipped.
  cuda-platform          a CUDA platform reporting the case's compute capability (sm80 A100, sm90
                         H100, sm100 B200), its name and memory, without NVML.
  model-inspection       the model registry inspects a model class in-process (vLLM uses a
                         subprocess only to keep CUDA uninitialised; the subprocess lacks these stand-ins).
  parallel-groups        vLLM's own GroupCoordinator class without its __init__ (which opens NCCL):
                         TP rank 0 of the case's pipeline stage, its fields set as __init__ sets them.
  meta-device            the model is built under `torch.device("meta")`; the `cuda` device and
                         CUDA streams/events created in constructors go to meta / a placeholder.
  worker-device          Worker.init_device and load_model are not run (NCCL, a memory snapshot,
                         weights): the stage's model is built on meta as load_model builds it.
  model-runner           the worker's model runner is vLLM's own runner class (V1 or V2, as the
                         config picks) without its __init__ (pinned and UVA buffers need a GPU),
                         holding the fields its get_kv_cache_spec reads; every field the engine
                         reads from it is checked to be one the class assigns (`shell_check`).
  profile-run            the runner's profile_run (a forward pass) does nothing: with
                         kv_cache_memory_bytes set, vLLM returns that budget after it.
  executor               vLLM's own Executor class whose collective_rpc calls each worker's method
                         (TP ranks of a stage answer as its TP rank 0: their specs are the same);
                         initialize_from_config keeps the configs (allocation is not run).
  checkpoint-head        a config whose checkpoint holds an lm_head of its own (the folder's
                         `checkpoint_lm_head` file, written by the registry sweep from
                         tests/data/engine_diff/registry/checkpoint_heads.json): vLLM's own
                         ModelConfig.maybe_untie_word_embeddings runs as a launch that loads the
                         checkpoint runs it (VllmConfig.__post_init__ skips it under `--load-format
                         dummy`), its `checkpoint_has_lm_head` answering True, as the checkpoint's
                         safetensors header would; releases without the method are left as they are.
  checkpoint-config      a model type whose configuration class ships with the checkpoint (its own
                         Python code, run by `--trust-remote-code`) and that neither transformers nor
                         vLLM's config registry knows: a stand-in class taking the config.json fields as
                         the published class does (checkpoint_configs.py; checkpoint_config_classes.py
                         registers them before the cases fork).
  host-values            the engine's own functions whose small tensors a constructor reads back as
                         numbers (ALiBi slopes: `.tolist()`) run under the CPU device, as they hold values
                         on `cuda` (vllm_standins.HOST_VALUE_FUNCTIONS), as do constructors that read their
                         own scalars back (XIELU, Gemma-3n's GeluAndMulSparse: HOST_VALUE_CLASSES) and methods
                         that select by a boolean mask (FoPE's frequencies: HOST_VALUE_METHODS).
  gemm-rs-ar             off sm100, VLLM_KIMI_K3_GEMM_AR is off: the engine's own check declines there, after
                         importing its CuteDSL kernel module (absent here; vllm_standins.KIMI_K3_GEMM_AR).
  tokenizer-vocab        under `--skip-tokenizer-init` a multimodal processor's info that asks the tokenizer
                         whether an optional special token is in its vocabulary (InternVL's `<video>`) gets an
                         empty vocabulary (vllm_input_standins._VocabFreeTokenizer; each read recorded).
  processor-free-info    a processing info whose __init__ loads the checkpoint's image processor
                         (preprocessor_config.json, absent from a config folder) is built as BaseProcessingInfo's
                         when that load fails (Kimi-K3, Ovis2.5, Kimi-K2.5/K2.6: ModelConfig reads only their
                         supported_mm_limits, a constant; vllm_input_standins.PROCESSOR_FREE_INFOS; each build recorded).
  token-id-tokenizer     under `--skip-tokenizer-init` a model whose __init__ reads a media token's id from the
                         tokenizer (DeepSeek-OCR's vocab["<image>"], Isaac's encode(vision_token); used only at
                         run time) gets a vocabulary answering id 0 and an encode answering [0]
                         (vllm_input_standins.TOKEN_ID_TOKENIZER_MODULES; each read recorded).
  flashinfer-cubins      on sm100, FlashInfer's TRTLLM attention cubins count as held (vllm/utils/flashinfer.py
                         has_nvidia_artifactory: the flashinfer-cubin package, else NVIDIA's artifactory reached at
                         run time; no network here): a Blackwell node that serves FlashInfer's attention sinks
                         (FlashInferBackend.supports_sink) holds them, and Flint builds only on that backend.
  remote-vision-model    a class whose vision model is the checkpoint's own code (Llama-Nemotron-Nano-VL's
                         C-RADIO, AutoModel.from_config with trust_remote_code) builds an empty module in its
                         place (vllm_input_standins.REMOTE_VISION_MODELS; each build recorded): kvtop names
                         that vision model not modelled, and the row compares the language
                         model and mlp1 (registry_judge.PART_NOT_MODELLED).
  load-rewires           a class whose own load_weights swaps a module for another where the checkpoint
                         lacks its tensor (LOAD_REWIRES: Phi3V's embed_tokens) runs it with no tensors, as a
                         launch reading such a checkpoint does (`--load-format dummy` never calls it).
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.abc
import importlib.machinery
import os
import sys
import types
from typing import Any

from standins import PLACEHOLDER_READS, PlaceholderModule, stand_in_mel_banks
from vllm_input_standins import install_input_stand_ins

GPUS = {
    "sm80": ((8, 0), "NVIDIA A100-SXM4-80GB", 85_899_345_920),
    "sm90": ((9, 0), "NVIDIA H100 80GB HBM3", 85_520_809_984),
    "sm100": ((10, 0), "NVIDIA B200", 192_265_846_784),
}

# torch.ops namespaces of vLLM's compiled libraries (absent here).
COMPILED_OP_NAMESPACES = (
    "_C",
    "_moe_C",
    "_C_cache_ops",
    "_C_custom_ar",
    "_qutlass_C",
    "_flashmla_C",
    "_flashmla_extension_C",
    "_vllm_fa2_C",
    "_vllm_fa3_C",
    "_C_stable_libtorch",
    "_deepselect_C",
    "_flashkda_C",  # Kimi-K3 KDA prefill (kimi_k3/nvidia/kda.py get_workspace_size: a buffer, no parameter)
    "deep_gemm",
)


# gemm-rs-ar: Kimi-K3's fused GEMM + all-reduce (VLLM_KIMI_K3_GEMM_AR, default on) imports its CuteDSL kernel
# module (`import cutlass`, absent here) and then asks it whether it may run: 0.33.0
# kernels/linear/cute_dsl/gemm_rs_ar.py maybe_init_gemm_rs_ar declines on any device that is not SM100-family
# ("the device is not SM100-family"), so off sm100 the flag's off is the engine's own answer; no parameter
# depends on it (kimi_k3/nvidia/model.py KimiMLP binds the kernel, holding none).
KIMI_K3_GEMM_AR = "VLLM_KIMI_K3_GEMM_AR"


class _EmptyModule(importlib.abc.Loader):
    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return types.ModuleType(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        return None


class _CompiledExtensions(importlib.abc.MetaPathFinder):
    """compiled-extensions: any `vllm.*` module that is a shared object loads empty."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if not name.startswith("vllm."):
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and spec.origin and spec.origin.endswith(".so"):
            return importlib.machinery.ModuleSpec(name, _EmptyModule())
        return None


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

    def __getitem__(self, key: Any) -> _Anything:  # type annotations: cutlass.Constexpr[int]
        return _Anything()

    def __mro_entries__(self, bases: tuple[Any, ...]) -> tuple[type, ...]:  # a class derived from one
        return (object,)

    def __or__(self, other: Any) -> _Anything:  # type annotations: cutlass.Int32 | None
        return _Anything()

    __ror__ = __or__


class _AbsentPackages(importlib.abc.MetaPathFinder):
    """absent-packages: torchvision (a CUDA build that cannot sit beside CPU torch 2.13; transformers'
    image processors import it at module level), flashinfer.comm (opens libcudart) and cuda-python
    (`from cuda import cudart` in layer constructors that set up fused all-reduce workspaces)
    resolve to placeholder modules. transformers has
    already decided torchvision is absent, as it is, so it never takes a torchvision path."""

    NAMES = (
        "torchvision",
        "flashinfer.comm",
        "torchaudio",  # NEVER_INSTALL; its constructor call: standins.stand_in_mel_banks
        "tilelang",  # DeepSeek-V4's mHC kernels (vllm.tilelang_utils raises without it): kernels, no parameters
        # DeepSeek-V4's compressor registers its CuteDSL kernels' JIT warmup at build (compressor.py): kernels only
        "vllm.models.deepseek_v4.nvidia.ops.sparse_attn_compress_cutedsl",
        # Flint's CuteDSL decode attention (TP 1 on sm100: FlintAttention.__init__ imports it; CuteDSL, the
        # `cutlass` package, is absent here): a kernel, no parameters
        "vllm.models.flint.ops.decode_attention",
    )

    def find_spec(self, name: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if any(name == n or name.startswith(n + ".") for n in self.NAMES):
            return importlib.machinery.ModuleSpec(name, PlaceholderModule(_Anything), is_package=True)
        return None


class _AbsentOp:
    """torch-ops: an op of a compiled library that is not loaded; calling it answers False."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> _AbsentOp:
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _AbsentOp(f"{self._name}.{attr}")

    def __call__(self, *args: Any, **kwargs: Any) -> bool:
        PLACEHOLDER_READS.add(f"torch.ops.{self._name}()")
        return False


class _Placeholder:
    """meta-device: a CUDA stream/event made in a constructor (never used)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        return lambda *a, **k: None


def install_import_stand_ins(gpu: str) -> Any:
    """Everything that must be in place before vLLM is imported; returns the platform."""
    import torch
    import torch.library

    sys.meta_path.insert(0, _CompiledExtensions())
    if gpu != "sm100":  # gemm-rs-ar: see KIMI_K3_GEMM_AR
        os.environ.setdefault(KIMI_K3_GEMM_AR, "0")
    for namespace in COMPILED_OP_NAMESPACES:
        setattr(torch.ops, namespace, _AbsentOp(namespace))
    register_fake = torch.library.register_fake

    def _register_fake(op: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(op, str) and op.split("::")[0] in COMPILED_OP_NAMESPACES:
            return args[0] if args else (lambda fn: fn)
        return register_fake(op, *args, **kwargs)

    torch.library.register_fake = _register_fake  # type: ignore[assignment]
    load_library = torch.ops.load_library

    def _load_library(path: Any) -> None:  # compiled-extensions: vLLM's own .so files, loaded by path
        if "/vllm/" in str(path) and str(path).endswith(".so"):
            return None
        return load_library(path)

    torch.ops.load_library = _load_library  # type: ignore[method-assign]
    import transformers.utils.import_utils  # noqa: F401  (decides torchvision is absent, as it is)

    sys.meta_path.insert(0, _AbsentPackages())
    stand_in_mel_banks()
    torch.cuda.Stream = _Placeholder  # type: ignore[misc,assignment]
    torch.cuda.Event = _Placeholder  # type: ignore[misc,assignment]

    import vllm.platforms as platforms
    import vllm.triton_utils as triton_utils

    if not triton_utils.HAS_TRITON:  # every GPU install has it; without it vLLM picks other runners
        raise SystemExit("Triton is not importable in this venv: install it (engines.py lists it)")

    from vllm.platforms.cuda import CudaPlatformBase
    from vllm.platforms.interface import DeviceCapability

    capability, device_name, total_bytes = GPUS[gpu]

    class StandInCudaPlatform(CudaPlatformBase):
        @classmethod
        def get_device_capability(cls, device_id: int = 0) -> DeviceCapability:
            return DeviceCapability(*capability)

        @classmethod
        def get_device_name(cls, device_id: int = 0) -> str:
            return device_name

        @classmethod
        def get_device_total_memory(cls, device_id: int = 0) -> int:
            return total_bytes

        @classmethod
        def is_fully_connected(cls, physical_device_ids: list[int]) -> bool:
            return True

        @classmethod
        def device_count(cls) -> int:
            return 8

        @classmethod
        def get_device_numa_node(cls, device_id: int = 0) -> int | None:
            return None

        @classmethod
        def get_all_device_numa_nodes(cls) -> list[int] | None:
            return None

    platform = StandInCudaPlatform()
    platforms.current_platform = platform
    torch.cuda.get_device_capability = lambda device=None: capability  # type: ignore[assignment]
    torch.cuda.get_device_name = lambda device=None: device_name  # type: ignore[assignment]
    torch.cuda.current_device = lambda: 0  # type: ignore[assignment]

    class Properties:
        name = device_name
        major, minor = capability
        total_memory = total_bytes
        multi_processor_count = {"sm80": 108, "sm90": 132, "sm100": 148}[gpu]
        is_integrated = False

    torch.cuda.get_device_properties = lambda device=None: Properties()  # type: ignore[assignment]
    torch.accelerator.empty_cache = lambda: None  # type: ignore[assignment]  (workspace resizes call it)
    # beam-allreduce: Beam's fused all-reduce + norm workspace (0.33.0 models/beam/nvidia/allreduce.py
    # BeamAllReduceWorkspace.create, TP 2/4/8 on a device with FlashInfer's multicast) holds communication buffers and
    # no parameter; with none (create's own answer off such a device) its layers reduce unfused: built without one
    with contextlib.suppress(ImportError, AttributeError):
        from vllm.models.beam.nvidia.allreduce import BeamAllReduceWorkspace

        BeamAllReduceWorkspace.create = classmethod(lambda cls, *args, **kwargs: None)  # type: ignore[method-assign,assignment]

    if gpu == "sm100":  # flashinfer-cubins: see the module docstring
        with contextlib.suppress(ImportError, AttributeError):
            import vllm.utils.flashinfer as flashinfer_utils

            flashinfer_utils.has_nvidia_artifactory = lambda: True

    with contextlib.suppress(
        ImportError, AttributeError
    ):  # older releases count GPUs here, not on the platform
        import vllm.utils.torch_utils as torch_utils

        if hasattr(torch_utils, "_cuda_device_count_stateless"):
            torch_utils._cuda_device_count_stateless = lambda *args: 8
    import vllm.model_executor.models.registry as registry

    registry._run_in_subprocess = lambda fn: fn()  # model-inspection
    install_input_stand_ins()
    return platform


class _ProcessGroup:
    """parallel-groups: a torch ProcessGroup's size and rank (never used to communicate)."""

    def __init__(self, size: int, rank: int) -> None:
        self._size, self._rank = size, rank

    def size(self) -> int:
        return self._size

    def rank(self) -> int:
        return self._rank


def _group(name: str, ranks: list[int], rank: int) -> Any:
    """parallel-groups: vLLM's own GroupCoordinator class holding `rank` of `ranks`, without its
    __init__ (which opens NCCL/Gloo groups): the fields that __init__ sets, set the way it sets
    them (ranks, world_size, rank_in_group = ranks.index(rank), …); its properties (first_rank,
    is_last_rank, next_rank, …) are the class's own. A field __init__ sets and this does not raises."""
    from vllm.distributed.parallel_state import GroupCoordinator

    group = GroupCoordinator.__new__(GroupCoordinator)
    group.unique_name = name
    group.rank = rank
    group.local_rank = rank % 8
    group.device_index = group.local_rank
    group.ranks = list(ranks)
    group.world_size = len(ranks)
    group.rank_in_group = ranks.index(rank)
    group.group_ranks = [list(ranks)]
    group.cpu_group = _ProcessGroup(len(ranks), group.rank_in_group)
    group.device_group = _ProcessGroup(len(ranks), group.rank_in_group)
    group.use_device_communicator = False
    group.device_communicator = None
    group.mq_broadcaster = None
    return group


def clear_parallel_groups() -> None:
    """parallel-groups: the engine core's own process, which never joins the workers' groups."""
    import vllm.distributed.parallel_state as ps

    for name in GROUP_NAMES:
        if hasattr(ps, name):
            setattr(ps, name, None)


GROUP_NAMES = ("_WORLD", "_TP", "_PP", "_DP", "_EP", "_DCP", "_PCP", "_EPLB", "_ETP")


def install_parallel_groups(tp: int, pp: int = 1, pp_rank: int = 0) -> None:
    """TP rank 0 of pipeline stage `pp_rank`: global rank pp_rank × tp (vLLM orders ranks TP-first).
    Expert groups span the stage's TP ranks (vLLM's EP = TP × DP within a stage; DP is 1 here)."""
    import vllm.distributed.parallel_state as ps

    rank = pp_rank * tp
    stage = list(range(rank, rank + tp))
    groups = {
        "_WORLD": list(range(tp * pp)),
        "_TP": stage,
        "_PP": [stage_rank * tp for stage_rank in range(pp)],
        "_DP": [rank],
        "_EP": stage,
        "_DCP": [rank],
        "_PCP": [rank],
        "_EPLB": stage,
        "_ETP": stage,
    }
    for name, ranks in groups.items():
        if hasattr(ps, name):
            setattr(ps, name, _group(name, ranks, rank))


# host-values: the engine's own functions whose small tensors a constructor reads back as numbers
# (`.tolist()`): under the meta device they hold no values ("Cannot copy out of meta tensor"); on a GPU
# they are on `cuda` and read back. Bloom's and Falcon's ALiBi slopes (bloom.py / falcon.py
# `_get_alibi_slopes`, 0.33.0), which BloomAttention / FalconAttention slice and pass to Attention.
HOST_VALUE_FUNCTIONS = ("_get_alibi_slopes",)
# ... and such functions of modules the build imports only as it runs (not yet in sys.modules when the stand-in
# starts): imported here first. Step1's ALiBi slopes (step1.py `_get_step_alibi_slopes`, 0.33.0: StepAttention's
# `.tolist()`).
HOST_VALUE_MODULE_FUNCTIONS = (("vllm.model_executor.models.step1", "_get_step_alibi_slopes"),)
# ... and the engine's own classes whose constructor reads its own small tensors back as numbers: XIELU
# (layers/activation.py, 0.33.0: `float(self.beta.detach().cpu().float().item())`, Apertus' MLP activation),
# its __init__ run under the CPU device as a whole (its two 1-element parameters keep their shapes and dtype,
# so their bytes are the ones a GPU build holds); GeluAndMulSparse (same file: `normal_dist.icdf(target_sparsity_
# tensor).item()`, Gemma-3n's sparse MLP activation of its first layers; no parameter); RelPositionalEncoding
# (models/conformer_encoder.py, 0.33.0: `torch.log(torch.tensor(10000.0)).item()`, FireRedASR2's Conformer; a
# non-persistent buffer, no parameter).
HOST_VALUE_CLASSES = (
    ("vllm.model_executor.layers.activation", "XIELU"),
    ("vllm.model_executor.layers.activation", "GeluAndMulSparse"),
    ("vllm.model_executor.models.conformer_encoder", "RelPositionalEncoding"),
)
# ... and the engine's own methods that pick values by a boolean mask of their own small tensors, whose result's
# shape depends on those values (`torch.nonzero` has no meta kernel): run under the CPU device, the result moved to
# the build's device (its shape, the engine's). FourierRotaryEmbedding._compute_inv_freq (layers/rotary_embedding/
# fope.py, 0.33.0: keeps the frequencies above 2π / max positions, or the first num_inv_freq), whose count sizes
# FoPE's cos_coef / sin_coef parameters (Intern-S1-Pro).
HOST_VALUE_METHODS = (("vllm.model_executor.layers.rotary_embedding.fope", "FourierRotaryEmbedding", "_compute_inv_freq"),)


@contextlib.contextmanager
def host_values() -> Any:
    """host-values: each imported vLLM model module's functions above run under the CPU device."""
    import torch

    patched = []
    for module_name, _ in HOST_VALUE_MODULE_FUNCTIONS:
        with contextlib.suppress(ImportError):  # releases without the module
            importlib.import_module(module_name)
    named = {name for _, name in HOST_VALUE_MODULE_FUNCTIONS}
    for module in list(sys.modules.values()):
        if not getattr(module, "__name__", "").startswith("vllm.model_executor.models."):
            continue
        for name in (*HOST_VALUE_FUNCTIONS, *named):
            original = getattr(module, name, None)
            if not callable(original):
                continue

            def on_host(*args: Any, _original: Any = original, **kwargs: Any) -> Any:
                with torch.device("cpu"):
                    return _original(*args, **kwargs)

            setattr(module, name, on_host)
            patched.append((module, name, original))
    for module_name, class_name in HOST_VALUE_CLASSES:
        try:
            cls = getattr(importlib.import_module(module_name), class_name)
        except (ImportError, AttributeError):  # releases without the class
            continue
        init = cls.__init__

        def init_on_host(self: Any, *args: Any, _init: Any = init, **kwargs: Any) -> None:
            with torch.device("cpu"):
                _init(self, *args, **kwargs)

        cls.__init__ = init_on_host
        patched.append((cls, "__init__", init))
    for module_name, class_name, method_name in HOST_VALUE_METHODS:
        try:
            cls = getattr(importlib.import_module(module_name), class_name)
        except (ImportError, AttributeError):  # releases without the class
            continue
        method = getattr(cls, method_name)

        def method_on_host(self: Any, *args: Any, _method: Any = method, **kwargs: Any) -> Any:
            device = torch.get_default_device()
            with torch.device("cpu"):
                result = _method(self, *args, **kwargs)
            return result.to(device)

        setattr(cls, method_name, method_on_host)
        patched.append((cls, method_name, method))
    try:
        yield
    finally:
        for module, name, original in patched:
            setattr(module, name, original)
