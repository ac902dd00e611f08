"""V1's batch defaults by release and GPU: the row (large: 8192 API-server tokens, 16384 LLM class, 1024 seqs; small:
2048 / 8192 tokens, 256 seqs) and what picks it, read in the PyPI wheels' vllm/engine/arg_utils.py
(`_set_default_args_v1`):

- v0.8.0–v0.8.3: tokens by the device's name (`"h100" in device_name or "h200" in device_name`, v0.8.0 :1693, v0.8.3
  :1647), `default_max_num_seqs = 1024` on every GPU (v0.8.0 :1715, v0.8.3 :1669);
- v0.8.4: seqs join the name's rows (:1669, :1675 1024, :1682 256);
- v0.8.5: `device_memory >= 70 * GiB_bytes` (:1596), so an A100 80GB and an H20 take the large row;
- v0.9.0 on: `device_memory >= 70 * GiB_bytes and "a100" not in device_name` (v0.9.0 :1495, v0.11.0 :1605).

GPU totals are kvtop's nvidia-smi figures (gpus.py): H20 97,871 MiB, A100 80GB 81,920 MiB, L40S 46,068 MiB; NVML
names the GH200 'NVIDIA GH200 480GB', whose lower case holds "h200".
"""

from __future__ import annotations

import pytest

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.batching import default_batch_limits, default_max_num_seqs
from kvtop.domain.engines.vllm.profile_run import batch_limits
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.ledger import predict
from kvtop.sources.hub import load_model
from tests.data_paths import CONFIGS


@pytest.mark.parametrize(("release", "gpu", "tokens", "seqs"), [
    # v0.8.0–v0.8.3: the name sets the tokens, 1024 seqs everywhere
    ("0.8.0", "L40S", 2048, 1024),
    ("0.8.0", "A100-80GB", 2048, 1024),
    ("0.8.0", "H100", 8192, 1024),
    ("0.8.3", "H20", 2048, 1024),  # ≥ 70 GiB, but its name holds neither "h100" nor "h200"
    ("0.8.3", "GH200", 8192, 1024),  # "nvidia gh200 480gb" holds "h200"
    # v0.8.4: the name sets the seqs too
    ("0.8.4", "L40S", 2048, 256),
    ("0.8.4", "H20", 2048, 256),
    ("0.8.4", "A100-80GB", 2048, 256),
    ("0.8.4", "H100", 8192, 1024),
    # v0.8.5: the memory alone, an A100 80GB included
    ("0.8.5", "A100-80GB", 8192, 1024),
    ("0.8.5", "H20", 8192, 1024),
    ("0.8.5", "L40S", 2048, 256),
    # v0.9.0 on: the memory and no "a100"
    ("0.9.0", "A100-80GB", 2048, 256),
    ("0.9.0", "H20", 8192, 1024),
    ("0.11.0", "A100-80GB", 2048, 256),
    ("0.11.0", "L40S", 2048, 256),
])  # fmt: skip
def test_the_api_servers_v1_defaults_by_release_and_gpu(release: str, gpu: str, tokens: int, seqs: int) -> None:
    assert default_batch_limits(gpu_total_bytes(gpu), gpu, ResolvedVersion(text=release))[:2] == (tokens, seqs)


@pytest.mark.parametrize(("release", "gpu", "tokens"), [
    ("0.8.3", "H20", 8192),  # the small row's LLM_CLASS (v0.8.3 :1656)
    ("0.8.3", "H100", 16384),  # the large row's (:1650)
    ("0.8.5", "A100-80GB", 16384),  # v0.8.5 :1599
    ("0.9.0", "A100-80GB", 8192),  # v0.9.0 :1505
])  # fmt: skip
def test_the_llm_class_takes_the_same_row(release: str, gpu: str, tokens: int) -> None:
    assert default_batch_limits(gpu_total_bytes(gpu), gpu, ResolvedVersion(text=release), llm_class=True)[0] == tokens


@pytest.mark.parametrize(("release", "seqs"), [("0.8.0", 1024), ("0.8.4", 256), ("0.8.5", 1024), ("0.9.0", 256)])
def test_the_plan_and_its_profiled_batch_read_the_releases_seqs(release: str, seqs: int) -> None:
    """Qwen2.5-7B on an A100 80GB: the plan's max running requests and the profiling run's batch follow the row."""
    settings = parse_flags("vllm", []).model_copy(update={"engine_version": release})
    total = gpu_total_bytes("A100-80GB")
    ledger = predict(load_model(str(CONFIGS / "Qwen--Qwen2.5-7B-Instruct.json")), settings, gpu_total_bytes=total,
                     gpu_name="A100-80GB")  # fmt: skip
    assert ledger.engine.max_running_requests == seqs
    inputs = CalibrationInputs(model=None, settings=settings, layout=ParallelLayout(), gpu_total_bytes=total,
                               gpu_name="A100-80GB", context_length=32768, version=ResolvedVersion(text=release),
                               weights_bytes=0)  # fmt: skip
    assert batch_limits(inputs)[1] == seqs


def test_an_unnamed_gpu_takes_the_memory_rule_in_the_name_era() -> None:
    """kvtop's assumption (v1_batch_tier.py): ≥ 70 GiB with no name reads as the large row before v0.8.5 too."""
    assert default_batch_limits(gpu_total_bytes("H100"), None, ResolvedVersion(text="0.8.4"))[:2] == (8192, 1024)
    assert default_batch_limits(gpu_total_bytes("L40S"), None, ResolvedVersion(text="0.8.4"))[:2] == (2048, 256)


@pytest.mark.parametrize(("release", "gpu", "tokens", "seqs"), [
    # the Tennsoku DGX Spark start (0.24.0+092c4842.dev, no batch flag: tests/data/calibration/vllm.jsonl
    # tennsoku-qwen2.5-0.5b-gb10-v0240dev-u015-defaults) captured FULL graphs up to 256 and compiled the range
    # (1, 2048): NVML has no memory query on the GB10, so v0.24.0's `get_batch_defaults` reads device_memory = 0
    # (platforms/cuda.py:768-771, engine/arg_utils.py:2394-2398)
    ("0.24.0+092c4842.dev", "GB10", 2048, 256),
    ("0.11.0", "DGX-SPARK", 2048, 256),
    ("0.32.0", "THOR", 2048, 256),  # the same NVML query (v0.32.0 platforms/cuda.py:801-804)
    # v0.33.0: CUDA's total on NVMLError (platforms/cuda.py:804-814), the GB10 kept small by capability 12.1
    # (engine/arg_utils.py:2963, :2984-2986); a Thor (11.0, 122.8 GiB) takes the large row
    ("0.33.0", "GB10", 2048, 256),
    ("0.34.0", "GB10", 2048, 256),
    ("0.33.0", "THOR", 8192, 1024),
    # GH200's Hopper has its own HBM, which NVML reports: the large row as before
    ("0.24.0", "GH200", 8192, 1024),
])  # fmt: skip
def test_a_unified_memory_devices_row_by_release(release: str, gpu: str, tokens: int, seqs: int) -> None:
    assert default_batch_limits(gpu_total_bytes(gpu), gpu, ResolvedVersion(text=release))[:2] == (tokens, seqs)


def test_the_gb10_plan_takes_the_small_row_its_log_shows() -> None:
    """The Tennsoku start's plan: 256 running requests, the profiling run's 2,048 tokens, and the reason named."""
    release = "0.24.0+092c4842.dev"
    settings = parse_flags("vllm", ["--gpu-memory-utilization", "0.15"]).model_copy(update={"engine_version": release})
    total = gpu_total_bytes("GB10")
    ledger = predict(load_model(str(CONFIGS / "Qwen--Qwen2.5-7B-Instruct.json")), settings, gpu_total_bytes=total,
                     gpu_name="GB10")  # fmt: skip
    assert ledger.engine.max_running_requests == 256
    inputs = CalibrationInputs(model=None, settings=settings, layout=ParallelLayout(), gpu_total_bytes=total,
                               gpu_name="GB10", context_length=32768, version=ResolvedVersion(text=release),
                               weights_bytes=0)  # fmt: skip
    assert batch_limits(inputs)[:2] == (2048, 256)
    assert "NVML has no memory query" in default_max_num_seqs(total, "GB10", ResolvedVersion(text=release))[1]
