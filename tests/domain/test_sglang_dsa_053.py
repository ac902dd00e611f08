"""SGLang 0.5.3's sizing of a DSA model (DeepSeek-V3.2), which sgl-project/sglang#11309 changed in 0.5.3.post1.

0.5.3's server_args.py set `mem_fraction_static = 0.8` for a DeepSeek NSA model over the one given, and its
model_runner.py `profile_max_num_token` divided the budget by (kv_lora_rank + qk_rope_head_dim) × layers × the KV
dtype's size alone: (512 + 64) × 61 × 1 B = 35,136 B at FP8, the indexer's keys left out. 0.5.3.post1 dropped the
0.8 and added the indexer: (576 + 128 + 128 // 128 × 4) × 61 = 43,188 B (both read in the wheels on PyPI).

The harness's budget (tests/domain/test_sglang_engine_rows.py): 80 GiB free before the weights load, 60 GiB
after, --mem-fraction-static 0.75. The #11309 thread's two starts on 8 × B200 (`--tp 8 --dp 8
--enable-dp-attention`, FP8 KV) show the same two rules: 'KV Cache is allocated. #tokens: 1462784, KV size:
54.52 GB' on main (54.52 GiB ÷ 1,462,784 = 40,018 B: the 656-B rows without the indexer) and '#tokens: 975424,
KV size: 43.67 GB' with the change (48,072 B: 61 × (656 + 132)).
"""

from __future__ import annotations

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_model
from tests.data_paths import CONFIGS

BUDGET = MeasuredInputs(free_before_load_bytes=80 * GIB, free_after_load_bytes=60 * GIB)
DSV32 = load_model(str(CONFIGS / "deepseek-ai--DeepSeek-V3.2.json"))


def plan(version: str) -> Ledger:
    argv = ["--tp", "8", "--dp", "8", "--enable-dp-attention", "--kv-cache-dtype", "fp8_e4m3"]
    argv += ["--context-length", "32768", "--mem-fraction-static", "0.75", "--engine-version", version]
    settings = parse_flags("sglang", argv)
    return predict(DSV32, settings, gpu_total_bytes=gpu_total_bytes("B200"), gpu_name="B200", measured=BUDGET)


def test_0_5_3_fixes_the_fraction_at_0_8_and_leaves_the_indexer_out_of_the_cell() -> None:
    """rest = 60 − 80 × (1 − 0.8) = 44 GiB; 44 GiB // 35,136 B = 1,344,618 → 1,344,576 in pages of 64."""
    ledger = plan("0.5.3")
    assert ledger.engine.memory_fraction == 0.8
    assert ledger.token_capacity == 1_344_576
    assert ledger.kv_bytes_per_token == 61 * (656 + 132)  # the pool still allocates the indexer's keys


def test_0_5_3_post1_takes_the_given_fraction_and_counts_the_indexer() -> None:
    """rest = 60 − 80 × 0.25 = 40 GiB; 40 GiB // 43,188 B = 994,475 → 994,432 in pages of 64."""
    ledger = plan("0.5.3.post1")
    assert ledger.engine.memory_fraction == 0.75
    assert ledger.token_capacity == 994_432
