"""SGLang's rules where its own sizing code showed kvtop wrong (issue 20, docs/fidelity.md S1–S9).

The expected figures are the engine's: SGLang 0.5.23 and 0.5.6.post2 run over the test configs by
benchmarks/engine_diff (tests/data/engine_diff/sglang-<version>.json, each row read back here), with
the harness's budget: 80 GiB free before the weights load, 60 GiB after, --mem-fraction-static 0.75
(rest 40 GiB = 42,949,672,960 B). Releases between the two are checked by hand arithmetic from the rule
each era names (docs/engines/sglang.md §4.2.1, §4.4, §4.5, §6.1.1, §6.6.1, §8.4.1).
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.errors import InputError
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.model import ModelSpec
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_model
from tests.data_paths import CONFIGS, DATA

GPU = {"sm80": "A100-80GB", "sm90": "H100", "sm100": "B200"}  # the harness's --gpu per generation
BUDGET = MeasuredInputs(free_before_load_bytes=80 * GIB, free_after_load_bytes=60 * GIB)
DSV32, QWEN3_NEXT = "deepseek-ai--DeepSeek-V3.2", "Qwen--Qwen3-Next-80B-A3B-Thinking"
NEMOTRON_H = "nvidia--Nemotron-H-56B-Base-8K"
GEMMA3, SCOUT = "google--gemma-3-27b-it", "meta-llama--Llama-4-Scout-17B-16E-Instruct"
GPT_OSS, QWEN3_30B_FP8 = "openai--gpt-oss-120b", "Qwen--Qwen3-30B-A3B-FP8"
LLAMA_MODELOPT_FP8, QWEN3_NVFP4 = "nvidia--Llama-3.1-70B-Instruct-FP8", "nvidia--Qwen3-235B-A22B-NVFP4"


@cache
def model(config: str) -> ModelSpec:
    return load_model(str(CONFIGS / f"{config}.json"))


@cache
def _fixture(version: str) -> list[dict[str, Any]]:
    fixture = json.loads((DATA / "engine_diff" / f"sglang-{version}.json").read_text())
    rows: list[dict[str, Any]] = fixture["results"]
    return rows


def engine_row(version: str, config: str, tp: int, kv: str, gpu: str) -> dict[str, Any]:
    """SGLang's own result for one run of the sweep (kv: `auto` or `fp8`, the fixture's `fp8_e4m3`)."""
    key = (config, tp, "fp8_e4m3" if kv == "fp8" else kv, gpu)
    return next(r for r in _fixture(version) if (r["config"], r["tp"], r["kv_dtype"], r["gpu"]) == key)


def plan(version: str, config: str, tp: int, kv: str, gpu: str, *flags: str) -> Ledger:
    """kvtop with the harness's inputs (its context: 32,768 or the model's own limit, as the row says)."""
    context = engine_row("0.5.23", config, tp, kv, gpu)["max_model_len"]
    argv = ["--tp", str(tp), "--kv-cache-dtype", "fp8_e4m3" if kv == "fp8" else "auto"]
    argv += ["--context-length", str(context), "--mem-fraction-static", "0.75", "--engine-version", version]
    settings = parse_flags("sglang", [*argv, *flags])
    name = GPU[gpu]
    total = gpu_total_bytes(name)
    return predict(model(config), settings, gpu_total_bytes=total, gpu_name=name, measured=BUDGET)


# S1 — DeepSeek-V3.2 with FP8 KV (§6.1.1)


def test_dsa_fp8_on_blackwell_keeps_the_raw_latent_in_0_5_23() -> None:
    """trtllm DSA (FP8's default on SM100) stores kv_lora_rank + rope = 576 B: 61 × (576 + 132) = 43,188 B."""
    for kv in ("auto", "fp8"):  # `auto` is FP8 for DSA on Blackwell
        row, ledger = engine_row("0.5.23", DSV32, 1, kv, "sm100"), plan("0.5.23", DSV32, 1, kv, "sm100")
        assert (row["max_total_num_tokens"], row["cell_size"]) == (994_432, 43_188)
        assert (ledger.token_capacity, ledger.kv_bytes_per_token) == (994_432, 43_188)


def test_dsa_fp8_on_hopper_is_the_656_byte_layout_in_0_5_23() -> None:
    """flashmla_kv: 512 fp8 + 4 × 4 B scales + 64 × 2 B rope = 656 B; 61 × (656 + 132) = 48,068 B."""
    row, ledger = engine_row("0.5.23", DSV32, 1, "fp8", "sm90"), plan("0.5.23", DSV32, 1, "fp8", "sm90")
    assert (row["max_total_num_tokens"], row["cell_size"]) == (893_504, 48_068)
    assert (ledger.token_capacity, ledger.kv_bytes_per_token) == (893_504, 48_068)


def test_dsa_fp8_in_0_5_6_sizes_by_the_raw_latent_on_every_gpu() -> None:
    """0.5.6's profile_max_num_token divides by (576 + 132) × 61 = 43,188 B, though NSATokenToKVPool
    allocates 656-B rows: 40 GiB // 43,188 = 994,475 → 994,432 in pages of 64. 0.5.6 turned DP attention on for a DSA
    model (server_args.py:950), so the launch the engine ran says so (dsa.DSA_DP_ATTENTION_ERAS)."""
    for gpu in ("sm80", "sm90", "sm100"):
        assert engine_row("0.5.6.post2", DSV32, 8, "fp8", gpu)["max_total_num_tokens"] == 994_432
        ledger = plan("0.5.6.post2", DSV32, 8, "fp8", gpu, "--enable-dp-attention")
        assert ledger.token_capacity == 994_432
        assert ledger.kv_bytes_per_token == 48_068  # the pool's own rows
        assert ledger.engine.kv_pool_bytes == (994_432 + 64) * 48_068


def test_dsa_fp8_raw_layout_on_blackwell_from_0_5_10() -> None:
    """_set_default_nsa_backends: FP8 on SM100 → trtllm from 0.5.10 (0.5.10rc0: only at dp_size 1)."""
    assert plan("0.5.9", DSV32, 8, "fp8", "sm100").kv_bytes_per_token == 48_068
    assert plan("0.5.10", DSV32, 8, "fp8", "sm100").kv_bytes_per_token == 43_188
    assert plan("0.5.10rc0", DSV32, 8, "fp8", "sm100").kv_bytes_per_token == 43_188
    dp = plan("0.5.10rc0", DSV32, 8, "fp8", "sm100", "--dp", "8", "--enable-dp-attention")
    assert dp.kv_bytes_per_token == 48_068
    # 0.5.16 still sizes by the latent where the pool is 656 B (Hopper); 0.5.17 by the pool
    assert plan("0.5.16", DSV32, 8, "fp8", "sm90").token_capacity == 994_432
    assert plan("0.5.17", DSV32, 8, "fp8", "sm90").token_capacity == 893_504  # 40 GiB // 48,068 → pages of 64


# S4 — Mamba slots per running request (§4.2.1)


def test_mamba_hybrids_take_five_slots_per_request_in_0_5_23() -> None:
    """extra_buffer with the overlap schedule: 3 + 2; max running requests = max_mamba_cache_size // 5."""
    for config, tp, expected in ((QWEN3_NEXT, 8, 421), (QWEN3_NEXT, 1, 52), (NEMOTRON_H, 8, 35)):
        row = engine_row("0.5.23", config, tp, "auto", "sm90")
        assert row["max_running_requests"] == expected == row["max_mamba_cache_size"] // 5
        assert plan("0.5.23", config, tp, "auto", "sm90").engine.max_running_requests == expected


def test_mamba_ratio_is_three_before_0_5_14_and_four_under_pp() -> None:
    """0.5.13: `auto` is no_buffer (3). Under PP the strategy is chosen before PP turns the overlap
    schedule off: extra_buffer without overlap, 3 + 1."""
    slots = _state_slots(plan("0.5.13", QWEN3_NEXT, 8, "auto", "sm90"))
    assert plan("0.5.13", QWEN3_NEXT, 8, "auto", "sm90").engine.max_running_requests == slots // 3
    pp = plan("0.5.23", QWEN3_NEXT, 4, "auto", "sm90", "--pp", "2")
    assert pp.engine.max_running_requests == _state_slots(pp) // 4


def test_disable_overlap_schedule_takes_a_hybrids_tracking_slots() -> None:
    """`--disable-overlap-schedule`: `auto` picks extra_buffer only where the page is over 1 (v0.5.23
    arg_groups/overrides.py:477-486), with one tracking slot, not two (mem_cache/allocation_sizing.py:11-19):
    3 slots per request at page 1 (no_buffer), 3 + 1 at page 64; the token pool is the one without the flag."""
    bare = plan("0.5.23", QWEN3_NEXT, 8, "auto", "sm90")
    page1 = plan("0.5.23", QWEN3_NEXT, 8, "auto", "sm90", "--disable-overlap-schedule")
    assert page1.token_capacity == bare.token_capacity
    assert page1.engine.max_running_requests == _state_slots(page1) // 3 > bare.engine.max_running_requests
    paged = plan("0.5.23", QWEN3_NEXT, 8, "auto", "sm90", "--disable-overlap-schedule", "--page-size", "64")
    assert paged.engine.page_size == 64
    assert paged.engine.max_running_requests == _state_slots(paged) // 4


def test_mamba_slots_before_0_5_17_leave_out_the_padding_slot() -> None:
    """0.5.6: K = share // per_req = 263 (Qwen3-Next TP1); 0.5.23: (share − per_req) // per_req = 262.
    Both charge 263 slots, so the token counts agree (920,754)."""
    old = plan("0.5.6.post2", QWEN3_NEXT, 1, "auto", "sm90")
    new = plan("0.5.23", QWEN3_NEXT, 1, "auto", "sm90")
    assert engine_row("0.5.6.post2", QWEN3_NEXT, 1, "auto", "sm90")["max_mamba_cache_size"] == 263
    assert engine_row("0.5.23", QWEN3_NEXT, 1, "auto", "sm90")["max_mamba_cache_size"] == 262
    assert (_state_slots(old), _state_slots(new)) == (263, 262)
    assert old.token_capacity == new.token_capacity == 920_754


def _state_slots(ledger: Ledger) -> int:
    """Slots of the state pool (it allocates slots + 1 rows)."""
    per_request = ledger.ranks[0].kv.state_bytes_per_request
    return ledger.engine.state_pool_bytes // per_request - 1


# S5 — Gemma-3 and Llama-4 are text-only to SGLang (§4.4)


def test_gemma3_and_llama4_get_no_multimodal_reserve() -> None:
    """40 GiB // 63,488 B = 676,500 (Gemma-3 TP4 FP8): no 100 MiB taken off for a VLM cache."""
    for version, config, tp, kv, expected in (
        ("0.5.23", GEMMA3, 4, "fp8", 676_500),
        ("0.5.23", SCOUT, 8, "auto", 2_056_031),
    ):
        assert engine_row(version, config, tp, kv, "sm80")["max_total_num_tokens"] == expected
        assert plan(version, config, tp, kv, "sm80").token_capacity == expected


def test_enable_multimodal_brings_the_reserve_back() -> None:
    """(40 GiB − 100 MiB) = 42,844,815,360 B // 63,488 = 674,849 (the figure kvtop gave before)."""
    assert plan("0.5.23", GEMMA3, 4, "fp8", "sm80", "--enable-multimodal").token_capacity == 674_849


# S7, S9 — which releases keep GPT-OSS and Llama-4 in one full pool (§8.4.1)


def test_gpt_oss_has_no_swa_pool_in_0_5_6() -> None:
    """disable_hybrid_swa_memory: all 36 layers × 8 heads × 128 × 1 B in one pool = 9,216 B (TP4 FP8)."""
    row = engine_row("0.5.6.post2", GPT_OSS, 4, "fp8", "sm80")
    assert (row["is_hybrid_swa"], row["max_total_num_tokens"]) == (False, 4_660_337)
    ledger = plan("0.5.6.post2", GPT_OSS, 4, "fp8", "sm80")
    assert (ledger.token_capacity, ledger.engine.swa_token_capacity) == (4_660_337, None)


def test_gpt_oss_swa_pool_by_release_and_gpu() -> None:
    """0.5.8–0.5.9 turn it off only with trtllm_mha (SM100's default); 0.5.10rc0 on keeps the SWA pool."""
    assert plan("0.5.8", GPT_OSS, 4, "fp8", "sm100").engine.swa_token_capacity is None
    assert plan("0.5.8", GPT_OSS, 4, "fp8", "sm90").engine.swa_token_capacity is not None
    assert plan("0.5.10rc0", GPT_OSS, 4, "fp8", "sm100").engine.swa_token_capacity is not None
    assert plan("0.5.23", GPT_OSS, 4, "fp8", "sm80").token_capacity == 5_178_153  # the engine's 0.5.23 row
    assert engine_row("0.5.23", GPT_OSS, 4, "fp8", "sm80")["max_total_num_tokens"] == 5_178_153


def test_llama4_is_one_full_pool_before_0_5_8() -> None:
    """48 layers × 8 heads / TP4 × 128 × 2 (K, V) × 1 B = 24,576 B: 40 GiB // 24,576 = 1,747,626."""
    row = engine_row("0.5.6.post2", SCOUT, 4, "fp8", "sm80")
    assert (row["is_hybrid_swa"], row["max_total_num_tokens"]) == (False, 1_747_626)
    assert plan("0.5.6.post2", SCOUT, 4, "fp8", "sm80").token_capacity == 1_747_626
    assert plan("0.5.8", SCOUT, 4, "fp8", "sm80").engine.swa_token_capacity is not None


# S6, S8 — launches SGLang refuses (§4.5)


def test_block_fp8_moe_shard_off_the_128_blocks_is_refused() -> None:
    """Qwen3-30B-A3B-FP8: moe_intermediate_size 768 ÷ TP 4 = 192, not a multiple of 128 (0.5.6 refuses it
    in ModelRunner; 0.5.23 when it builds the MoE layers). 768 ÷ 2 = 384 = 3 × 128 runs."""
    message = engine_row("0.5.6.post2", QWEN3_30B_FP8, 4, "auto", "sm90")["message"]
    assert "(moe_intermediate_size=768 / moe_tp_size=4) % weight_block_size_n=128" in message
    for version in ("0.5.6.post2", "0.5.23"):
        with pytest.raises(InputError) as err:
            plan(version, QWEN3_30B_FP8, 4, "auto", "sm90")
        assert err.value.field == "--tp" and "768 ÷ (tp 4 ÷ ep 1) = 192" in str(err.value)
        assert plan(version, QWEN3_30B_FP8, 2, "auto", "sm90").engine.fits


def test_weight_formats_the_gpu_cannot_run_are_refused() -> None:
    """ModelOpt FP8 needs SM89; ModelOpt NVFP4 SM100 until 0.5.13 lowered it to SM80."""
    refused = (
        ("0.5.23", LLAMA_MODELOPT_FP8, "sm80", "modelopt_fp8"),
        ("0.5.6.post2", QWEN3_NVFP4, "sm90", "modelopt_fp4"),
        ("0.5.6.post2", QWEN3_NVFP4, "sm80", "modelopt_fp4"),
        ("0.5.12.post1", QWEN3_NVFP4, "sm90", "modelopt_fp4"),
    )
    for version, config, gpu, name in refused:
        if version in ("0.5.23", "0.5.6.post2"):
            assert "Minimum capability" in engine_row(version, config, 4, "auto", gpu)["message"]
        with pytest.raises(InputError) as err:
            plan(version, config, 4, "auto", gpu)
        assert err.value.field == "--gpu" and name in str(err.value)
    assert engine_row("0.5.23", QWEN3_NVFP4, 4, "auto", "sm90")["status"] == "ok"
    assert plan("0.5.23", QWEN3_NVFP4, 4, "auto", "sm90").engine.fits
    assert plan("0.5.13", QWEN3_NVFP4, 4, "auto", "sm80").engine.fits
    assert plan("0.5.6.post2", LLAMA_MODELOPT_FP8, 4, "auto", "sm90").engine.fits


# S2 — Nemotron-H's page on Blackwell (§6.6.1)


def test_nemotron_h_pages_by_64_on_blackwell_where_trtllm_mha_runs() -> None:
    """40 GiB less the Mamba share, // 40,960 B = 558,407 tokens; trtllm_mha floors it to 558,400."""
    for version in ("0.5.23", "0.5.6.post2"):
        row = engine_row(version, NEMOTRON_H, 1, "auto", "sm100")
        assert (row["page_size"], row["max_total_num_tokens"]) == (64, 558_400)
        ledger = plan(version, NEMOTRON_H, 1, "auto", "sm100")
        assert (ledger.engine.page_size, ledger.token_capacity) == (64, 558_400)
    # 0.5.7 … 0.5.18 choose flashinfer for it on SM100: page 1
    assert plan("0.5.12", NEMOTRON_H, 1, "auto", "sm100").engine.page_size == 1
    assert engine_row("0.5.23", QWEN3_NEXT, 1, "auto", "sm100")["page_size"] == 1  # triton
    assert plan("0.5.23", QWEN3_NEXT, 1, "auto", "sm100").engine.page_size == 1
