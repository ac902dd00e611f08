"""SGLang's DeepSeek DSA launch overrides against the engine's own recorded runs (S24, S23 of docs/fidelity.md).

Expected figures are SGLang 0.5.23's own, recorded by running its sizing code on each row's inputs
(tests/data/engine_diff/sglang-0.5.23.flags.json, benchmarks/engine_diff/run.py); kvtop's side is
`kvtop plan` in-process with the same argv the table uses (benchmarks/engine_diff/kvtop_side.py).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.engine_diff.cases import config_path
from benchmarks.engine_diff.kvtop_side import kvtop_plan
from kvtop.domain.engines.sglang import RULES as SGLANG
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.kv import resolve_kv_format
from kvtop.domain.launch import parse_flags
from kvtop.sources.hub import load_model
from tests.data_paths import DATA

FLAG_ROWS = DATA / "engine_diff" / "sglang-0.5.23.flags.json"


def _row(config: str, variant: str) -> dict[str, Any]:
    rows = json.loads(FLAG_ROWS.read_text())["results"]
    return next(r for r in rows if r["config"] == config and r.get("variant") == variant)


NVFP4 = "nvidia--DeepSeek-V3.2-NVFP4"


@pytest.mark.parametrize("variant", ["page64", "ctx4k", "mrr64", "ep"])
def test_sglang_dsa_auto_kv_on_hopper_is_bf16_over_the_checkpoints_fp8(variant: str) -> None:
    """S24: the checkpoint says FP8 KV (hf_quant_config.json kv_cache_quant_algo), SGLang 0.5.23 on sm90 sizes
    bf16: 61 layers × (512 + 64) × 2 B + 61 × (128 + 128 // 128 × 4) B indexer = 70,272 + 8,052 = 78,324 B."""
    row = _row(NVFP4, variant)
    assert row["kv_cache_dtype"] == "torch.bfloat16" and row["gpu"] == "sm90"
    assert row["cell_size"] == 61 * 576 * 2 + 61 * 132 == 78_324
    plan = kvtop_plan("sglang", "0.5.23", row)
    assert (plan["cell_bytes"], plan["tokens"], plan["block_size"]) == (78_324, 548_352, 64)
    assert (row["cell_size"], row["max_total_num_tokens"], row["page_size"]) == (78_324, 548_352, 64)


def _auto_format(version: str, gpu: str) -> str:
    model = load_model(str(config_path(NVFP4)))
    assert (model.quant.kv_cache_quant_algo or "").upper() == "FP8"  # what the checkpoint says
    settings = parse_flags("sglang", ["--tp", "2"])
    storage = SGLANG.kv_storage_for(model, settings, ResolvedVersion(text=version))
    return resolve_kv_format("auto", model, storage, gpu_name=gpu)


def test_the_dsa_default_comes_first_from_sglangs_dsa_support_on() -> None:
    """From v0.5.3 (server_args.py, then arg_groups/overrides.py): bf16 below SM100, fp8_e4m3 on SM100+;
    before it the checkpoint's FP8 is read (kv_cache_dtype.py)."""
    assert _auto_format("0.5.23", "H200") == "bf16"
    assert _auto_format("0.5.6.post2", "H100") == "bf16"
    assert _auto_format("0.5.23", "B200") == "fp8_e4m3"
    assert _auto_format("0.5.2", "H200") == "fp8_e4m3"
