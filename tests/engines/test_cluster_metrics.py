"""`kvtop cluster` reads every engine's own KV gauges, by the names its package declares (issue 29): the
query listed SGLang's and vLLM's names, so an LMDeploy or TensorRT-LLM node showed no engine at all."""

from __future__ import annotations

import pytest

from tests.sources.fake_prometheus import FakePrometheus, Target
from tests.sources.test_lmdeploy_sources import METRICS_TWO_DP
from tests.sources.test_prometheus import read

# trtllm-serve's /prometheus/metrics as tests/sources/test_trtllm_sources.py records it, with the
# utilization gauge its endpoint reads (`trtllm_kv_cache_utilization`): 25,314 of 101,256 blocks in use
TRTLLM_PAGE = """# HELP trtllm_kv_cache_utilization KV cache utilization
# TYPE trtllm_kv_cache_utilization gauge
trtllm_kv_cache_utilization{engine_type="undefined",model_name="undefined"} 0.25
"""


def test_an_lmdeploy_and_a_trtllm_node_show_their_kv_usage() -> None:
    fake = FakePrometheus([
        Target("lmdeploy", "node-a:23333", METRICS_TWO_DP),
        Target("trtllm", "node-b:8000", TRTLLM_PAGE),
    ])  # fmt: skip
    engines = {e.instance: e for n in read(fake).nodes for e in n.engines}
    # LMDeploy's two DP engines state 0.25 and 0.5: the engine's usage is its busiest rank's
    assert engines["node-a:23333"].kv_usage_fraction == pytest.approx(0.5)
    assert engines["node-a:23333"].source == "lmdeploy"
    assert engines["node-b:8000"].kv_usage_fraction == pytest.approx(0.25)
    assert engines["node-b:8000"].source == "trtllm"
