"""vLLM's SSM state dtype when the config names none: only NemotronH's config class replaces `auto`.

Expected figures are vLLM 0.33.0's own (tests/data/engine_diff/vllm-0.33.0.flags.json, flag set ctx4k: TP 2 on
H100, KV auto, --max-model-len 4096, --kv-cache-memory-bytes 40 GiB), made by benchmarks/engine_diff/run.py.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import Ledger, predict
from kvtop.sources.hub import load_model
from tests.data_paths import CONFIGS, DATA

FLAG_ROWS = DATA / "engine_diff" / "vllm-0.33.0.flags.json"
CONFIG_FOLDERS = (CONFIGS, DATA / "engine_diff" / "configs")  # the harness's order (benchmarks/engine_diff/cases.py)


@cache
def _engine_row(config: str, variant: str) -> dict[str, Any]:
    rows = json.loads(FLAG_ROWS.read_text())["results"]
    return next(r for r in rows if r["config"] == config and r["variant"] == variant and r["status"] == "ok")


def _plan(config: str, row: dict[str, Any]) -> Ledger:
    flags = [
        "--tp", str(row["tp"]), "--kv-cache-dtype", row["kv_dtype"], "--max-model-len", str(row["max_model_len"]),
        "--engine-version", "0.33.0", "--kv-cache-memory-bytes", str(row["budget_bytes"]), *row["flags"],
    ]  # fmt: skip
    path = next(folder / f"{config}.json" for folder in CONFIG_FOLDERS if (folder / f"{config}.json").exists())
    model = load_model(str(path))
    return predict(
        model, parse_flags("vllm", flags), gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100",
        measured=MeasuredInputs(free_before_load_bytes=1 << 50),  # the run had no GPU (as the sweep says)
    )  # fmt: skip


@pytest.mark.parametrize(
    ("config", "block", "bytes_per_block", "num_blocks", "tokens"),
    [
        # Falcon-H1-0.5B TP 2: conv (24 × 64 + 2 × 2 groups × 128) / 2 × 3 × 2 B = 6,144 B and SSM 12 heads × 64 ×
        # 128 × 2 B (bf16, not fp32) = 196,608 B: 202,752 B; attention 1 KV head × 64 × 2 × 2 B = 256 B a token;
        # block 16 × cdiv(202,752, 16 × 256) = 800 (fp32 SSM would give 1,568)
        ("tiiuae--Falcon-H1-0.5B", 800, 7_372_800, 5_825, 2_651_022),
        ("ai21labs--AI21-Jamba-1.5-Mini", 80, 655_360, 65_536, 4_067_203),
        ("ibm-granite--granite-4.0-h-small.RECONSTRUCTED", 528, 4_325_376, 9_929, 1_161_976),
    ],
)
def test_mamba_state_of_a_model_without_nemotron_h_config_is_in_the_model_dtype(
    config: str, block: int, bytes_per_block: int, num_blocks: int, tokens: int
) -> None:
    """MambaStateDtypeCalculator: mamba_ssm_cache_dtype `auto` is the conv state's dtype (the model's, bf16);
    kvtop used NemotronH's float32 default for every Mamba2 / Mamba1 model."""
    row = _engine_row(config, "ctx4k")
    assert (row["block_size"], row["bytes_per_block"], row["num_blocks"], row["tokens_logged"]) == (
        block, bytes_per_block, num_blocks, tokens,
    )  # fmt: skip
    engine = _plan(config, row).engine
    blocks = engine.num_blocks or 0
    assert (engine.page_size, engine.kv_pool_bytes // blocks, blocks, engine.token_capacity) == (
        block, bytes_per_block, num_blocks, tokens,
    )  # fmt: skip


def test_nemotron_h_keeps_its_config_class_float32_default() -> None:
    """NemotronHForCausalLMConfig.update_mamba_ssm_cache_dtype: float32 where the config names none (vLLM 0.33):
    Nemotron-H-56B TP 2 keeps block 4,128 and 508 blocks of 84,541,440 B."""
    row = _engine_row("nvidia--Nemotron-H-56B-Base-8K", "ctx4k")
    engine = _plan("nvidia--Nemotron-H-56B-Base-8K", row).engine
    blocks = engine.num_blocks or 0
    assert (engine.page_size, engine.kv_pool_bytes // blocks, blocks) == (4_128, 84_541_440, 508)
    assert (row["block_size"], row["bytes_per_block"], row["num_blocks"]) == (4_128, 84_541_440, 508)
