"""HostKvRequest.per_rank_bytes and HostTier.gpu_pool_multiple: one rank's share of host KV (the planner's field)
and the tier beside the GPU pool (plan's host KV line)."""

from __future__ import annotations

from kvtop.domain.deployment import HostKvRequest, HostTier

GIB = 1 << 30


def test_a_total_over_the_workers() -> None:
    """vLLM's --kv-offloading-size 64 is over one engine's TP × PP workers (v1/kv_offload/cpu/spec.py): 8 GiB each
    at TP 4 × PP 2."""
    assert HostKvRequest(connector="OffloadingConnector", bytes_total=64 * GIB).per_rank_bytes(4 * 2) == 8 * GIB


def test_a_size_per_rank_is_its_own() -> None:
    """A size per rank (SGLang's --hicache-size) holds whatever the layout; a ratio (--hicache-ratio) gives no size."""
    assert HostKvRequest(connector="HiCache", bytes_per_rank=40 * GIB).per_rank_bytes(8) == 40 * GIB
    assert HostKvRequest(connector="HiCache", ratio_to_gpu_pool=2.0).per_rank_bytes(8) is None


def test_a_tier_as_a_multiple_of_the_gpu_pool() -> None:
    """SGLang's --hicache-ratio 2: a host pool of 759,744 tokens per rank beside a GPU pool of 379,872 is 2.0× it;
    without a GPU pool there is no multiple."""
    tier = HostTier(connector="HiCache", setting="--hicache-ratio 2", bytes_per_rank=102_690_000_000,
                    tokens_per_rank=759_744, gpu_tokens_per_rank=379_872, ranks=8)  # fmt: skip
    assert tier.gpu_pool_multiple == 2.0
    assert tier.model_copy(update={"gpu_tokens_per_rank": 0}).gpu_pool_multiple is None
