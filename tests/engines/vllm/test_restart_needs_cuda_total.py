"""A vLLM restart asks ceil(CUDA's total × --gpu-memory-utilization) free on every GPU (`request_memory`:
`init_snapshot.total_memory`, cudaMemGetInfo's total, docs/engines/vllm.md §2.2), never nvidia-smi's total: the
diagnosis's start check and its evidence read the ledger's engine total, as the budget does.

Expected from a vLLM 0.19.0 log on one H100 (tests/data/served_model/vllm-0.19.0-llama-3.1-8b-float32-h100.log):
'Free memory on device (78.68/79.19 GiB) on startup. Desired GPU memory utilization is (0.95, 75.23 GiB)': CUDA's
79.19 GiB (85,029,615,043 B) × 0.95 = 75.23 GiB, where nvidia-smi's 81,559 MiB × 0.95 would be 75.69 GiB.
"""

from __future__ import annotations

import json

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.ledger_values import Ledger
from kvtop.domain.model_config import model_from_config
from tests.data_paths import CONFIGS

H100_SMI = 81559 << 20
H100_CUDA = 85_029_615_043  # 79.19 GiB, as the log prints it


def _ledger() -> Ledger:
    model = model_from_config(json.loads((CONFIGS / "meta-llama--Llama-3.1-8B.json").read_text()))
    settings = parse_flags("vllm", ["--gpu-memory-utilization", "0.95", "--max-model-len", "8192"]).model_copy(
        update={"engine_version": "0.19.0"}
    )
    # a live node: NVML's (nvidia-smi's) total, CUDA's measured beside it (NVML v2's total less its reserved)
    return predict(model, settings, gpu_total_bytes=H100_SMI, gpu_name="H100",
                   measured=MeasuredInputs(cuda_total_bytes=H100_CUDA))  # fmt: skip


def test_a_restart_needs_the_share_of_cudas_total() -> None:
    ledger = _ledger()
    diagnosis = engine_rules("vllm").diagnosis
    assert ledger.engine_total_bytes == H100_CUDA
    said = diagnosis.spread_evidence(ledger, 1000, "8 ranks")
    assert "a restart needs 75.23 GiB free on every GPU" in said  # the log's 'Desired … (0.95, 75.23 GiB)'
    needed = -(-H100_CUDA * 95 // 100)
    assert diagnosis.fitting_utilization(ledger, needed) == 0.95  # exactly the share free: it starts at 0.95
    assert diagnosis.fitting_utilization(ledger, needed - 1) == 0.94
