"""The GPU and the attention backend a vLLM log names, used where the operator named neither (docs/engines/vllm.md
§3.1, §13): a log of DeepSeek-V2.5 on A100-40GB sizes 16-token MLA blocks (TRITON_MLA), not the 64 kvtop's
stand-in Hopper would force.

The GPU: the CUDA device name in a kernel-config path vLLM prints (`…/fused_moe/configs/E=160,N=192,
device_name=NVIDIA_A100-SXM4-40GB.json`), and its total from kvtop's one GPU table as --gpu takes it, where no --gpu
or --gpu-memory was given and the log prints no device total. The block: a `Forcing/Setting kv cache block size to N for X backend`
line where printed; else the MLA backend a `Using X backend` line names, where that backend takes one size.
"""

from __future__ import annotations

from kvtop.domain.engine_log import EngineLog
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.eras import DEFAULT_BLOCK_ERAS, backend_selection
from kvtop.domain.engines.vllm.log_records import VllmRankLog
from kvtop.domain.errors import InputError
from kvtop.domain.explain_request import ExplainRequest
from kvtop.domain.explanation import Explanation, total_origin_said
from kvtop.domain.gpu_total_origin import GpuTotalOrigin
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.model import ModelSpec
from kvtop.domain.wording import gib

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


def log_gpu_total(log: EngineLog) -> tuple[str, int] | None:
    """(the CUDA device name the log prints, that model's total in kvtop's one GPU table, `gpus.gpu_total_bytes`:
    nvidia-smi's, as `--gpu` takes it), or None where the log names no GPU or one the table does not know."""
    named = log_gpu_name(log)
    if named is None:
        return None
    try:
        return named, gpu_total_bytes(named)
    except InputError:  # a model the table lacks, or a unified-memory device of no known total: the stand-in stays
        return None


def with_log_gpu(request: ExplainRequest, printed_total: bool) -> tuple[ExplainRequest, list[str]]:
    """The request as `--gpu NAME` makes it where neither --gpu nor --gpu-memory was given and the log prints no
    device total but names its GPU (`log_gpu_total`): the GPU table's total, assumed, said as the table's; and the
    note saying so (empty where nothing changed)."""
    named = None if printed_total or request.gpu_total_bytes is not None else log_gpu_total(request.log)
    if named is None:
        return request, []
    name, total = named
    update = {"gpu_name": name, "gpu_total_bytes": total, "gpu_total_origin": GpuTotalOrigin.TABLE}
    note = (f"GPU {name}: from the log (the device name in a kernel-config path), no --gpu given; its total "
            f"{gib(total)} is kvtop's GPU table's (nvidia-smi's, assumed), as --gpu takes it")  # fmt: skip
    return request.model_copy(update=update), [note]


def table_total_said(result: Explanation, from_log: bool) -> Explanation:
    """The GPU total's step said as the GPU table's where `with_log_gpu` took it (`from_log`): what explain says of
    --gpu's total, which the shared layer cannot, having been given no GPU."""
    if not from_log or result.ledger is None:
        return result
    ledger = result.ledger
    if ledger.measured.gpu_total_origin is None:
        measured = ledger.measured.model_copy(update={"gpu_total_origin": GpuTotalOrigin.TABLE})
        ledger = ledger.model_copy(update={"measured": measured})
    return result.model_copy(update={"ledger": total_origin_said(ledger, GpuTotalOrigin.TABLE)})


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
    block = table[backend]
    if table is _PREFERRED_BLOCKS:  # the backend keeps the default where it takes it (64 from v0.34.0, all but CUTLASS)
        block = max(block, DEFAULT_BLOCK_ERAS.at(version))
    return block, f"{block}: {backend}, the attention backend the log names"
