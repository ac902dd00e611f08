"""What vLLM and SGLang read as a unified-memory device's free memory, by release, and the host's share that follows.

Expected values from the engines' code: vLLM v0.11.0 `MemorySnapshot.measure` reads `torch.cuda.mem_get_info()` alone
(vllm/utils/__init__.py:2734); v0.11.1 – v0.13.0 replace the free memory by `psutil.virtual_memory().available` on
capabilities (8, 7), (11, 0), (12, 1) (vllm/utils/mem_utils.py:86-102; :105-122 at v0.19.0); v0.20.0 where
`is_integrated_gpu` (mem_utils.py:109-116 at v0.20.0, :146-154 at v0.24.0). SGLang 0.5.3rc0 and 0.5.3 read
`torch.cuda.mem_get_info` (srt/utils.py:406 at 0.5.3rc0, srt/utils/common.py:412 at 0.5.3), 0.5.4 psutil's available
memory on SM 87, 110, 121 (srt/utils/common.py:461-467), 0.5.9 where `props.is_integrated` (common.py:528-533).
"""

from __future__ import annotations

import math

import pytest

from kvtop.domain.calibration.host_estimate import StartVerdict
from kvtop.domain.calibration.host_memory import start_verdict, unified_host
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.wording import GIB


@pytest.mark.parametrize(
    ("engine", "release", "available"),
    [("vllm", "0.10.2", False), ("vllm", "0.11.0", False), ("vllm", "0.11.1", True), ("vllm", "0.13.0", True),
     ("vllm", "0.19.0", True), ("vllm", "0.20.0", True), ("vllm", "0.24.0+092c4842.dev", True), ("vllm", "0.33.0", True),
     ("vllm", None, True), ("sglang", "0.5.3rc0", False), ("sglang", "0.5.3", False), ("sglang", "0.5.4", True), ("sglang", "0.5.9", True),
     ("trtllm", "1.1.0rc3", False), ("lmdeploy", "0.10.0", False)],
)  # fmt: skip
def test_what_each_release_reads_as_the_free_memory(engine: str, release: str | None, available: bool) -> None:
    version = ResolvedVersion(text=release)
    assert engine_rules(engine).reads_available_memory(version) is available


def test_a_gb10_start_the_corpus_saw_come_up_at_0_80_is_no_longer_refused_at_the_centre() -> None:
    """bakeer-qwen3.8-27b-fp8-gb10-v0271-nospec-u080-mml131072 (vLLM 0.27.1, 0.80) came up: vLLM asks ceil(0.80 × T)
    free of psutil's available memory, so the host may hold T − ceil(0.80 × T) ≈ 23.94 GiB. Against cudaMemGetInfo's
    span (29.34 % of T = 35.12 GiB) that was 'refused at the centre'; the kernel's available memory leaves the page
    cache free: 11.73 % + 7.02 % of T = 22.44 GiB is the span's high end, below it."""
    total = gpu_total_bytes("GB10")
    needs = math.ceil(0.80 * total)
    assert start_verdict(total, needs)[1] is StartVerdict.REFUSED_AT_CENTRE
    most, verdict = start_verdict(total, needs, available=True)
    assert abs(most / GIB - 0.20 * 119.70) < 0.01 and verdict is StartVerdict.STARTED_ACROSS_SPAN


def test_the_sglang_gb10_start_s_own_reading_falls_inside_the_available_span() -> None:
    """SGLang 0.5.9 on a GB10 logged `avail mem=110.63 GB` before the load (yukimaru77-qwen3.5-4b-gb10-v059-mf08):
    the host held 119.70 − 110.63 = 9.07 GiB, inside 11.73 % ± 7.02 % of 119.70 GiB (5.64 – 22.44 GiB); the
    plan's note says the page cache is free."""
    host = unified_host(gpu_total_bytes("GB10"), charged=True, available=True)
    held = (119.70 - 110.63) * GIB
    assert host.held_bytes - host.error_bytes <= held <= host.held_bytes + host.error_bytes
    assert abs(host.held_bytes / GIB - 0.1173 * 119.70) < 0.01 and host.page_cache_free
    assert "(the page cache free, as the engine reads the kernel's available memory)" in host.note
