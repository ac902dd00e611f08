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


def _reserve(flags: list[str], gpu: str, total_gib: int, version: ResolvedVersion = V0523) -> int:
    model = load_model(str(config_path(CONFIG)))
    return multimodal_reserve_bytes(model, parse_flags("sglang", flags), version, gpu, total_gib << 30)


def test_the_override_arithmetic() -> None:
    assert _reserve([], "H100", 80) == 1024 * MIB  # cuda_ipc's feature cache; the VLM cache off
    assert _reserve(["--max-running-requests", "400"], "H100", 80) == 3 * 1024 * MIB  # a high-concurrency wave
    assert _reserve(["--mm-feature-transport", "shm"], "H100", 80) == 0  # no GPU pool; the VLM cache still off
    # not a large Hopper GPU (sm90 and ≥ 60 GiB), or an earlier release: the default 100 MiB VLM cache
    assert _reserve([], "A100", 80) == 100 * MIB
    assert _reserve([], "H100", 40) == 100 * MIB
    assert _reserve([], "H100", 80, ResolvedVersion(text="0.5.22", source=VersionSource.FLAG)) == 100 * MIB
