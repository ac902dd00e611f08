"""The planner's token change (`Ledger.token_change_from`): the after plan's tokens per rank less the before's."""

from __future__ import annotations

from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import Ledger, predict
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS

H100 = 81559 << 20  # 85,520,809,984 B (nvidia-smi's 81,559 MiB)
LLAMA = str(CONFIGS / "meta-llama--Meta-Llama-3-70B.json")


def _ledger(config: str, *flags: str) -> Ledger:
    return predict(load_model(config), parse_flags("vllm", list(flags)), gpu_total_bytes=H100, gpu_name="H100")


def test_a_lower_memory_share_loses_its_bytes_as_tokens() -> None:
    """vLLM's budget is utilization × total less what the profile holds: 0.90 → 0.85 takes 0.05 × 85,520,809,984 B =
    4,276,040,499 B, at 80 layers × 1 KV head × 128 × 2 (K, V) × 2 B = 40,960 B a token on a TP 8 rank of Llama-3-70B
    104,395.5 tokens. vLLM 0.34.0 (the latest rules) keeps its blocks in whole 2 MiB granules of each layer's region
    (v1/worker/extensible_kv_cache.py:304-318): 2 MiB ÷ (64 tokens × 512 B a layer) = 64 blocks, so 4,096 tokens a
    step on each side (so within one step)."""
    before = _ledger(LLAMA, "--tp", "8", "--gpu-memory-utilization", "0.9")
    after = _ledger(LLAMA, "--tp", "8", "--gpu-memory-utilization", "0.85")
    change = after.token_change_from(before)
    assert change is not None and change < 0
    assert abs(change + 0.05 * H100 / 40_960) < 4_096
    assert before.token_change_from(before) == 0


def test_an_attention_free_plan_has_no_token_change() -> None:
    """Falcon-Mamba's capacity is requests (its state per request), so no token figure changes."""
    mamba = _ledger(str(CONFIGS / "tiiuae--falcon-mamba-7b.json"))
    assert mamba.request_capacity is not None
    assert mamba.token_change_from(mamba) is None
