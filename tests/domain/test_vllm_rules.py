"""vLLM's blocks per request (docs/engines/vllm.md §3), its default batch (§3), decode context parallel
(§3, §3.2) and the era of its `GPU KV cache size` print (§5 History), on real configs."""

from __future__ import annotations

import pytest

from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.batching import default_batch_limits
from kvtop.domain.engines.vllm.eras import token_print_rule
from kvtop.domain.errors import InputError, UnsupportedModelError
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.model import ModelSpec
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS

MIB = 1 << 20
H100_BYTES = 81_559 * MIB
H200_BYTES = 143_771 * MIB
A100_80GB_BYTES = 81_920 * MIB
L40S_BYTES = 46_068 * MIB


def _model(name: str) -> ModelSpec:
    return load_model(str(CONFIGS / name))


def _plan(config: str, flags: list[str], total: int, gpu: str) -> Ledger:
    return predict(_model(config), parse_flags("vllm", flags), gpu_total_bytes=total, gpu_name=gpu)


GPT_OSS = "openai--gpt-oss-120b.json"


@pytest.mark.parametrize(
    ("flags", "blocks_per_request", "tokens"),
    [
        # 12 full groups' worth: 8192 blocks; the window: cdiv(min(128 − 1 + in-flight, L), 16) + 1
        # one batch (--no-async-scheduling): cdiv(2175, 16) = 136, cdiv(32895, 16) = 2056, and at H100's
        # default 8192, cdiv(8319, 16) = 520
        (["--max-num-batched-tokens", "2048", "--no-async-scheduling"], 8192 + 136 + 1, 301_029),
        (["--max-num-batched-tokens", "32768", "--no-async-scheduling"], 8192 + 2056 + 1, 244_636),
        (["--no-async-scheduling"], 8192 + 520 + 1, 287_762),
        (["--max-num-batched-tokens", "2048", "--async-scheduling"], 8192 + 264 + 1, 296_473),  # 2 × 2048
        # async scheduling is on by default (§3): 2 × 8192 in flight, cdiv(16,511, 16) = 1,032
        ([], 8192 + 1032 + 1, 271_791),
    ],
)
def test_gpt_oss_window_blocks_follow_the_tokens_in_flight(
    flags: list[str], blocks_per_request: int, tokens: int
) -> None:
    # blocks of 16 under the share of the total: 0.33.0's figures, pinned (0.34.0: block 64, the extensible KV cache)
    engine = _plan(GPT_OSS, [*flags, "--engine-version", "0.33.0"], H100_BYTES, "H100").engine
    assert engine.num_blocks == 19_129
    assert engine.token_capacity == tokens == int(19_129 / blocks_per_request * 131_072)
    assert engine.steps[-1].label == f"tokens: int(blocks ÷ {blocks_per_request:,} × 131,072)"


def test_async_scheduling_at_pp_above_one_under_the_v1_runner_is_not_modelled() -> None:
    """v0.25.0 runs a MoE on the V1 model runner; the current release's V2 runner keeps pp + 1 batches
    (test_vllm_pp_batches). At v0.13.0 vLLM itself refuses async scheduling at PP > 1 (config/vllm.py:544-547)."""
    with pytest.raises(
        UnsupportedModelError, match=r"^--async-scheduling: .* at pp > 1 under the V1 model runner are not modelled$"
    ):
        _plan(GPT_OSS, ["--pp", "2", "--async-scheduling", "--engine-version", "0.25.0"], H100_BYTES, "H100")
    with pytest.raises(InputError, match="vLLM 0.13.0 refuses --async-scheduling at pipeline parallel size 2"):
        _plan(GPT_OSS, ["--pp", "2", "--async-scheduling", "--engine-version", "0.13.0"], H100_BYTES, "H100")


@pytest.mark.parametrize(
    ("total", "gpu", "limits"),
    [
        (H100_BYTES, "H100", (8192, 1024)),
        (H200_BYTES, "H200", (8192, 1024)),
        (A100_80GB_BYTES, "A100-80GB", (2048, 256)),  # ≥ 70 GiB but an A100
        (L40S_BYTES, "L40S", (2048, 256)),  # under 70 GiB
    ],
)
def test_default_batch_follows_the_gpu(total: int, gpu: str, limits: tuple[int, int]) -> None:
    assert default_batch_limits(total, gpu)[:2] == limits


def test_llama4_chunked_local_attention_has_no_window_minus_one_nor_extra_block() -> None:
    """12 full + 36 chunked layers ⇒ 1 full + 3 chunked groups of 12; chunk 8192 + 8192 in flight (one
    batch): cdiv(131,072, 16) + 3 × cdiv(16384, 16) = 11,264 blocks per request (the sliding-window rule
    gave 11,267). The vision model and projector hold 437,626,240 B per rank at TP 4 (test_vision_towers),
    2,226 blocks of 12 layers × 16,384 B fewer than the 115,153 without them."""
    # blocks of 16: 0.33.0's figures, pinned (0.34.0: block 64, the extensible KV cache)
    flags = ["--tp", "4", "--max-model-len", "131072", "--no-async-scheduling", "--engine-version", "0.33.0"]
    engine = _plan("meta-llama--Llama-4-Scout-17B-16E-Instruct.json", flags, H100_BYTES, "H100").engine
    assert engine.num_blocks == 112_927  # 115,153 less 2,226 ≈ 437,626,240 ÷ 196,608 B (2,225.9 blocks)
    assert engine.steps[-1].label == "tokens: int(blocks ÷ 11,264 × 131,072)"
    assert engine.token_capacity == 1_314_059 == int(112_927 / 11_264 * 131_072)


@pytest.mark.parametrize(("dcp", "blocks_per_request", "tokens"), [(1, 2560, 731_520), (2, 1280, 1_463_040)])
def test_dcp_divides_the_length_a_request_needs(dcp: int, blocks_per_request: int, tokens: int) -> None:
    """DeepSeek-V3 (MLA, block 64, L 163,840): L′ = cdiv(163,840, dcp); the pool is unchanged."""
    # the pool under the share of the total: 0.33.0's, pinned (0.34.0 sizes it under the extensible KV cache)
    flags = ["--tp", "8", "--dcp", str(dcp), "--block-size", "64", "--engine-version", "0.33.0"]
    engine = _plan("deepseek-ai--DeepSeek-V3.json", flags, H200_BYTES, "H200").engine
    assert engine.num_blocks == 11_430
    assert engine.token_capacity == tokens == int(11_430 / blocks_per_request * 163_840)


def test_dcp_keeps_vllms_kv_heads_per_rank_and_halves_the_length_a_request_needs() -> None:
    """Llama-3.1-70B (8 KV heads) at TP8: vLLM keeps max(1, 8 ÷ 8) = 1 head per rank under DCP (§3.2)."""
    plain = _plan("meta-llama--Llama-3.1-70B-Instruct.json", ["--tp", "8"], H200_BYTES, "H200")
    split = _plan("meta-llama--Llama-3.1-70B-Instruct.json", ["--tp", "8", "--dcp", "2"], H200_BYTES, "H200")
    assert split.kv_bytes_per_token == plain.kv_bytes_per_token == 80 * 1 * 128 * 2 * 2  # 40,960 B
    assert split.weights_bytes == plain.weights_bytes  # no extra K/V projection copies
    # L′ = cdiv(131,072, 2): a request needs half the blocks, so the same pool holds twice the tokens
    assert split.engine.num_blocks == plain.engine.num_blocks
    assert split.token_capacity == 2 * plain.token_capacity


@pytest.mark.parametrize(
    ("version", "rule"),
    [("0.10.2", "blocks"), ("0.20.0", "blocks"), ("0.20.1", "concurrency"), ("0.21.1", "concurrency"),
     ("0.29.1rc1.dev17+gd2d649e67", "concurrency"), (None, "concurrency")],
)  # fmt: skip
def test_token_print_rule_by_version(version: str | None, rule: str) -> None:
    """PR #41069 is in the v0.20.1 sdist's kv_cache_utils.py and not in v0.20.0's (docs/engines/vllm.md §5)."""
    assert token_print_rule(ResolvedVersion(text=version)) == rule


def test_before_pr_41069_tokens_are_blocks_per_group_times_block_size() -> None:
    """gpt-oss has 2 groups: 19,129 // 2 × 16 = 153,024 (docs/engines/vllm.md §5 History), not 287,762."""
    flags = ["--engine-version", "0.20.0", "--gpu-memory-utilization", "0.92"]
    engine = _plan(GPT_OSS, flags, H100_BYTES, "H100").engine
    assert engine.num_blocks == 19_129
    assert engine.token_capacity == 153_024 == 19_129 // 2 * 16
