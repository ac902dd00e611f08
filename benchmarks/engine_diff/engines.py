"""What each engine needs to run its own sizing code here, and the sweep the issue asks for.

The engine goes in with `--no-deps`; then only the pure-Python packages its imports need, each at
the version the engine's own metadata asks for (so an older engine gets its older transformers).
torch and what is built against a CUDA torch (torchvision, sgl-kernel, …) are never installed:
torch is the CPU build 2.13.0 and every pip call is constrained to it. FlashInfer's Python package
goes in for vLLM with `--no-deps` (its import decides vLLM's backend on sm100; its CUDA parts are
never loaded); Triton goes in for SGLang (imported at module level everywhere; no torch pin); timm
goes in for both with `--no-deps` (DeepSeek-VL2's SigLIP; torchvision stays absent: `TIMM` says why).
"""

from __future__ import annotations

from dataclasses import dataclass, field

TORCH = "torch==2.13.0"

# Configs × TP × KV dtype × GPU generation; one budget per engine (the sweep).
TPS = (1, 2, 4, 8)
GPU_GENERATIONS = ("sm80", "sm90", "sm100")
# kvtop's --gpu for each generation (the stood-in platform reports the same device).
KVTOP_GPU = {"sm80": "A100-80GB", "sm90": "H100", "sm100": "B200"}
MAX_CONTEXT = 32_768  # capped at the model's max_position_embeddings (both sides get the same)


# timm: both engines' deepseek_vl2.py build DeepSeek-VL2's SigLIP with timm.create_model ("Please install timm"
# otherwise). Every timm release requires torchvision, whose only builds for torch 2.13.0 (0.28.0 on PyPI) are
# CUDA builds (_C.so links libtorch_cuda.so; `import torchvision` then fails at torchvision::nms), so timm goes in
# with --no-deps and torchvision stays absent: the runners' absent-packages placeholder answers timm's
# `torchvision.transforms` imports (timm.data only; create_model builds the ViT from torch.nn alone). Pinned here:
# 1.0.29 is the release this machine's index holds (SGLang 0.5.23's metadata asks ==1.0.25, not held; the
# so400m SigLIP timm builds is the same in both). Its other requirements (pyyaml, huggingface_hub, safetensors)
# are already in both venvs. A venv made before this line gets it on its next use (venvs.ensure_venv). Session 47.
TIMM = "timm==1.0.29"


@dataclass(frozen=True)
class EngineSpec:
    name: str
    package: str
    runner: str  # file in this folder, run with the venv's python
    kv_dtypes: tuple[str, ...]  # the engine's spelling: bf16/auto and fp8
    imports_need: tuple[str, ...]  # pure-Python distributions its import path needs
    versions: tuple[str, ...]
    # Installed with --no-deps at the engine's pin: Python packages whose own dependencies would
    # pull CUDA wheels, but whose presence decides what the engine picks (FlashInfer backends).
    no_deps: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    # kvtop's readings its judge sets beside this engine's specs: (key in kvtop's plan row, "module:function" called
    # with kvtop's ledger), so the harness's shared code never asks which engine it runs
    plan_readings: tuple[tuple[str, str], ...] = ()


VLLM = EngineSpec(
    name="vllm",
    package="vllm",
    runner="vllm_runner.py",
    kv_dtypes=("auto", "fp8"),
    imports_need=(
        "transformers",
        "requests",
        "psutil",
        "pyzmq",
        "cbor2",
        "aiohttp",
        "openai-harmony",
        "openai",
        "msgspec",
        "cloudpickle",
        "pillow",
        "pybase64",
        "cachetools",
        "uvloop",
        "py-cpuinfo",
        "prometheus_client",
        "xgrammar",
        "fastapi",
        "partial_json_parser",
        "llguidance",
        "einops",
        "compressed-tensors",
        "blake3",
        "gguf",
        "regex",
        "sentencepiece",
        "tiktoken",
        "pyyaml",
        "numba",
        "setproctitle",
        "watchfiles",
        "diskcache",
        "lark",
        "ijson",
        "python-json-logger",
        "nvidia-ml-py",
        "apache-tvm-ffi",
        "mistral_common",  # Mistral3 / Pixtral configs: vLLM's processor and config parser import it
        # Every GPU install has it (CUDA torch depends on it), and vLLM 0.33 picks its Model Runner V2
        # only where Triton is importable (VllmConfig.use_v2_model_runner): without it the runner differs
        "triton",
        # MiniMax's TP norm imports `from cuda import cudart` (fused all-reduce workspace), which
        # cuda-python 13 removed; a GPU node has it through FlashInfer's CUTLASS DSL
        "cuda-python<13",
    ),
    versions=("0.33.0", "0.13.0"),
    no_deps=("flashinfer-python", TIMM),
    plan_readings=(
        ("dsv4_specs", "benchmarks.engine_diff.kvtop_vllm_readings:dsv4_specs"),
        ("spec_window", "benchmarks.engine_diff.kvtop_vllm_readings:spec_window"),
    ),
)

SGLANG = EngineSpec(
    name="sglang",
    package="sglang",
    runner="sglang_runner.py",
    kv_dtypes=("auto", "fp8_e4m3"),
    imports_need=(
        "transformers",
        "requests",
        "psutil",
        "pyzmq",
        "aiohttp",
        "openai",
        "openai-harmony",
        "msgspec",
        "pillow",
        "pybase64",
        "uvloop",
        "prometheus-client",
        "fastapi",
        "partial_json_parser",
        "einops",
        "compressed-tensors",
        "orjson",
        "setproctitle",
        "huggingface_hub",
        "packaging",
        "pydantic",
        "numpy",
        "tqdm",
        "uvicorn",
        "python-multipart",
        "interegular",
        "sentencepiece",
        "tiktoken",
        "xgrammar",
        "llguidance",
        "blobfile",
        "gguf",
        "scipy",
        "nvidia-ml-py",
        "IPython",
        "dill",
        "triton",
        # CuTe DSL layers import `cuda.bindings.driver` when the model is built; a GPU node has it
        "cuda-python",
        # a bitsandbytes checkpoint's config needs it ("Please install bitsandbytes>=0.46.1", bitsandbytes.py);
        # only the test extra names it, unpinned: pinned here (its manylinux wheel carries the CPU backend)
        "bitsandbytes==0.49.2",
    ),
    versions=("0.5.23", "0.5.6.post2"),
    no_deps=(TIMM,),
)

ENGINES = {spec.name: spec for spec in (VLLM, SGLANG)}

# Never installed: CUDA builds, or packages that would pull a CUDA torch.
NEVER_INSTALL = {
    "torch",
    "torchvision",
    "torchaudio",
    "torchcodec",
    "flashinfer-cubin",
    "flashinfer_cubin",
    "sgl-kernel",
    "sgl_kernel",
    "xformers",
    "torchao",
    "ray",
    "nvidia-cutlass-dsl",
    "torch_memory_saver",
    "torch-memory-saver",
    "decord2",
    "mooncake",
}
