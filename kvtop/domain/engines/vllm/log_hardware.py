"""The GPU and the attention backend a vLLM log names, used where the operator named neither (docs/engines/vllm.md
§3.1, §13): a log of DeepSeek-V2.5 on A100-40GB sizes 16-token MLA blocks (TRITON_MLA), not the 64 kvtop's
stand-in Hopper would force.

The GPU: the CUDA device name in a kernel-config path vLLM prints (`…/fused_moe/configs/E=160,N=192,
device_name=NVIDIA_A100-SXM4-40GB.json`). The block: a `Forcing/Setting kv cache block size to N for X backend`
line where printed; else the MLA backend a `Using X backend` line names, where that backend takes one size.
"""

from __future__ import annotations

from kvtop.domain.engine_log import EngineLog
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.eras import backend_selection
from kvtop.domain.engines.vllm.log_records import VllmRankLog
from kvtop.domain.model import ModelSpec

# Tokens per block of an MLA backend, in both backend-selection eras (§3.1). TRITON_MLA keeps the configured
# block (16 by default): v0.8.3–v0.10 cuda.py `get_attn_backend_cls` takes it `if selected_backend ==
# TRITON_MLA or block_size != 64`, and v0.13.0 forces 64 / 128 only for FlashMLA / CUTLASS_MLA (a forced size
# prints its own `Forcing kv cache block size` line, read first). FLASHMLA takes only 64, CUTLASS_MLA only 128
# (`get_supported_kernel_block_sizes`; v0.13.0 `CudaPlatform.check_and_update_config` forces the same).
_MLA_BACKEND_BLOCKS = {"TRITON_MLA": 16, "FLASHMLA": 64, "CUTLASS_MLA": 128}
# From PR #35122 (read as v0.18.0+) each backend's preferred size: FLASH_ATTN_MLA 16, FLASHINFER_MLA 32.
_PREFERRED_BLOCKS = {**_MLA_BACKEND_BLOCKS, "FLASH_ATTN_MLA": 16, "FLASHINFER_MLA": 32}


def log_gpu_name(log: EngineLog) -> str | None:
    """The CUDA device name the log prints (`NVIDIA A100-SXM4-40GB`), or None."""
    return log.first(VllmRankLog, lambda r: r.device_names[0] if r.device_names else None)


def log_attention_backend(log: EngineLog) -> str | None:
    """The attention backend the log names, in vLLM's enum spelling (TRITON_MLA, FLASHMLA…), or None."""
    return log.first(VllmRankLog, lambda r: r.attention_backends[-1] if r.attention_backends else None)


def log_block(log: EngineLog, model: ModelSpec, version: ResolvedVersion) -> tuple[int, str] | None:
    """(tokens per block, why) as the log shows them for an MLA model, or None (the GPU rule stands)."""
    if model.mla is None:
        return None
    forced = log.first(VllmRankLog, lambda r: r.forced_blocks[-1] if r.forced_blocks else None)
    if forced is not None:
        return forced, f"{forced}: the log's `kv cache block size to {forced}` line"
    backend = log_attention_backend(log)
    table = _PREFERRED_BLOCKS if backend_selection(version) == "backend" else _MLA_BACKEND_BLOCKS
    if backend is None or backend not in table:
        return None
    return table[backend], f"{table[backend]}: {backend}, the attention backend the log names"
