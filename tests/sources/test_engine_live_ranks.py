"""An engine's figures from its ranks' (`EngineLive.of_ranks`), the one rule the endpoint readers
and the demo share: the tightest rank's capacity, the fullest rank's usage, tokens and requests
summed, and a figure no rank states unknown rather than 0 (the LMDeploy demo said `used_tokens: 0`
for an engine that reports no token count, a review found)."""

from __future__ import annotations

from kvtop.commands.node_source import DemoSource
from kvtop.domain.observe import EndpointState, EngineLive, EngineLiveRank


def test_ranks_combine_tightest_fullest_and_summed() -> None:
    ranks = [
        EngineLiveRank(dp_rank=0, token_capacity=551_520, kv_usage_fraction=0.25, used_tokens=137_880, running_requests=3),
        EngineLiveRank(dp_rank=1, token_capacity=551_504, kv_usage_fraction=0.5, used_tokens=275_752, running_requests=5),
    ]  # fmt: skip
    live = EngineLive.of_ranks(ranks)
    assert live.state is EndpointState.OK
    assert (live.token_capacity, live.kv_usage_fraction) == (551_504, 0.5)
    assert (live.used_tokens, live.running_requests) == (137_880 + 275_752, 8)
    assert live.waiting_requests is None and live.num_gpu_blocks is None  # no rank said them


def test_an_engine_that_reports_no_token_count_has_an_unknown_one_on_the_demo() -> None:
    """LMDeploy's /metrics has usage and requests, not tokens (docs/engines/lmdeploy.md)."""
    for view in DemoSource.open("llama70b-tp4-lmdeploy").collect_at(0).engines:
        live = view.engine.live
        assert live.token_capacity is None and live.used_tokens is None
        assert live.kv_usage_fraction is not None and live.running_requests is not None
