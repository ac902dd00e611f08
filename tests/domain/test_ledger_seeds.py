"""The seeds' figures, exactly: per-rank weights, KV bytes per token, and vLLM's capacity."""

from __future__ import annotations

import json

import pytest

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model_config import model_from_config
from kvtop.domain.wording import GIB
from tests.conftest import CONFIGS

H100 = 81559 << 20


def load(name: str):
    return model_from_config(json.loads((CONFIGS / name).read_text()), source=name)


@pytest.mark.parametrize(("tp", "kv_per_token"), [(4, 81_920), (8, 40_960), (16, 40_960)])
def test_llama3_70b_kv_heads_stop_dividing_at_one_per_rank(tp: int, kv_per_token: int) -> None:
    ledger = predict(
        load("meta-llama--Meta-Llama-3-70B.json"),
        parse_flags("sglang", ["--tp", str(tp)]),
        gpu_total_bytes=H100,
    )
    assert ledger.kv_bytes_per_token == kv_per_token  # 80 layers × max(1, 8 ÷ tp) heads × 256 × 2 B


def test_llama3_70b_tp8_weights_per_rank() -> None:
    ledger = predict(
        load("meta-llama--Meta-Llama-3-70B.json"), parse_flags("sglang", ["--tp", "8"]), gpu_total_bytes=H100
    )
    # 70,553,706,496 params × 2 B ÷ 8, plus the norms (1,318,912 params) whole on every rank
    assert ledger.weights_bytes == 70_553_706_496 * 2 // 8 + 1_318_912 * 2 * 7 // 8
    assert ledger.weights_bytes == 17_640_734_720


@pytest.mark.parametrize("tp", [1, 2, 4, 8])
@pytest.mark.parametrize(("dtype", "per_token"), [("bf16", 70_272), ("fp8_e4m3", 35_136)])
def test_deepseek_v3_mla_latent_is_never_divided_by_tp(tp: int, dtype: str, per_token: int) -> None:
    settings = parse_flags("sglang", ["--tp", str(tp), "--kv-cache-dtype", dtype])
    ledger = predict(load("deepseek-ai--DeepSeek-V3.json"), settings, gpu_total_bytes=143771 << 20)
    assert ledger.kv_bytes_per_token == per_token  # 61 layers × (512 + 64) × bytes


def test_deepseek_v3_ep8_holds_32_routed_experts_per_rank() -> None:
    ledger = predict(
        load("deepseek-ai--DeepSeek-V3.json"),
        parse_flags("sglang", ["--tp", "8", "--ep", "8"]),
        gpu_total_bytes=143771 << 20,
    )
    rows = {row.component: row for row in ledger.ranks[0].weights.rows}
    experts = rows["routed_experts"]
    params = 58 * 32 * 3 * 7168 * 2048  # 58 MoE layers × 32 experts × 3 matrices
    assert experts.params == params == 81_738_596_352
    scales = 58 * 32 * 3 * (7168 // 128) * (2048 // 128) * 4  # fp32 per 128×128 block
    assert experts.bytes == params + scales
    assert "32 of 256 experts" in experts.note


def test_qwen25_7b_vllm_seed_holds_fewer_than_four_32k_requests() -> None:
    # the README's seed: 0.33.0's budget (the share of the total), pinned; 0.34.0 also takes the free memory at start
    settings = parse_flags("vllm", ["--gpu-memory-utilization", "0.9", "--max-model-len", "32768",
                                    "--engine-version", "0.33.0"])  # fmt: skip
    measured = MeasuredInputs(weights_bytes=15 * GIB, non_kv_bytes=2 * GIB)
    ledger = predict(
        load("Qwen--Qwen2.5-7B-Instruct.json"), settings, gpu_total_bytes=24 * GIB, measured=measured
    )
    assert ledger.kv_bytes_per_token == 57_344  # 28 layers × 4 heads × 256 × 2 B = 56 KiB
    available = -(-24 * GIB * 9 // 10) - 17 * GIB  # ceil(24 GiB × 0.9) − 15 GiB − 2 GiB ≈ 4.6 GiB
    assert ledger.engine.kv_budget_bytes == available
    blocks = available // (16 * 57_344)
    assert ledger.engine.num_blocks == blocks == 5383
    assert ledger.token_capacity == int(blocks / 2048 * 32768) == 86_128
    assert ledger.engine.max_concurrency == pytest.approx(2.6284, abs=1e-4)
    assert ledger.token_capacity < 4 * 32768


# PR #38284's 0.92 is in the v0.20.0 sdist (CacheConfig), v0.19.1 still has 0.9 (docs/engines/vllm.md §2); 0.34.0's
# unstated 1.0 under the extensible KV cache is tested in tests/engines/vllm (extensible_kv.utilization_default)
@pytest.mark.parametrize(("version", "utilization"), [("0.19.1", 0.9), ("v0.20.0", 0.92), ("0.33.0", 0.92)])
def test_vllm_default_utilization_follows_the_engine_era(version: str | None, utilization: float) -> None:
    flags = ["--max-model-len", "32768"] + (["--engine-version", version] if version else [])
    ledger = predict(
        load("Qwen--Qwen2.5-7B-Instruct.json"), parse_flags("vllm", flags), gpu_total_bytes=24 * GIB
    )
    assert ledger.engine.memory_fraction == utilization
    assert ledger.engine.steps[1].bytes == -(
        -24 * GIB * round(utilization * 100) // 100
    )  # ceil(total × util)
