"""A host KV tier × the engine's ranks on the node against the host's memory (host_tier_fit.py), for each engine with
a host tier, the tier's bytes from the engine's own arithmetic written out here (tests/domain/test_host_tier.py has
the tiers themselves)."""

from __future__ import annotations

from kvtop.domain.deployment import DeploymentSetup, HostKvRequest
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import NOT_STATED
from kvtop.domain.headroom import Headroom, HeadroomNeed
from kvtop.domain.host_tier_fit import HostTierState, host_origin, host_tier_fit
from kvtop.domain.observe import HostMemory
from kvtop.domain.wording import GIB

HOST_2_TIB = HostMemory(total_bytes=2048 * GIB, available_bytes=1500 * GIB)


def _tier(engine: str, request: HostKvRequest, ranks: int, world: int):  # type: ignore[no-untyped-def]
    return engine_rules(engine).deployment.host_tier(
        DeploymentSetup(host_kv=request), gpu_tokens=1_000_000, kv_bytes_per_token=163_840, page_size=16, ranks=ranks,
        world=world, version=NOT_STATED,
    )  # fmt: skip


def test_vllm_kv_offloading_over_the_host_is_refused_with_both_figures() -> None:
    # --kv-offloading-size 9999 (GiB over the TP × PP workers: v1/kv_offload/cpu/spec.py divides it by world) at TP 4:
    # 9,999 / 4 = 2,499.75 GiB per rank × 4 ranks = 9,999 GiB > 2,048 GiB
    tier = _tier("vllm", HostKvRequest(connector="OffloadingConnector", size_bytes=9999 * GIB, split_over=4), ranks=4, world=4)
    fit = host_tier_fit(tier, HOST_2_TIB, host_origin="the demo host's stated total")
    assert fit is not None and fit.state is HostTierState.OVER_HOST and fit.refused
    assert fit.on_node_bytes == 9999 * GIB
    assert fit.reason == ("OffloadingConnector: 2,499.75 GiB per rank × 4 ranks on this node = 9,999.00 GiB, more than "
                          "the host's 2,048.00 GiB (the demo host's stated total): it cannot be pinned")  # fmt: skip


def test_sglang_hicache_counts_the_10_gib_it_keeps_free() -> None:
    # --hicache-size 254 GB per rank: int(254 × 10⁹ // 163,840) = 1,550,292 tokens, up one page of 16 to 1,550,304
    # (v0.5.5.post3 and later, the latest here) = 254,001,807,360 B = 236.56 GiB per rank; × 8 = 1,892.46 GiB: within
    # the 2,048 total less SGLang's 10 GiB (2,038), but with the 10 GiB over the 1,500 available: at risk
    tier = _tier("sglang", HostKvRequest(connector="HiCache", size_bytes=254 * 10**9), ranks=8, world=8)
    assert tier.bytes_per_rank == 1_550_304 * 163_840
    fit = host_tier_fit(tier, HOST_2_TIB)
    assert fit is not None and fit.state is HostTierState.OVER_AVAILABLE and not fit.refused
    # the same tier on a 1,900 GiB host: 1,892.46 GiB + SGLang's 10 GiB > 1,900: refused though under the total
    small = host_tier_fit(tier, HostMemory(total_bytes=1900 * GIB, available_bytes=1900 * GIB))
    assert small is not None and small.state is HostTierState.OVER_HOST
    assert "less the 10.00 GiB the engine keeps free" in small.reason


def test_the_live_tier_a_restart_gives_back_counts_as_available() -> None:
    # TensorRT-LLM's secondary pool, kv_cache_config.host_cache_size 200 GiB per rank × 8 = 1,600 GiB: over the 1,500
    # available, but the live engine pins 100 GiB per rank × 8 = 800 GiB now, which its restart frees first
    tier = _tier("trtllm", HostKvRequest(connector="secondary", size_bytes=200 * GIB), ranks=8, world=8)
    live = _tier("trtllm", HostKvRequest(connector="secondary", size_bytes=100 * GIB), ranks=8, world=8)
    assert host_tier_fit(tier, HOST_2_TIB).state is HostTierState.OVER_AVAILABLE  # type: ignore[union-attr]
    fit = host_tier_fit(tier, HOST_2_TIB, live_tier=live)
    assert fit is not None and fit.state is HostTierState.FITS and fit.freed_bytes == 800 * GIB
    # the words state the check's own figures: 1,600 ≤ 1,500 available now + 800 given back = 2,300 (TensorRT-LLM
    # keeps no reserve)
    assert fit.reason == ("secondary (host) pool: 200.00 GiB per rank × 8 ranks on this node = 1,600.00 GiB, within the "
                          "2,300.00 GiB available to it (1,500.00 GiB available now + 800.00 GiB the live tier gives "
                          "back), of the host's 2,048.00 GiB in all")  # fmt: skip


def test_a_tier_that_fits_names_the_available_figure_and_the_total() -> None:
    """The operator's review (session 70): the planner's host KV line said 'within the host's 2,048.00 GiB' (the
    total) beside a header of 1,711.53 GiB free, two figures read as one. A fitting tier names both: --kv-offloading-size
    800 (GiB over TP 4's workers) is 200 GiB a rank × 4 = 800 GiB ≤ the 1,500 GiB available of the 2,048 in all."""
    tier = _tier("vllm", HostKvRequest(connector="OffloadingConnector", size_bytes=800 * GIB, split_over=4), ranks=4, world=4)
    fit = host_tier_fit(tier, HOST_2_TIB, host_origin="the demo host's stated total")
    assert fit is not None and fit.state is HostTierState.FITS
    assert fit.reason == ("OffloadingConnector: 200.00 GiB per rank × 4 ranks on this node = 800.00 GiB, within the "
                          "1,500.00 GiB available now, of the host's 2,048.00 GiB in all (the demo host's stated "
                          "total)")  # fmt: skip


def test_no_tier_no_verdict_and_no_host_not_checked() -> None:
    assert host_tier_fit(None, HOST_2_TIB) is None
    tier = _tier("vllm", HostKvRequest(connector="OffloadingConnector", size_bytes=200 * GIB, split_over=4), ranks=4, world=4)
    fit = host_tier_fit(tier, None)
    assert fit is not None and fit.state is HostTierState.HOST_UNKNOWN and not fit.refused
    assert "not checked" in fit.reason
    # engines with no host tier kvtop reads: LMDeploy and llama.cpp give none
    for engine in ("lmdeploy", "llamacpp"):
        assert _tier(engine, HostKvRequest(connector="x", size_bytes=GIB), ranks=1, world=1) is None
    assert host_origin("demo:modern-deployment") == "the demo host's stated total"
    assert host_origin("nvml") == "psutil's total of this host"


def test_the_tier_and_its_fit_say_their_figures_in_their_own_json() -> None:
    """`plan --json`'s deployment.host_tier and its host_fit come from the models themselves (no second shape in the
    command): vLLM's --kv-offloading-size 9999 GiB over TP 4 is 2,499.75 GiB a rank, 9,999 GiB over the 4 ranks."""
    tier = _tier("vllm", HostKvRequest(connector="OffloadingConnector", size_bytes=9999 * GIB, split_over=4), ranks=4, world=4)
    assert tier.model_dump(mode="json")["total_bytes"] == 9999 * GIB
    fit = host_tier_fit(tier, HOST_2_TIB, host_origin="the demo host's stated total")
    assert fit is not None
    dumped = fit.model_dump(mode="json")
    assert list(dumped)[-1] == "reason" and dumped["reason"].endswith("2,048.00 GiB (the demo host's stated total): it cannot be pinned")


def test_the_headroom_says_what_is_needed_and_short_in_its_own_json() -> None:
    """`plan --json`'s deployment.headroom: 6 GiB left against needs of 5 GiB and 3 GiB (one unpriced) is 2 GiB short."""
    headroom = Headroom(left_bytes=6 * GIB, needs=(HeadroomNeed(label="a", bytes=5 * GIB), HeadroomNeed(label="b", bytes=3 * GIB),
                                                   HeadroomNeed(label="c", bytes=None)))  # fmt: skip
    dumped = headroom.model_dump(mode="json")
    assert (dumped["needed_bytes"], dumped["short_bytes"]) == (8 * GIB, 2 * GIB)
