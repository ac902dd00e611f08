"""What CUDA shows a process on this GPU, against what NVML shows: one JSON object on stdout.

The engines size from `cudaMemGetInfo` (vLLM: its total × --gpu-memory-utilization; SGLang, TensorRT-LLM and
LMDeploy: its free memory); nvidia-smi and NVML show a larger total. kvtop fits CUDA's total per GPU model from
engine logs (kvtop/domain/calibration/gpu_totals.py); this reads both on a real GPU. It also measures, with NVML's
used bytes (which see the driver's part, unlike torch's allocator), what this process's CUDA context costs, what
the first bf16 matrix product adds (cuBLAS's workspace and kernels) and what a one-rank NCCL group and its first
all-reduce add. Run by gpu_device_run.sh; needs torch with CUDA and nvidia-ml-py.
"""

from __future__ import annotations

import json
import os
import sys

import pynvml


def main() -> int:
    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(0)

    def used() -> int:
        return int(pynvml.nvmlDeviceGetMemoryInfo(handle).used)

    facts: dict[str, object] = {
        "gpu_name": pynvml.nvmlDeviceGetName(handle),
        "driver": pynvml.nvmlSystemGetDriverVersion(),
        "nvml_v1": dict(zip(("total", "free", "used"), _triple(pynvml.nvmlDeviceGetMemoryInfo(handle)), strict=True)),
    }
    try:
        v2 = pynvml.nvmlDeviceGetMemoryInfo(handle, version=pynvml.nvmlMemory_v2)
        facts["nvml_v2"] = {"total": v2.total, "reserved": v2.reserved, "free": v2.free, "used": v2.used}
    except Exception as error:  # noqa: BLE001 - an old driver has no v2: said, not fatal
        facts["nvml_v2"] = f"unavailable: {error}"
    before = used()
    import torch

    torch.cuda.init()
    torch.cuda.set_device(0)
    torch.zeros(1, device="cuda")
    free, total = torch.cuda.mem_get_info()
    after_context = used()
    facts["torch"] = torch.__version__
    facts["cuda_runtime"] = torch.version.cuda
    facts["cuda_mem_get_info"] = {"free": free, "total": total}
    facts["nvml_total_minus_cuda_total"] = facts["nvml_v1"]["total"] - total  # type: ignore[index]
    facts["context_bytes"] = after_context - before
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    (a @ a).sum().item()
    torch.cuda.synchronize()
    facts["first_bf16_matmul_bytes"] = used() - after_context - torch.cuda.memory_reserved()
    facts["torch_reserved_after_matmul"] = torch.cuda.memory_reserved()
    after_matmul = used()
    try:
        import torch.distributed as dist

        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29511")
        dist.init_process_group("nccl", rank=0, world_size=1, device_id=torch.device("cuda:0"))
        t = torch.ones(1 << 20, device="cuda")
        dist.all_reduce(t)
        torch.cuda.synchronize()
        facts["nccl_one_rank_bytes"] = used() - after_matmul - (torch.cuda.memory_reserved() - facts["torch_reserved_after_matmul"])  # type: ignore[operator]
        dist.destroy_process_group()
    except Exception as error:  # noqa: BLE001 - NCCL may be absent or refuse: said, not fatal
        facts["nccl_one_rank_bytes"] = f"failed: {error}"
    json.dump(facts, sys.stdout, indent=2)
    print()
    return 0


def _triple(info: object) -> tuple[int, int, int]:
    return int(info.total), int(info.free), int(info.used)  # type: ignore[attr-defined]


if __name__ == "__main__":
    raise SystemExit(main())
