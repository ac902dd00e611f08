"""A rank's exchange rate (tokens per GiB and per GB of KV) is the domain's (`RankLedger.tokens_per_gib`,
`tokens_per_gb`), the one figure the rank ledger screen, `plan` and the header read.

Expected values are arithmetic from the models' configs, written out here, not read back from the ledger:
Llama-3.1-8B holds 32 layers × 8 KV heads × 128 head dim × (K, V) × 2 B (bf16) = 131,072 B per token on one
GPU, so one GiB (2**30 B) holds 2**30 / 131,072 = 8,192 tokens and one GB (10**9 B) 10**9 / 131,072 =
7,629.39453125. Llama-3.1-70B at TP 8: 80 layers × (8 KV heads / 8 ranks) × 128 × 2 × 2 B = 40,960 B per token
per rank, 26,214.4 tokens per GiB and 24,414.0625 per GB (the rank ledger screen's '26,214 tokens/GiB ·
24,414 tokens/GB'). DeepSeek-V4-Pro on SGLang 0.5.23: the engine's own cell, 10,115.25 B per full token
(tests/test_cli_plan_dsv4_cell.py), unrounded: 10**9 / 10,115.25 per GB.
"""

from __future__ import annotations

import pytest

from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger_values import Ledger, tokens_per
from kvtop.sources.hub import load_config_file
from tests.data_paths import CONFIGS


def _ledger(config: str, engine: str, gpu: str, *flags: str) -> Ledger:
    path = CONFIGS / config
    settings = parse_flags(engine, [*flags]).model_copy(update={"model": str(path)})
    found = planned_capacity(load_config_file(path), settings, gpu_total_bytes=gpu_total_bytes(gpu), gpu_name=gpu)
    return found.ledger


def test_one_gib_and_one_gb_of_llama_8b_kv_on_one_gpu() -> None:
    ledger = _ledger("meta-llama--Llama-3.1-8B.json", "vllm", "H100", "--engine-version", "0.19.0")
    (rank,) = ledger.ranks
    assert rank.kv_bytes_per_token == 32 * 8 * 128 * 2 * 2 == 131_072
    assert rank.tokens_per_gib == 8_192 == ledger.tokens_per_gib
    assert rank.tokens_per_gb == 7_629.39453125


def test_every_rank_of_a_tp8_70b_reads_the_screens_rate() -> None:
    ledger = _ledger("meta-llama--Llama-3.1-70B.json", "sglang", "H100", "--tp", "8")
    assert {r.kv_bytes_per_token for r in ledger.ranks} == {80 * 1 * 128 * 2 * 2} == {40_960}
    assert {r.tokens_per_gib for r in ledger.ranks} == {26_214.4} == {ledger.tokens_per_gib}
    assert {r.tokens_per_gb for r in ledger.ranks} == {24_414.0625}
    assert (f"{ledger.ranks[0].tokens_per_gib:,.0f}", f"{ledger.ranks[0].tokens_per_gb:,.0f}") == ("26,214", "24,414")


def test_an_engines_own_cell_is_the_rate_unrounded() -> None:
    ledger = _ledger("heldout/deepseek-ai--DeepSeek-V4-Pro.json", "sglang", "H200", "--engine-version", "0.5.23", "--tp", "8")
    cell = 10_115.25
    assert {r.kv_bytes_per_token for r in ledger.ranks} == {10_116}  # rounded up for the pool; the rate is not
    assert {r.tokens_per_gb for r in ledger.ranks} == {10**9 / cell}
    assert {r.tokens_per_gib for r in ledger.ranks} == {(1 << 30) / cell} == {ledger.tokens_per_gib}


def test_no_rate_reads_zero_not_a_division_by_zero() -> None:
    assert tokens_per(1 << 30, 0.0) == 0.0 and tokens_per(10**9, 40_960) == pytest.approx(24_414.0625)


def test_beside_the_model_is_the_rank_that_holds_the_most() -> None:
    """SGLang ≥ 0.5.18 keeps SGLANG_VLM_CACHE_SIZE_MB, 100 MiB by default, beside a multimodal model
    (mm_runtime_reservation_gb): 100 × 2**20 = 104,857,600 B on every rank, the planner's 'beside the model'. A
    text model on the same engine holds nothing beside it: 0."""
    gemma = _ledger("google--gemma-3-27b-it.json", "sglang", "H100", "--enable-multimodal")
    assert gemma.beside_model.bytes == 100 * 2**20 == 104_857_600
    assert _ledger("meta-llama--Llama-3.1-8B.json", "sglang", "H100").beside_model.bytes == 0
