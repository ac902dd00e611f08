"""Memory of common GPUs as the driver reports it (MiB), for plans made away from the GPU.

Figures are `nvidia-smi` totals (nvidia-smi samples in tests/data/samples/nvidia_smi/), not the marketing sizes:
an "80 GB" H100 reports 81,559 MiB = 79.65 GiB.
"""

from __future__ import annotations

from kvtop.domain.errors import InputError

MIB = 1 << 20

GPU_TOTAL_MIB: dict[str, int] = {
    "H100": 81559, "H100-SXM": 81559, "H100-PCIE": 81559, "H100-NVL": 95830,
    "H200": 143771, "H20": 97871, "B200": 183359, "GB200": 189471,
    "A100-80GB": 81920, "A100": 81920, "A100-40GB": 40960,
    "L40S": 46068, "L40": 46068, "A10": 23028, "L4": 23034, "T4": 15360,
    "RTX4090": 24564, "RTX3090": 24576, "RTX5090": 32607, "V100": 16384, "V100-32GB": 32768,
}  # fmt: skip


def gpu_total_bytes(name: str) -> int:
    """The driver-reported memory of a GPU model, e.g. 'H100' → 81,559 MiB in bytes."""
    key = name.upper().replace(" ", "-").replace("_", "-")
    if key not in GPU_TOTAL_MIB:
        raise InputError(
            f"unknown GPU {name!r} (known: {', '.join(GPU_TOTAL_MIB)}; or give --gpu-memory SIZE)",
            field="--gpu",
        )
    return GPU_TOTAL_MIB[key] * MIB

# GPUs of the Blackwell generation (SM100), where some engine defaults differ (KV dtype, page size).
BLACKWELL_GPUS = frozenset({"B200", "GB200", "B300", "GB300"})

# CUDA compute capability (major × 10 + minor) of the GPUs above, as engines compare it with a weight
# format's minimum (e.g. SGLang's `quant_config.get_min_capability()`, docs/engines/sglang.md §4.5).
GPU_CAPABILITY: dict[str, int] = {
    "H100": 90, "H100-SXM": 90, "H100-PCIE": 90, "H100-NVL": 90, "H200": 90, "H20": 90,
    "B200": 100, "GB200": 100, "B300": 103, "GB300": 103,
    "A100-80GB": 80, "A100": 80, "A100-40GB": 80, "A10": 86, "RTX3090": 86,
    "L40S": 89, "L40": 89, "L4": 89, "RTX4090": 89, "RTX5090": 120, "T4": 75, "V100": 70, "V100-32GB": 70,
}


def gpu_key(name: str | None) -> str:
    """A GPU name as the tables above spell it: 'b200' → 'B200', 'H100 SXM' → 'H100-SXM'."""
    return (name or "").upper().replace(" ", "-").replace("_", "-")


def gpu_capability(name: str | None) -> int | None:
    """The compute capability of a known GPU (H100 → 90, B200 → 100); None for a name kvtop does not know."""
    return GPU_CAPABILITY.get(gpu_key(name))
