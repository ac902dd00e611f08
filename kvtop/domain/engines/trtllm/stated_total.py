"""The device total a TensorRT-LLM log states, with the line it stands on: measured, so it wins over --gpu's table
total where `explain` rebuilds a start (explain.py)."""

from __future__ import annotations

from kvtop.domain.engine_log import EngineLog, Measured
from kvtop.domain.engines.trtllm.log_records import TrtllmRankLog


def stated_total(log: EngineLog) -> tuple[Measured | None, str]:
    """The device total the log prints and its line: measured, which wins over --gpu's table total. The PyTorch
    backend's profiling line (`device total memory 119.70 GiB`, tensorrt_llm/_torch/pyexecutor/_util.py), else
    the C++ runtime's (`Memory usage when calculating max tokens in paged kv cache: total: 31.84 GiB`,
    KVCacheManager::calculateMaxNumBlocks, v0.9+; docs/engines/trtllm.md §4.2)."""
    total = log.first(TrtllmRankLog, lambda r: next((p.device_total for p in reversed(r.profiles) if p.device_total), None))
    if total is not None:
        return total, f"`device total memory {total.text} GiB`"
    total = log.first(TrtllmRankLog, lambda r: r.cpp_memory[-1].total if r.cpp_memory else None)
    return total, f"`Memory usage when calculating max tokens in paged kv cache: total: {total.text} GiB`" if total else ""
