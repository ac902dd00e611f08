"""vLLM 0.19's CUDA-graph memory profiling prints an override of a throwaway cache; it is not the operator's.

The lines are vLLM 0.19's as printed in a public startup log (search-index file 53041548781: Qwen at TP 4,
`kv_cache_utils.py:829` then `gpu_model_runner.py:5876`), and the served-model case of
tests/data/served_model/SOURCES.md names the same line in llm-d-planner's vLLM 0.19.0 log: the engine builds a
512-block cache to capture CUDA graphs before it has measured any memory (0 blocks computed), then sizes the
real one. Before this was read apart, `kvtop explain` took 512 blocks for the operator's
--num-gpu-blocks-override (8,192 tokens predicted on a log that served 175,296).
"""

from __future__ import annotations

from kvtop.domain.engines.vllm.log_records import VllmRankLog
from kvtop.sources.engine_logs import parse_engine_log

PROFILE = (
    "(Worker_TP0 pid=374) INFO 04-16 11:18:31 [monitor.py:76] Initial profiling/warmup run took 3.28 s\n"
    "(Worker_TP0 pid=374) INFO 04-16 11:18:37 [kv_cache_utils.py:829] Overriding num_gpu_blocks=0 with "
    "num_gpu_blocks_override=512\n"
    "(Worker_TP0 pid=374) INFO 04-16 11:18:37 [gpu_model_runner.py:5876] Profiling CUDA graph memory: "
    "PIECEWISE=51 (largest=512), FULL=35 (largest=256)\n"
)


def test_the_cuda_graph_profiling_cache_is_not_an_operator_override() -> None:
    log = parse_engine_log(PROFILE)
    assert all(rank.blocks_overrides == () for rank in log.ranks(VllmRankLog))


def test_an_operator_override_after_the_measurement_is_still_read() -> None:
    operator = "INFO 04-16 11:19:02 [kv_cache_utils.py:829] Overriding num_gpu_blocks=17804 with num_gpu_blocks_override=512\n"
    overrides = [o for rank in parse_engine_log(PROFILE + operator).ranks(VllmRankLog) for o in rank.blocks_overrides]
    assert [(o.num_gpu_blocks, o.override) for o in overrides] == [(17804, 512)]
