"""`--mem-fraction-static 1`: SGLang starts it and runs out of memory (every release; docs/engines/sglang.md §4, §5).

SGLang takes the KV pool's memory as `rest_memory = available_gpu_memory − pre_model_load_memory × (1 −
mem_fraction_static)` (model_runner `profile_max_num_token`; the KV-cache mixin in later releases) and refuses only a
`rest_memory` or a token count of 0 or less (§4.1): no range check stops a fraction of 1. There the reserve is 0 B and
the pool takes every byte free after the weights, so what SGLang allocates after sizing it (the request-to-token pool,
then the CUDA graphs it captures and the activations of its first batches) finds no memory: CUDA graph capture fails
with `Capture cuda graph failed: … CUDA out of memory` and its CUDA_GRAPH_CAPTURE_FAILED_MSG ("set
--mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)"); with --disable-cuda-graph the first batch runs out.
Source: sgl-project/sglang python/sglang/srt/model_executor/model_runner.py and cuda_graph_runner.py at
01cc04e2b5b01ce379698a3fee1bd17706e1d0ec; the same `rest_memory` rule in its first releases.
"""

from __future__ import annotations

WHOLE = 1.0


def whole_fraction_note(mem_fraction_static: float, allocated_after: int) -> str | None:
    """Why a fraction of 1 does not fit (None for any other): `allocated_after` is the bytes SGLang allocates
    after sizing the pool that the plan counts (the request-to-token pool)."""
    if mem_fraction_static < WHOLE:
        return None
    return (f"--mem-fraction-static {mem_fraction_static:g} leaves no runtime reserve: SGLang's KV pool takes all the "
            f"memory free after the weights (total × (1 − 1) = 0 B kept), so the request-to-token pool "
            f"({allocated_after:,} B), its CUDA graphs and its activations find none: it runs out of memory at start "
            "(`Capture cuda graph failed … CUDA out of memory`); SGLang does not refuse the value, it fails on it")  # fmt: skip
