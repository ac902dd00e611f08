"""The memory CUDA reports for each GPU model, which is what the engines size from.

nvidia-smi's total (kvtop's GPU table, `kvtop/domain/gpus.py`) is not what `cudaMemGetInfo` says: an
H100 80GB shows 81,559 MiB to nvidia-smi and about 81,100 MiB to CUDA, the driver keeping the rest.
vLLM multiplies CUDA's total by `--gpu-memory-utilization`; SGLang, TensorRT-LLM and LMDeploy start
from CUDA's free memory. The table holds the median total the corpus's logs printed per GPU model
(docs/calibration.md); a GPU it lacks takes nvidia-smi's total less the median difference.
"""

from __future__ import annotations

from collections.abc import Mapping

from kvtop.domain.calibration.terms import Term, TermEstimate
from kvtop.domain.gpus import gpu_key

MIB = 1 << 20

# GPU → (median CUDA total in MiB over the corpus's logs, records): written by benchmarks/calibration/run.py
CUDA_TOTAL_MIB: dict[str, tuple[int, int]] = {}
NVSMI_MINUS_CUDA_MIB = 440  # a GPU not in the table: nvidia-smi's total less this (the table's median difference)
CUDA_TOTAL_ERROR_BYTES = 64 * MIB  # 90th percentile of the held-out |error| over the corpus's logged totals


def cuda_total_estimate(
    gpu_name: str | None,
    gpu_total_bytes: int,
    table: Mapping[str, tuple[int, int]] = CUDA_TOTAL_MIB,
    error_bytes: int = CUDA_TOTAL_ERROR_BYTES,
    offset_mib: int = NVSMI_MINUS_CUDA_MIB,
) -> TermEstimate:
    """CUDA's total for this GPU model: the corpus's median, else nvidia-smi's total less the usual gap."""
    found = table.get(gpu_key(gpu_name)) if gpu_name else None
    if found is not None:
        mib, records = found
        return TermEstimate(
            term=Term.CUDA_TOTAL, label="GPU memory as CUDA reports it", bytes=mib * MIB, error_bytes=error_bytes,
            source="calibrated", basis=f"median of {records} logged totals of the {gpu_key(gpu_name)}",
            more_is_more_kv=True,
        )  # fmt: skip
    return TermEstimate(
        term=Term.CUDA_TOTAL, label="GPU memory as CUDA reports it", bytes=gpu_total_bytes - offset_mib * MIB,
        error_bytes=2 * error_bytes, source="calibrated",
        basis=f"nvidia-smi's total less {offset_mib} MiB (the corpus's median gap; this GPU has no logged total)",
        more_is_more_kv=True,
    )  # fmt: skip
