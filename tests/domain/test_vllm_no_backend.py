"""Launches for which vLLM finds no attention backend (CudaPlatform.get_attn_backend_cls: 'No valid attention
backend found for cuda'): MLA with fp8_e5m2 KV, and DeepSeek sparse MLA on Hopper with blocks no sparse backend
takes. kvtop refuses them at launch, naming the flag; the engine outcomes are vLLM 0.33.0's own
(tests/data/engine_diff/vllm-0.33.0.flags.json)."""

from __future__ import annotations

import pytest

from kvtop.domain.launch import parse_flags
from kvtop.domain.launch_check import launch_refusals
from kvtop.domain.ledger import predict
from kvtop.sources.hub import load_model
from tests.data_paths import CONFIGS
from tests.domain.vllm_engine_cases import engine_figures, figures, flag_plan, flag_row

MLA = ["deepseek-ai--DeepSeek-V3", "deepseek-ai--DeepSeek-R1", "moonshotai--Kimi-K2-Instruct",
       "deepseek-ai--DeepSeek-V3.2", "zai-org--GLM-5"]  # fmt: skip
SPARSE = ["deepseek-ai--DeepSeek-V3.2", "nvidia--DeepSeek-V3.2-NVFP4", "zai-org--GLM-5"]


@pytest.mark.parametrize("config", MLA)
def test_mla_with_fp8_e5m2_kv_is_refused_as_vllm_refuses_it(config: str) -> None:
    row = flag_row("fp8_e5m2", config)
    assert row["status"] == "refused" and "kv_cache_dtype=fp8_e5m2" in row["message"]
    assert "No valid attention backend found for cuda" in row["message"]
    (refusal,) = launch_refusals(flag_plan("fp8_e5m2", config))
    assert refusal.field == "--kv-cache-dtype"
    assert refusal.message.startswith("vLLM 0.33.0 has no attention backend for MLA with fp8_e5m2 KV on H100")


@pytest.mark.parametrize("config", SPARSE)
def test_sparse_mla_with_32_token_blocks_on_hopper_is_refused(config: str) -> None:
    row = flag_row("page32", config)
    assert row["status"] == "refused" and "block_size=32" in row["message"] and "use_sparse=True" in row["message"]
    (refusal,) = launch_refusals(flag_plan("page32", config))
    assert refusal.field == "--block-size" and "32-token blocks on H100 (sm90)" in refusal.message


def test_sparse_mla_with_64_token_blocks_runs_with_vllms_figures() -> None:
    config = "deepseek-ai--DeepSeek-V3.2"
    ledger = flag_plan("page64", config)
    assert launch_refusals(ledger) == ()
    assert figures(ledger) == engine_figures(flag_row("page64", config))


def test_plain_attention_with_fp8_e5m2_and_plain_mla_with_32_token_blocks_are_not_refused() -> None:
    assert launch_refusals(flag_plan("fp8_e5m2", "meta-llama--Llama-3.1-8B")) == ()
    deepseek_v3 = flag_plan("page32", "deepseek-ai--DeepSeek-V3")  # FLASH_ATTN_MLA takes MultipleOf(16)
    assert launch_refusals(deepseek_v3) == ()
    assert figures(deepseek_v3) == engine_figures(flag_row("page32", "deepseek-ai--DeepSeek-V3"))


def test_vllm_0_13_forced_the_sparse_block_to_64_and_an_unnamed_gpu_refuses_nothing() -> None:
    """v0.13.0's CudaPlatform.check_and_update_config set block 64 for sparse MLA (no refusal); without a GPU
    name vLLM's backend cannot be known, so nothing is refused."""
    assert launch_refusals(flag_plan("page32", "deepseek-ai--DeepSeek-V3.2", version="0.13.0")) == ()
    model = load_model(str(CONFIGS / "deepseek-ai--DeepSeek-V3.json"))
    settings = parse_flags("vllm", ["--tp", "8", "--kv-cache-dtype", "fp8_e5m2", "--engine-version", "0.33.0"])
    assert launch_refusals(predict(model, settings, gpu_total_bytes=80 << 30, gpu_name=None)) == ()
