"""One rank's share of host KV (the planner's field), as each engine's setup reads it from the launch, and
HostTier.gpu_pool_multiple: the tier beside the GPU pool (plan's host KV line)."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from kvtop.domain.deployment import HostKvRequest, HostTier
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.wording import GIB


def _host_kv(engine: str, flags: dict[str, object], tp: int = 1, pp: int = 1):  # type: ignore[no-untyped-def]
    settings = LaunchSettings(engine=engine, model="m", tp=tp, pp=pp, flags=flags)
    return engine_rules(engine).deployment.setup(settings).host_kv


def test_a_total_over_the_workers() -> None:
    """vLLM's --kv-offloading-size 64 is over one engine's TP × PP workers (v1/kv_offload/cpu/spec.py divides
    cpu_bytes_to_use by world): 8 GiB each at TP 4 × PP 2, the stated 64 GiB kept for the flag; the connector's
    `cpu_bytes_to_use` the same way."""
    request = _host_kv("vllm", {"kv-offloading-size": "64"}, tp=4, pp=2)
    assert (request.bytes_per_rank, request.bytes_total) == (8 * GIB, 64 * GIB)
    config = {"kv_connector": "OffloadingConnector", "kv_connector_extra_config": {"cpu_bytes_to_use": 3 * GIB}}
    request = _host_kv("vllm", {"kv-transfer-config": json.dumps(config)}, tp=2)
    assert (request.bytes_per_rank, request.bytes_total) == (3 * GIB // 2, 3 * GIB)


def test_its_json_is_the_share_and_the_total_not_the_stored_size() -> None:
    """`plan --json`'s deployment.setup.host_kv comes from the model itself (no second shape in the command): the
    64 GiB vLLM's --kv-offloading-size states over TP 4 × PP 2 reads 8 GiB a rank, the key order the contract's."""
    request = _host_kv("vllm", {"kv-offloading-size": "64"}, tp=4, pp=2)
    dumped = request.model_dump(mode="json")
    assert list(dumped) == ["connector", "bytes_per_rank", "bytes_total", "ratio_to_gpu_pool", "stated"]
    assert (dumped["bytes_per_rank"], dumped["bytes_total"], dumped["ratio_to_gpu_pool"]) == (8 * GIB, 64 * GIB, None)


def test_a_size_per_rank_is_its_own() -> None:
    """A size per rank (SGLang's --hicache-size, GB) holds whatever the layout; a ratio (--hicache-ratio) gives no
    size."""
    request = _host_kv("sglang", {"enable-hierarchical-cache": True, "hicache-size": "40"}, tp=8)
    assert (request.bytes_per_rank, request.bytes_total) == (40 * 10**9, None)
    ratio = _host_kv("sglang", {"enable-hierarchical-cache": True, "hicache-ratio": "2"}, tp=8)
    assert (ratio.bytes_per_rank, ratio.ratio_to_gpu_pool) == (None, 2.0)


def test_a_tier_as_a_multiple_of_the_gpu_pool() -> None:
    """SGLang's --hicache-ratio 2: a host pool of 759,744 tokens per rank beside a GPU pool of 379,872 is 2.0× it;
    without a GPU pool there is no multiple."""
    tier = HostTier(connector="HiCache", setting="--hicache-ratio 2", bytes_per_rank=102_690_000_000,
                    tokens_per_rank=759_744, gpu_tokens_per_rank=379_872, ranks=8)  # fmt: skip
    assert tier.gpu_pool_multiple == 2.0
    assert tier.model_copy(update={"gpu_tokens_per_rank": 0}).gpu_pool_multiple is None


def test_the_share_and_the_total_read_one_stated_size() -> None:
    """One size is stored: vLLM's --kv-offloading-size 100 at TP 3 is 107,374,182,400 B over 3 workers, 35,791,394,133 B
    each (spec.py's floor division); writing the setup back states the 100 GiB total, not the share × 3. A request
    naming the share as well is refused, so the two cannot disagree."""
    settings = LaunchSettings(engine="vllm", model="m", tp=3, flags={"kv-offloading-size": "100"})
    rules = engine_rules("vllm").deployment
    request = rules.setup(settings).host_kv
    assert (request.bytes_per_rank, request.bytes_total) == (35_791_394_133, 100 * GIB)
    assert rules.with_setup(settings, rules.setup(settings)).flags["kv-offloading-size"] == "100"
    with pytest.raises(ValidationError):
        HostKvRequest(connector="x", size_bytes=GIB, bytes_per_rank=GIB)  # type: ignore[call-arg]
