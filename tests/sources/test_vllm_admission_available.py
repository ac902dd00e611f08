"""vLLM's admission error's "available KV cache memory" as the log's KV memory, by release (docs/engines/vllm.md §4.2).

Before any override the check quotes the worker's `determine_available_memory()`, the figure `Available KV cache
memory` prints; from v0.20.1 (PR #41069) after an `Overriding num_gpu_blocks=N with num_gpu_blocks_override=M` line
it quotes M × bytes per block instead, which is no measure of the memory the worker found.
"""

from __future__ import annotations

from kvtop.domain.engines.vllm.log_records import VllmRankLog
from kvtop.domain.wording import GIB
from kvtop.sources.engine_logs import parse_engine_log

# v0.33.0 kv_cache_planning._check_enough_kv_cache_memory's message, figures by format_gib
ERROR = (
    "ValueError: To serve at least one request with the model's max seq len (131072), (16.0 GiB KV cache is needed, "
    "which is larger than the available KV cache memory (0.5 GiB). Based on the available memory, the estimated "
    "maximum model length is 4096. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
    "initializing the engine."
)
# v0.33.0 get_kv_cache_configs logs (avail_mem // bytes_per_block, override) before it checks
OVERRIDE = "INFO 11-02 10:00:00 [kv_cache_planning.py:1526] Overriding num_gpu_blocks=20000 with num_gpu_blocks_override=256"


def _rank(text: str) -> VllmRankLog:
    return parse_engine_log(text).ranks(VllmRankLog)[0]


def test_an_excerpt_of_only_the_error_reads_its_figure_as_the_kv_memory() -> None:
    rank = _rank(ERROR)
    assert rank.admission_errors[0].available is not None
    assert [m.value_bytes for m in rank.available_kv_cache_memory] == [GIB // 2]  # 0.5 GiB, as printed


def test_after_an_override_line_the_errors_figure_is_not_the_kv_memory() -> None:
    """256 blocks × bytes per block, not the 20,000 blocks' worth the worker found: kept on the error only."""
    rank = _rank(f"{OVERRIDE}\n{ERROR}")
    assert rank.blocks_overrides[0].override == 256
    assert rank.admission_errors[0].available is not None and rank.admission_errors[0].available.value_bytes == GIB // 2
    assert rank.available_kv_cache_memory == ()
