"""Batches in flight under pipeline parallelism (VllmConfig.max_concurrent_batches): with async scheduling
vLLM 0.33.0's V2 model runner keeps pp + 1 batches, so a sliding-window or chunked-local group holds blocks for
(pp + 1) × max_num_batched_tokens tokens. Expected figures are vLLM 0.33.0's own
(tests/data/engine_diff/vllm-0.33.0.flags.json); the other releases' are hand arithmetic written here."""

from __future__ import annotations

import pytest

from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.batching import concurrent_batches
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.launch import parse_flags
from kvtop.sources.hub import load_model
from tests.data_paths import CONFIGS
from tests.domain.vllm_engine_cases import engine_figures, figures, flag_plan, flag_row

MISTRAL = "mistralai--Mistral-7B-v0.1"  # sliding window 4,096, dense
GPT_OSS = "openai--gpt-oss-20b"  # sliding window 128 on half the layers, MoE
SCOUT = "meta-llama--Llama-4-Scout-17B-16E-Instruct"  # chunked local attention, MoE
GEMMA = "google--gemma-3-27b-it"


@pytest.mark.parametrize("config", [MISTRAL, GPT_OSS, SCOUT, GEMMA, "openai--gpt-oss-120b"])
def test_pp2_keeps_three_batches_in_flight_as_vllm_0_33_does(config: str) -> None:
    row = flag_row("pp2", config)
    assert (row["model_runner"], row["max_in_flight_tokens"]) == ("V2", 3 * 8192)
    ledger = flag_plan("pp2", config)
    assert figures(ledger) == engine_figures(row)
    assert any(step.label == "tokens in flight: 3 × max_num_batched_tokens 8,192" for step in ledger.engine.steps)


def test_mistral_pp2_by_hand() -> None:
    """81,920 blocks; cdiv(min(4,095 + 24,576, 32,768), 16) + 1 = 1,793 blocks a request: vLLM logs 1,497,130
    tokens (with the V1 runner's 2 batches, cdiv(4,095 + 16,384, 16) + 1 = 1,281 blocks: 2,095,514)."""
    ledger = flag_plan("pp2", MISTRAL)
    assert ledger.engine.num_blocks == 81920
    assert ledger.engine.token_capacity == int(81920 / 1793 * 32768) == 1497130


def _in_flight(ledger) -> str:
    return next(step.label for step in ledger.engine.steps if step.label.startswith("tokens in flight"))


def test_the_runner_by_release() -> None:
    """v0.13.0: async scheduling off (pp batches); the V2-for-dense-models era (PR #44443, read as v0.25.0)
    keeps pp + 1 for a dense model and pp for an MoE model (the V1 runner turns async scheduling off)."""
    launch = parse_flags("vllm", ["--pp", "2"])
    dense, moe = load_model(str(CONFIGS / f"{MISTRAL}.json")), load_model(str(CONFIGS / f"{GPT_OSS}.json"))
    assert concurrent_batches(launch, 2, ResolvedVersion(text="0.13.0"), dense)[0] == 2
    assert concurrent_batches(launch, 2, ResolvedVersion(text="0.25.0"), dense)[0] == 3
    assert concurrent_batches(launch, 2, ResolvedVersion(text="0.25.0"), moe)[0] == 2


def test_before_v0_26_a_window_counts_one_batch_in_flight() -> None:
    """The batches matter to a windowed spec only from v0.26.0: before, SlidingWindowSpec.max_memory_usage_bytes
    adds scheduler_config.max_num_batched_tokens alone (v0.13.0 wheel kv_cache_interface.py:226-233, v0.25.1 :561);
    v0.26.0 :584 adds VllmConfig.max_in_flight_tokens = max_concurrent_batches × max_num_batched_tokens."""
    one = "tokens in flight: 1 × max_num_batched_tokens 8,192"
    assert _in_flight(flag_plan("pp2", MISTRAL, version="0.13.0")) == one
    assert _in_flight(flag_plan("pp2", MISTRAL, version="0.25.0")) == one
    assert _in_flight(flag_plan("pp2", MISTRAL, version="0.26.0")) == "tokens in flight: 3 × max_num_batched_tokens 8,192"


def test_explicit_async_scheduling_under_the_v1_runner_at_pp2_is_not_modelled() -> None:
    with pytest.raises(UnsupportedModelError, match="V1 model runner"):
        flag_plan("pp2", GPT_OSS, "0.25.0", "--async-scheduling")
