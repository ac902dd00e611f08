"""KV in host memory, per rank (issue 30): each engine's host pool from its own arithmetic, written out here,
and vLLM V0's swap pool against a recorded /metrics page."""

from __future__ import annotations

import re

from kvtop.domain.deployment import DeploymentSetup, HostKvRequest
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import NOT_STATED, ResolvedVersion, from_flag
from tests.conftest import SAMPLES


def version(engine: str, release: str) -> ResolvedVersion:
    return from_flag(release, engine_rules(engine).calendar)


def hicache(ratio: float | None = None, size_bytes: int | None = None) -> DeploymentSetup:
    return DeploymentSetup(host_kv=HostKvRequest(connector="HiCache", ratio_to_gpu_pool=ratio, size_bytes=size_bytes))


def sglang_tier(setup: DeploymentSetup, release: str, gpu_tokens: int = 1_000_000, page: int = 64):  # type: ignore[no-untyped-def]
    rules = engine_rules("sglang").deployment
    at = version("sglang", release) if release else NOT_STATED
    return rules.host_tier(setup, gpu_tokens=gpu_tokens, kv_bytes_per_token=40_960, page_size=page, ranks=8,
                           world=8, version=at)  # fmt: skip


def test_sglang_hicache_ratio_aligns_down_then_up_by_one_page() -> None:
    # memory_pool(_host).py HostKVCache: size = int(device tokens × ratio); v0.4.7 – v0.5.5.post2 `size − size % page`,
    # from v0.5.5.post3 `(size // page + 1) × page`; bytes = size × size_per_token (the device cell, 40,960 B)
    old = sglang_tier(hicache(ratio=2.0), "0.5.5.post2", gpu_tokens=1_000_003)
    assert old.tokens_per_rank == 2_000_006 - 2_000_006 % 64 == 2_000_000
    new = sglang_tier(hicache(ratio=2.0), "0.5.5.post3", gpu_tokens=1_000_003)
    assert new.tokens_per_rank == (2_000_006 // 64 + 1) * 64 == 2_000_064
    assert new.bytes_per_rank == 2_000_064 * 40_960
    assert new.total_bytes == 8 * new.bytes_per_rank


def test_sglang_hicache_size_is_gigabytes_per_rank() -> None:
    # --hicache-size 120: int(120 × 10⁹ // 40,960) = 2,929,687 tokens, up one page of 64: 2,929,728 tokens, printed
    # as "Allocating 120.00 GB host memory for hierarchical KV cache." (sgl-project/sglang#31600 shows that line
    # on every TP rank of a --hicache-size 120 launch: GB is 10⁹ B, per rank)
    tier = sglang_tier(hicache(size_bytes=120 * 10**9), "")
    assert tier.tokens_per_rank == 2_929_728
    assert f"{tier.bytes_per_rank / 1e9:.2f}" == "120.00"


def test_sglang_refuses_a_host_pool_no_larger_than_the_gpus_until_v0_5_15() -> None:
    small = hicache(size_bytes=10 * 10**9)  # 244,140 tokens beside a 1,000,000-token GPU pool
    assert sglang_tier(small, "0.5.14").problem is not None
    assert "refuses to start" in sglang_tier(small, "0.5.14").problem
    assert sglang_tier(small, "0.5.15").problem is None
    assert "adds little" in sglang_tier(small, "0.5.15").detail


def _cache_config(page: str) -> dict[str, str]:
    line = next(line for line in page.splitlines() if line.startswith("vllm:cache_config_info{"))
    return dict(re.findall(r'(\w+)="([^"]*)"', line))


def test_vllm_v0_swap_space_matches_the_recorded_cpu_blocks() -> None:
    # tests/data/samples/vllm_metrics/v0-aibrix-qwen2.5-coder-1.5b.txt: a V0 server's cache_config_info.
    # Qwen2.5-Coder-1.5B: 28 layers, 2 KV heads × 128, bf16: K and V = 28 × 2 × 128 × 2 × 2 = 28,672 B per token
    labels = _cache_config((SAMPLES / "vllm_metrics" / "v0-aibrix-qwen2.5-coder-1.5b.txt").read_text())
    swap, block = int(labels["swap_space_bytes"]), int(labels["block_size"])
    rules = engine_rules("vllm").deployment
    setup = DeploymentSetup(host_kv=HostKvRequest(connector="swap space", size_bytes=swap))
    tier = rules.host_tier(setup, gpu_tokens=int(labels["num_gpu_blocks"]) * block, kv_bytes_per_token=28_672,
                           page_size=block, ranks=1, world=1, version=version("vllm", "0.7.3"))  # fmt: skip
    assert tier is not None
    assert tier.tokens_per_rank // block == int(labels["num_cpu_blocks"]) == 9362
    v1 = rules.host_tier(setup, gpu_tokens=0, kv_bytes_per_token=28_672, page_size=block, ranks=1, world=1,
                         version=version("vllm", "0.11.0"))  # fmt: skip
    assert v1 is not None and v1.tokens_per_rank == 0 and v1.state.value == "not_modelled"


def test_vllm_kv_offloading_size_is_over_the_tp_ranks() -> None:
    # config/cache.py: "the total buffer size summed across all TP ranks"; v1/kv_offload/cpu/spec.py: num_chunks =
    # cpu_bytes_to_use // (world × bytes per block per worker); one 16-token block of 40,960 B per token per chunk
    rules = engine_rules("vllm").deployment
    setup = DeploymentSetup(host_kv=HostKvRequest(connector="OffloadingConnector", size_bytes=200 << 30, split_over=8))
    tier = rules.host_tier(setup, gpu_tokens=500_000, kv_bytes_per_token=40_960, page_size=16, ranks=8, world=8,
                           version=NOT_STATED)  # fmt: skip
    assert tier is not None
    assert tier.bytes_per_rank == 25 << 30
    assert tier.tokens_per_rank == (200 << 30) // (8 * 16 * 40_960) * 16 == 655_360


def test_vllm_lmcache_says_its_gpu_staging_buffer_moves_no_kv() -> None:
    # vllm-project/vllm#21348: `vllm serve Qwen3-235B-A22B-FP8 --tensor-parallel-size 4 --kv-transfer-config
    # '{"kv_connector":"LMCacheConnectorV1","kv_role":"kv_both"}'` on 4 x H100. LMCache 0.3.2's
    # VLLMPagedMemGPUConnectorV2 holds gpu_buffer [2, layers, chunk_size, KV heads × head dim] in the KV dtype:
    # 2 × 94 layers × 256 × (1 KV head × 128) × 2 B = 12,320,768 B a rank (the rank's 48,128 B per token × 256),
    # made in init_device before the profile, so vLLM's budget charges it to no term
    rules = engine_rules("vllm").deployment
    setup = DeploymentSetup(host_kv=HostKvRequest(connector="LMCacheConnectorV1", size_bytes=5 * 10**9,
                                                  stated=False))  # fmt: skip
    per_token = 94 * 2 * 1 * 128 * 2
    tier = rules.host_tier(setup, gpu_tokens=178_880, kv_bytes_per_token=per_token, page_size=16, ranks=4, world=4,
                           version=version("vllm", "0.9.2"))  # fmt: skip
    assert tier is not None
    assert 2 * 94 * 256 * 128 * 2 == 256 * per_token == 12_320_768
    assert "12.3 MB a rank" in tier.detail and "charged to no term" in tier.detail
    assert tier.bytes_per_rank == 5 * 10**9  # LMCache's default max_local_cpu_size, host memory


def test_trtllm_secondary_pool_blocks() -> None:
    # §4.1: blocks2 = int(host_cache_size / bytes_per_token / tokens_per_block)
    rules = engine_rules("trtllm").deployment
    setup = DeploymentSetup(host_kv=HostKvRequest(connector="secondary pool", size_bytes=45 * 10**9))
    tier = rules.host_tier(setup, gpu_tokens=100_000, kv_bytes_per_token=131_072, page_size=32, ranks=1, world=1,
                           version=NOT_STATED)  # fmt: skip
    assert tier is not None
    assert tier.tokens_per_rank == int(45 * 10**9 / 131_072 / 32) * 32 == 343_296


def test_lmdeploy_has_no_host_tier() -> None:
    rules = engine_rules("lmdeploy").deployment
    setup = DeploymentSetup(host_kv=HostKvRequest(connector="x", size_bytes=1))
    assert rules.host_tier(setup, gpu_tokens=1, kv_bytes_per_token=1, page_size=1, ranks=1, world=1,
                           version=NOT_STATED) is None  # fmt: skip
