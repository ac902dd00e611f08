"""SGLang 0.5.23 serves Qwen3-VL on a large Hopper GPU through its profiled path (S17): the VLM embedding cache off
and CUDA-IPC feature transport, whose 1 GiB feature cache (3 GiB at --max-running-requests ≥ 400) is kept off the
KV budget (`_qwen3vl_hopper_serving_overrides`, sglang/srt/arg_groups/model_overrides/qwen3_vl.py).

Expected figures: the engine's own runs (tests/data/engine_diff/sglang-0.5.23.flags.json, sm90), and the
override's arithmetic for the settings no run covered.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.engine_diff.cases import config_path
from benchmarks.engine_diff.kvtop_side import kvtop_plan
from kvtop.domain.engines.sglang.multimodal import multimodal_reserve_bytes
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.gpu_total_origin import GpuTotalOrigin
from kvtop.domain.launch import parse_flags
from kvtop.domain.wording import MIB
from kvtop.sources.hub import load_model
from tests.data_paths import DATA

CONFIG = "Qwen--Qwen3-VL-8B-Instruct"
V0523 = ResolvedVersion(text="0.5.23", source=VersionSource.FLAG)


def _row(variant: str) -> dict[str, Any]:
    rows = json.loads((DATA / "engine_diff" / "sglang-0.5.23.flags.json").read_text())["results"]
    return next(r for r in rows if r["config"] == CONFIG and r.get("variant") == variant and r["kv_dtype"] == "auto")


@pytest.mark.parametrize(
    ("variant", "tokens"),
    [
        # TP 2: 36 layers × 4 KV heads × 128 × 2 × 2 B = 73,728 B a token; rest 40 GiB − 1 GiB = 39 GiB
        # → 41,875,931,136 // 73,728 = 567,978 (kvtop gave 581,120 when it kept the default 100 MiB off instead)
        ("mrr64", 567_978),
        ("page64", 567_936),  # 567,978 floored to 64-token pages
        ("pp2", 1_135_957),  # TP 2 × PP 2: each stage's 18 layers, 36,864 B a token
    ],
)
def test_the_profiled_path_keeps_one_gib_off_the_budget(variant: str, tokens: int) -> None:
    row = _row(variant)
    assert row["max_total_num_tokens"] == tokens  # the committed engine run
    assert kvtop_plan("sglang", "0.5.23", row)["tokens"] == tokens


def _reserve(
    flags: list[str], gpu: str, total_gib: float, version: ResolvedVersion = V0523, origin: GpuTotalOrigin | None = None
) -> int:
    model = load_model(str(config_path(CONFIG)))
    total = round(total_gib * (1 << 30))
    return multimodal_reserve_bytes(model, parse_flags("sglang", flags), version, gpu, total, origin)


def test_the_override_arithmetic() -> None:
    assert _reserve([], "H100", 80) == 1024 * MIB  # cuda_ipc's feature cache; the VLM cache off
    assert _reserve(["--max-running-requests", "400"], "H100", 80) == 3 * 1024 * MIB  # a high-concurrency wave
    assert _reserve(["--mm-feature-transport", "shm"], "H100", 80) == 0  # no GPU pool; the VLM cache still off
    # not a large Hopper GPU (sm90 and ≥ 60 GiB), or an earlier release: the default 100 MiB VLM cache
    assert _reserve([], "A100", 80) == 100 * MIB
    assert _reserve([], "H100 MIG 3g.40gb", 40) == 100 * MIB  # a slice: nvidia-smi prints no total, CUDA's is read
    assert _reserve([], "H100", 80, ResolvedVersion(text="0.5.22", source=VersionSource.FLAG)) == 100 * MIB


@pytest.mark.parametrize(
    ("gpu", "total_gib", "origin", "reserve_mib"),
    [
        # The line is nvidia-smi's: large_hopper_qwen3_vl_model_type reads get_device_memory_capacity() < 60 × 1024
        # (0.5.23 arg_groups/model_overrides/qwen3_vl.py:24-25), get_nvgpu_memory_capacity's `nvidia-smi
        # --query-gpu=memory.total` (utils/common.py:802-832). An H100's --gpu-memory is CUDA's total; its nvidia-smi
        # prints 81,559 MiB (the table's) ≥ 61,440, so the profiled path's 1 GiB where the total given is a whole
        # H100's (79.19 GiB, as its logs print it). kvtop compared the CUDA total given and kept 100 MiB.
        ("H100", 79.19, GpuTotalOrigin.GIVEN, 1024),
        ("H100", 79.19, None, 1024),  # unsaid: read from the bytes as a --gpu-memory
        # far below a whole H100's CUDA total (`gpu_total_origin.whole_card_floor`): a part of the card (a slice, a
        # limit), whose nvidia-smi total is taken as the one given (`smi_total`), below the line
        ("H100", 59.5, GpuTotalOrigin.GIVEN, 100),
        # a MIG slice: nvidia-smi prints no total and SGLang falls back to CUDA's (_cuda_mem_fallback, :824-829),
        # so the line falls on the total given: 61,440 MiB is on it (not < 60 × 1024), one MiB less is below it
        ("H100 MIG 4g.40gb", 60, GpuTotalOrigin.GIVEN, 1024),
        ("H100 MIG 4g.40gb", 60 - 1 / 1024, GpuTotalOrigin.GIVEN, 100),
    ],
)
def test_the_60_gib_line_is_nvidia_smis_total(
    gpu: str, total_gib: float, origin: GpuTotalOrigin | None, reserve_mib: int
) -> None:
    assert _reserve([], gpu, total_gib, origin=origin) == reserve_mib * MIB
