"""Which GPUs take V1's larger batch defaults, by release (docs/engines/vllm.md §3).

vLLM's V1 sets its unset max_num_batched_tokens and max_num_seqs from a two-row table (`EngineArgs.
_set_default_args_v1`, later `get_batch_defaults`; read in the PyPI wheels' vllm/engine/arg_utils.py): the large row
(API server 8192 tokens, LLM class 16384, 1024 seqs) or the small one (2048 / 8192 tokens, 256 seqs). What picks the
row changed three times:

- v0.8.0–v0.8.4: the device's name (`"h100" in device_name or "h200" in device_name`, lower-cased
  `current_platform.get_device_name()`): v0.8.0 :1693, v0.8.1 :1704, v0.8.2 :1793, v0.8.3 :1647, v0.8.4 :1669.
  Up to v0.8.3 the name sets the tokens only and max_num_seqs is 1024 on every GPU (`default_max_num_seqs = 1024`:
  v0.8.0 :1715, v0.8.1 :1726, v0.8.2 :1815, v0.8.3 :1669); v0.8.4 puts 1024 / 256 into the two rows (:1675, :1682).
- v0.8.5: the device's memory, `device_memory >= 70 * GiB_bytes` (:1596; 1024 / 256 seqs :1602, :1609): an
  A100 80GB takes the large row.
- v0.9.0 on: `device_memory >= 70 * GiB_bytes and "a100" not in device_name` (v0.9.0 :1495, v0.9.1 :1554, v0.9.2
  :1629, v0.10.0 :1584, v0.10.1.1 :1638, v0.10.2 :1669, v0.11.0 :1605; `get_batch_defaults` in v0.13.0 and v0.33.0).

A GPU kvtop is given no name of takes the memory rule in every release (≥ 70 GiB: the large row): an assumption.

A unified-memory device (GB10, Jetson Thor: `gpus.is_unified`) keeps the small row where the memory rule reads no
total: NVML has no device memory query there (nvidia-smi's memory.total '[N/A]'), and before v0.33.0 vLLM's total is
NVML's, so the query raises and the batch defaults' `except Exception` reads 0 (`UNIFIED_MEMORY_READ_ERAS`). From
v0.33.0 vLLM falls back to CUDA's total (119.7 GiB on a GB10) and keeps compute capability 12.1 (the GB10) off the
≥ 70 GiB row; a Jetson Thor (11.0) then takes the large row. That NVML answers on a Thor at all (JetPack 7's
nvidia-smi; 'Device 0 : Thor' and NVML_ERROR_NOT_SUPPORTED in nvidia-cosmos/cosmos-reason1#61) is read from its
users' reports, not from a log of vLLM's batch on one: an assumption.
"""

from __future__ import annotations

from typing import Literal

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.engines.vllm.eras import LARGE_GPU_BATCH_ERAS
from kvtop.domain.engines.vllm.v1_opt_in import named_large_device
from kvtop.domain.gpus import compute_capability, is_unified
from kvtop.domain.wording import GIB

TierRule = Literal["name", "memory", "memory_not_a100"]
V1_TIER_RULE_ERAS: Eras[TierRule] = Eras((
    Era("", "name", "engine/arg_utils.py _set_default_args_v1: the large row where the device's name holds 'h100' "
                    "or 'h200' (v0.8.0 :1693, v0.8.3 :1647, v0.8.4 :1669)"),
    Era("0.8.5", "memory", "v0.8.5 engine/arg_utils.py:1596 `device_memory >= 70 * GiB_bytes` (A100 80GB included)"),
    Era("0.9.0", "memory_not_a100", "engine/arg_utils.py `device_memory >= 70 * GiB_bytes and \"a100\" not in "
                                    "device_name` (v0.9.0 :1495, v0.10.2 :1669, v0.11.0 :1605)"),
))  # fmt: skip
# whether max_num_seqs follows the row (True) or is 1024 on every GPU (False)
SEQS_BY_TIER_ERAS: Eras[bool] = Eras((
    Era("", False, "engine/arg_utils.py _set_default_args_v1 `default_max_num_seqs = 1024` on every GPU (v0.8.0 "
                   ":1715, v0.8.1 :1726, v0.8.2 :1815, v0.8.3 :1669)"),
    Era("0.8.4", True, "v0.8.4 engine/arg_utils.py:1675, :1682: 1024 in the large row, 256 in the small one"),
))  # fmt: skip
# What the memory rule reads on a unified-memory device, whose NVML has no device memory query
UnifiedRead = Literal["nothing", "cuda_total"]
UNIFIED_MEMORY_READ_ERAS: Eras[UnifiedRead] = Eras((
    Era("", "nothing", "platforms/cuda.py NvmlCudaPlatform.get_device_total_memory returns nvmlDeviceGetMemoryInfo's "
                       "total (v0.9.1 :431-434, v0.24.0 :768-771, v0.30.0 :833-836, v0.32.0 :801-804), which raises "
                       "there; engine/arg_utils.py's `except Exception` then sets device_memory = 0 (v0.10.2 "
                       ":1659-1663, v0.24.0 :2394-2398, v0.32.0 :2913-2917)"),
    Era("0.33.0", "cuda_total", "v0.33.0 platforms/cuda.py:804-814 (v0.34.0 :845-855): on NVMLError, CUDA's "
                                "total_memory ('Integrated parts (e.g. GB10 / DGX Spark)'); get_batch_defaults' "
                                "`is_gb10 = current_platform.is_device_capability((12, 1))` keeps the GB10 off the "
                                "≥ 70 GiB row (engine/arg_utils.py:2963, :2984-2986; v0.34.0 :3000, :3020-3024)"),
))  # fmt: skip
# the compute capability v0.33.0 on keeps on the small row though it has the memory (the GB10, DGX Spark)
GB10_CAPABILITY = (12, 1)
LARGE_GPU_BYTES = 70 * GIB
TOP_TIER_BYTES = 160 * GIB
V1_MAX_NUM_SEQS, V1_SMALL_GPU_MAX_NUM_SEQS = 1024, 256


def is_a100(gpu_name: str | None) -> bool:
    return gpu_name is not None and "A100" in gpu_name.upper()


def tier_memory(total_bytes: int, gpu_name: str | None, version: ResolvedVersion) -> int:
    """The device memory vLLM's batch defaults read: 0 on a unified-memory device before v0.33.0, whose NVML query
    raises (`UNIFIED_MEMORY_READ_ERAS`), else the GPU's total."""
    if is_unified(gpu_name) and UNIFIED_MEMORY_READ_ERAS.at(version) == "nothing":
        return 0
    return total_bytes


def top_tier_tokens(total_bytes: int, gpu_name: str | None, version: ResolvedVersion) -> int | None:
    """The ≥ 160 GiB tier's batched tokens (`eras.LARGE_GPU_BATCH_ERAS`, from v0.28.0) where this GPU takes it, else
    None: the tier reads the memory alone (no name, no capability: v0.33.0 engine/arg_utils.py:2973)."""
    largest = LARGE_GPU_BATCH_ERAS.at(version)
    return largest if largest is not None and tier_memory(total_bytes, gpu_name, version) >= TOP_TIER_BYTES else None


def v1_large_gpu(total_bytes: int, gpu_name: str | None, version: ResolvedVersion) -> bool:
    """Whether V1 of `version` gives this GPU its large batch row, or the ≥ 160 GiB tier above it (the module's
    docstring)."""
    rule = V1_TIER_RULE_ERAS.at(version)
    if rule == "name" and gpu_name is not None:
        return named_large_device(gpu_name)
    if tier_memory(total_bytes, gpu_name, version) < LARGE_GPU_BYTES:
        return False
    if rule == "memory" or top_tier_tokens(total_bytes, gpu_name, version) is not None:
        return True
    return not is_a100(gpu_name) and not _kept_small(gpu_name, version)


def _kept_small(gpu_name: str | None, version: ResolvedVersion) -> bool:
    """Whether v0.33.0 on keeps this GPU off the ≥ 70 GiB row by its compute capability (the GB10's 12.1)."""
    return UNIFIED_MEMORY_READ_ERAS.at(version) == "cuda_total" and compute_capability(gpu_name) == GB10_CAPABILITY


def v1_max_num_seqs(total_bytes: int, gpu_name: str | None, version: ResolvedVersion) -> tuple[int, str]:
    """(max_num_seqs, why) V1 takes with no --max-num-seqs on this GPU in `version`."""
    if not SEQS_BY_TIER_ERAS.at(version):
        return V1_MAX_NUM_SEQS, f"V1's default {V1_MAX_NUM_SEQS} seqs on every GPU before v0.8.4"
    if v1_large_gpu(total_bytes, gpu_name, version):
        return V1_MAX_NUM_SEQS, f"V1's default {V1_MAX_NUM_SEQS} seqs on {_large_words(version)}"
    why = small_row_reason(total_bytes, gpu_name, version)
    return V1_SMALL_GPU_MAX_NUM_SEQS, f"V1's default {V1_SMALL_GPU_MAX_NUM_SEQS} seqs ({why})"


def small_row_reason(total_bytes: int, gpu_name: str | None, version: ResolvedVersion) -> str:
    """Why a GPU the release's memory rule reads takes the small row, in words."""
    if V1_TIER_RULE_ERAS.at(version) != "name" and total_bytes >= LARGE_GPU_BYTES:
        if tier_memory(total_bytes, gpu_name, version) == 0:
            return f"vLLM {version.label} reads no memory total on a unified-memory device: NVML has no memory query"
        if _kept_small(gpu_name, version):
            major, minor = GB10_CAPABILITY
            return f"vLLM {version.label} keeps compute capability {major}.{minor} (the GB10) on the small row"
    return f"not {_large_words(version)}"


def _large_words(version: ResolvedVersion) -> str:
    return {"name": "an H100 or H200 (by the device's name)", "memory": "a GPU of ≥ 70 GiB",
            "memory_not_a100": "a GPU of ≥ 70 GiB that is not an A100"}[V1_TIER_RULE_ERAS.at(version)]  # fmt: skip
