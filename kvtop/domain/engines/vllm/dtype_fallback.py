"""Which 16-bit dtype vLLM serves a bf16 checkpoint in under `--dtype auto`, by the GPU's compute capability.

A GPU below compute capability 8.0 (Pascal, Volta, Turing: P100, V100, T4) has no bf16 in vLLM's CUDA platform
(`CudaPlatform.supported_dtypes`: [float16, float32]), and from v0.9.0 `--dtype auto` on a bf16 config falls back to
the first supported dtype with the warning "Your device … doesn't support torch.bfloat16. Falling back to
torch.float16 for compatibility." The KV cache then holds float16: the same 2 bytes, another name. Before v0.9.0
`auto` kept bfloat16 and the worker refused it ("Bfloat16 is only supported on GPUs with compute capability of at
least 8.0", `_check_if_gpu_supports_dtype`, worker/worker.py:533-547 at v0.8.5.post1), a refusal kvtop does not model.
"""

from __future__ import annotations

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion

# the compute-capability major below which `auto` serves a bf16 checkpoint as fp16 (0: never)
AUTO_FP16_BELOW_MAJOR_ERAS: Eras[int] = Eras((
    Era("", 0, "before v0.9.0: `auto` keeps the config's bfloat16 (config.py _get_and_verify_dtype, read at "
               "v0.8.5.post1); the worker refuses it below sm80 (worker/worker.py:533-547)"),
    Era("0.9.0", 8, "first in v0.9.0: config.py:3084-3102 (`torch_dtype not in current_platform.supported_dtypes`: "
                    "fall back to supported_dtypes[0]), platforms/cuda.py:58-66 (sm60-sm7x: [float16, float32]); "
                    "v0.28.0 config/model.py:2212-2251 _resolve_auto_dtype, platforms/cuda.py:237-246; the same at "
                    "v0.33.0 config/model.py:2423-2458, platforms/cuda.py:257-266"),
))  # fmt: skip


def auto_fp16_below_major(version: ResolvedVersion) -> int:
    """The compute-capability major below which this release serves a bf16 checkpoint as fp16 under `auto`."""
    return AUTO_FP16_BELOW_MAJOR_ERAS.at(version)
