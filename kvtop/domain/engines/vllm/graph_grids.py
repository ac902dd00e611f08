"""vLLM 0.34.0's wider CUDA-graph capture grids on SM 10.x (B200, GB200, B300, GB300): how many graphs it captures
where no capture size is stated (docs/engines/vllm.md §0.34.0).

Read in the v0.34.0 wheel (vllm-0.34.0-cp38-abi3-manylinux_2_28_x86_64.whl, PyPI):
- `VllmConfig._split_cudagraph_capture_sizes` (config/vllm.py:2560-2700): on a GPU of capability family 100
  (`is_device_capability_family(100)`: major 10, platforms/interface.py:587-598), unless the deprecated
  `cudagraph_capture_sizes` / `max_cudagraph_capture_size` were set (`legacy_sizes`, :2380-2383), the prefill graphs
  take `prefill_cudagraph_capture_grid(min(8192, max_num_batched_tokens))` and the decode graphs
  `decode_cudagraph_capture_grid(max_num_seqs)` (:2600-2660); `max_decode_cudagraph_capture_tokens` becomes 8192.
  Elsewhere both come from v0.33.0's shared sizes, as kvtop counted them before (`profile_run.graph_counts`).
- The grids (config/compilation.py:78-122): from 1, each next size the next multiple of the largest power of two not
  above step(size); the prefill step min(t, max(8, t ÷ 4), 0.07 × max(t, 4096)) ("54 sizes at 8192"), every count to
  32 added under `--performance-mode interactivity`; the decode step 0.65 × n^(2/3) ("64 sizes at 1024"); each grid
  ends at its limit.
- The V2 runner's `CudaGraphManager._init_candidates` (v1/worker/gpu/cudagraph_utils.py:290-360): with a separate
  decode routine (FULL_AND_PIECEWISE, FULL_DECODE_ONLY) FULL graphs at the decode request sizes (a plain decode's
  query length 1: one graph a size, `decode_cudagraph_capture_shapes`, config/compilation.py:53-67), and the mixed
  mode's graphs at every prefill size (none under FULL_DECODE_ONLY); with one routine (FULL, PIECEWISE) every batch
  takes the prefill sizes in that mode.
Not read: speculative decoding's query lengths and drafts' sizes, adaptive verification's varlen grid, LoRA's capture
cases (each multiplies the graphs): `graph_counts` keeps its own count there.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from kvtop.domain.engines.versions import Era, Eras

WIDE_GRID_ERAS: Eras[bool] = Eras((
    Era("", False, "before v0.34.0 every GPU takes the shared capture sizes (v0.33.0 config/vllm.py)"),
    Era("0.34.0", True, "v0.34.0 config/vllm.py:2600-2660 _split_cudagraph_capture_sizes: SM 10.x's wide defaults, "
                        "config/compilation.py:78-122 the grids"),
))  # fmt: skip
PREFILL_LIMIT = 8192  # the prefill grid's bound where max_prefill_cudagraph_capture_tokens is unset (:2638)
INTERACTIVE_DENSE = 32  # `--performance-mode interactivity`: every token count to 32 joins the prefill grid


def _grid(limit: int, step: Callable[[int], float]) -> list[int]:
    """Sizes from 1 below `limit`, each the next multiple of the largest power of two ≤ step(size), then `limit`."""
    sizes: list[int] = []
    size = 1
    while size < limit:
        sizes.append(size)
        stride = 2 ** max(0, math.floor(math.log2(max(1.0, step(size)))))
        size = (size // stride + 1) * stride
    return [*sizes, limit] if limit > 0 else []


def prefill_grid(max_tokens: int, interactivity: bool = False) -> list[int]:
    """SM 10.x's prefill (token-count) sizes up to `max_tokens` (54 at 8,192: compilation.py:89-99's docstring)."""
    grid = _grid(max_tokens, lambda t: min(t, max(8, t / 4), 0.07 * max(t, 4096)))
    if interactivity:
        grid = sorted({*grid, *(t for t in range(1, INTERACTIVE_DENSE + 1) if t < max_tokens)})
    return grid


def decode_grid(max_requests: int) -> list[int]:
    """SM 10.x's decode (request-count) sizes up to `max_requests` (64 at 1,024: compilation.py:115-120)."""
    return _grid(max_requests, lambda n: 0.65 * n ** (2 / 3))


def wide_graph_counts(mode: str, max_tokens: int, max_seqs: int, interactivity: bool) -> tuple[int, int]:
    """(PIECEWISE graphs, FULL graphs) the V2 runner captures on SM 10.x at v0.34.0 without stated sizes, by the
    launch's cudagraph_mode (FULL_AND_PIECEWISE unless stated)."""
    prefill = len(prefill_grid(min(PREFILL_LIMIT, max_tokens), interactivity))
    return counts_by_mode(mode, prefill, len(decode_grid(max_seqs)))


def counts_by_mode(mode: str, mixed: int, decode: int) -> tuple[int, int]:
    """(PIECEWISE graphs, FULL graphs) of a cudagraph_mode over `mixed` batch sizes, `decode` of them decode sizes:
    NONE none, PIECEWISE and FULL one graph a size in that mode, FULL_DECODE_ONLY the decode sizes FULL,
    FULL_AND_PIECEWISE (the default) both (CUDAGraphMode.decode_mode / mixed_mode, config/compilation.py)."""
    return {"NONE": (0, 0), "PIECEWISE": (mixed, 0), "FULL": (0, mixed),
            "FULL_DECODE_ONLY": (0, decode)}.get(mode, (mixed, decode))  # fmt: skip
