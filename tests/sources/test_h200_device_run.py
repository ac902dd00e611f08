"""One H200 read live (benchmarks/gpu_device_run.sh, driver 580.159.04, CUDA 13.0): what nvidia-smi printed, what
NVML's v1 and v2 calls and `torch.cuda.mem_get_info()` said (tests/data/samples/nvml/h200-device-run-cuda-facts.json)
and kvtop's `snapshot --json` there (…-snapshot.json). The independent figure is torch's: CUDA's total, 150,109,880,320
B, is NVML v2's total less its reserved to the byte, and a live prediction sizes from it (measured), not from the
H200's fit of three logged totals (139.893 GiB, calibrated)."""

from __future__ import annotations

import json
import math
from typing import Any

import pynvml

from kvtop.commands.render_ledger import ledger_json
from kvtop.domain.gpu_total_origin import GpuTotalOrigin, engine_visible_total
from kvtop.domain.launch_line import parse_launch_command
from kvtop.domain.ledger import Ledger
from kvtop.domain.observe import EngineInstance, GpuObservation, MemoryApi
from kvtop.domain.predictor import EnginePredictor
from kvtop.sources.hub import load_model
from kvtop.sources.nvml import NvmlSource
from tests.calibrated_figures import H200_CUDA_TOTAL_BYTES
from tests.data_paths import SAMPLES
from tests.fakes.fake_pynvml import FakeGpu, FakePynvml

MIB = 1 << 20
FACTS: dict[str, Any] = json.loads((SAMPLES / "nvml" / "h200-device-run-cuda-facts.json").read_text())
CUDA_TOTAL = FACTS["cuda_mem_get_info"]["total"]  # torch's, on the same card at the same minute
VLLM = "vllm serve meta-llama/Llama-3.1-8B-Instruct --port 8000"


def _h200(**overrides: Any) -> GpuObservation:
    """The H200 through kvtop's NVML reader, the fake answering with the bytes NVML v2 gave on the card."""
    v2 = FACTS["nvml_v2"]
    gpu = FakeGpu(name=FACTS["gpu_name"], uuid="GPU-03b20da8-ae3a-497d-21f1-ff0376b8e948", pci_bus_id="00000000:00:06.0",
                  total=v2["total"], used=v2["used"], free=v2["free"], reserved=v2["reserved"], **overrides)  # fmt: skip
    node = NvmlSource(nvml_module=FakePynvml([gpu], driver_version=FACTS["driver"])).read()  # type: ignore[arg-type]
    return node.gpus[0]


def _smi_mib(label: str) -> int:
    text = (SAMPLES / "nvidia_smi" / "h200-device-run-q-memory.txt").read_text()
    fb = text.split("FB Memory Usage")[1].split("BAR1")[0]
    return int(next(line for line in fb.splitlines() if line.strip().startswith(label)).split(":")[1].split()[0])


def test_nvml_reads_the_card_as_nvidia_smi_printed_it() -> None:
    gpu = _h200()
    assert (gpu.total_bytes, gpu.reserved_bytes, gpu.memory_api) == (150_754_820_096, 644_939_776, MemoryApi.V2)
    # nvidia-smi -q: Total 143771, Reserved 616, Free 143156 MiB (it rounds a part MiB up: 615.06 → 616)
    assert _smi_mib("Total") == (gpu.total_bytes or 0) // MIB == 143_771
    assert _smi_mib("Reserved") == math.ceil((gpu.reserved_bytes or 0) / MIB) == 616
    assert _smi_mib("Free") == math.ceil((gpu.free_bytes or 0) / MIB) == 143_156
    csv = (SAMPLES / "nvidia_smi" / "h200-device-run-query-gpu.csv").read_text().splitlines()[1].split(", ")
    assert csv[1] == "NVIDIA H200" and csv[3] == FACTS["driver"] and csv[4:] == ["143771 MiB", "0 MiB", "616 MiB", "143156 MiB"]
    # v1's `used` holds the reserve: its free is v2's
    assert FACTS["nvml_v1"]["used"] == FACTS["nvml_v2"]["reserved"] and FACTS["nvml_v1"]["free"] == FACTS["nvml_v2"]["free"]


def test_cuda_total_is_nvml_total_less_reserved_to_the_byte() -> None:
    gpu = _h200()
    assert engine_visible_total(gpu.total_bytes, gpu.reserved_bytes) == CUDA_TOTAL == 150_109_880_320
    # 139.80 GiB measured; the H200's fit of three logged totals said 139.89 at this commit (95 MiB high here)
    assert engine_visible_total(gpu.total_bytes, None) is None  # NVML v1: no reserve, not measured
    assert engine_visible_total(gpu.total_bytes, 0) is None  # a driver that does not split it


def test_kvtops_own_snapshot_of_the_card_holds_the_same_figures() -> None:
    snapshot = json.loads((SAMPLES / "nvml" / "h200-device-run-snapshot.json").read_text())
    (gpu,) = snapshot["gpus"]
    assert snapshot["nvml"]["driver_version"] == FACTS["driver"] and snapshot["simulated"] is False
    assert (gpu["total_bytes"], gpu["reserved_bytes"], gpu["memory_api"]) == (150_754_820_096, 644_939_776, "v2")
    assert gpu["total_bytes"] - gpu["reserved_bytes"] == CUDA_TOTAL
    # used + reserved + free is the total (v2), with the 8 GiB tensor's process on it
    assert gpu["used_bytes"] + gpu["reserved_bytes"] + gpu["free_bytes"] == gpu["total_bytes"]
    assert gpu["processes"][0]["used_bytes"] > 8 << 30


def _live_ledger(gpu: GpuObservation) -> Ledger:
    engine = EngineInstance(engine_id="vllm:8000", kind="vllm", server_pid=8000, settings=parse_launch_command(VLLM),
                            host="127.0.0.1", port=8000)  # fmt: skip
    ledger = EnginePredictor(lambda ref, override=None: load_model("llama-3.1-8b", override=override)).ledger(engine, [gpu])
    assert isinstance(ledger, Ledger), ledger
    return ledger


def test_a_live_prediction_sizes_from_the_measured_total() -> None:
    ledger = _live_ledger(_h200())
    assert ledger.gpu_total_bytes == 150_754_820_096 and ledger.gpu_total_origin is GpuTotalOrigin.NVML
    assert (ledger.engine_total_bytes, ledger.engine_total_source) == (CUDA_TOTAL, "measured")
    first = ledger.engine.steps[0]  # vLLM multiplies CUDA's total by its utilisation: CUDA's own, its own role
    assert (first.role, first.bytes, first.source) == ("cuda_total", CUDA_TOTAL, "measured")
    gpu = ledger_json(ledger)["gpu"]
    assert gpu["total_is"] == "NVML's total" and gpu["engine_total_bytes"] == CUDA_TOTAL


def test_without_v2_the_fit_stands_in_said_calibrated() -> None:
    gpu = _h200(v2_error=pynvml.NVMLError_FunctionNotFound)
    assert gpu.memory_api is MemoryApi.V1 and gpu.reserved_bytes is None
    ledger = _live_ledger(gpu)
    assert ledger.gpu_total_origin is GpuTotalOrigin.NVML
    assert (ledger.engine_total_bytes, ledger.engine_total_source) == (H200_CUDA_TOTAL_BYTES, "calibrated")
