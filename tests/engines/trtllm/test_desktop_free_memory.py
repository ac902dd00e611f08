"""A TensorRT engine's C++ runtime sizes its pool from the free memory, so a desktop's share comes off it (session 65).

`KVCacheManager::calculateMaxNumBlocks` (cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp, stored 2024 copy,
search-index id 36927720914) takes `freeMemFraction × (cudaMemGetInfo's free + the runtime's memory-pool free)` ÷ the
bytes a token, once the engine, its execution context, runtime buffers and decoder are allocated, prints that free
memory as `available`, keeps the MIN over ranks and rounds up to blocks. Unlike vLLM, which sizes from the total, what
a Windows desktop holds on the card before the start is in that free memory, so it comes off the pool × the fraction.
kvtop does not model the desktop at the centre (host_memory.py, engine-neutral) and takes what the corpus's desktop
starts held beyond Linux (`DESKTOP_HELD_BYTES`) at the low end.

Expected values from tensorrtllm_backend#625's log (TensorRT-LLM 0.13, RTX 4090 under WSL2, GLM-4-9B-chat int8
weight-only): `total: 23.99 GiB, available: 12.22 GiB`, `Number of blocks in KV cache primary pool: 4506`, `Number of
tokens per block: 64`, `Allocated 11.00 GiB for max tokens in paged KV cache (288384)`, `Loaded engine size: 10194
MiB`, 196.76 MiB of execution context, 648.06 KB of runtime buffers, 2.98 MB of decoder; 40 layers × 2 KV heads × 128
× 2 (K and V) × 2 B a token.
"""

from __future__ import annotations

import math

from benchmarks.calibration.corpus import Record, load
from kvtop.domain.calibration.estimate import CapacityPlan, planned_capacity
from kvtop.domain.calibration.host_memory import DESKTOP_HELD_BYTES
from kvtop.domain.calibration.terms import Term
from kvtop.domain.gpus import gpu_key
from kvtop.domain.wording import GIB, MIB, gib

RECORD = "tritonbackend-issue625-glm-4-9b-chat-int8wo-4090-wsl2"
TOKEN_BYTES = 40 * 2 * 128 * 2 * 2  # 40,960 B: FP16 KV
BLOCK = 64
FRACTION = 0.9
TOTAL, AVAILABLE = 23.99 * GIB, 12.22 * GIB  # the log's, to 0.01 GiB
ENGINE = 10194 * MIB
RUNTIME = 196.76 * MIB + 648.06 * 1024 + 2.98 * MIB
LOGGED_TOKENS = 288_384
ROUNDING = 0.005 * GIB  # the log prints GiB to two places


def _plan(*, desktop: bool) -> CapacityPlan:
    record: Record = {r.id: r for r in load("trtllm")}[RECORD]
    assert record.model is not None and record.gpu_total_bytes is not None
    measured = record.host_measured().model_copy(update={"desktop": desktop})
    return planned_capacity(record.model, record.settings, gpu_total_bytes=record.gpu_total_bytes,
                            gpu_name=gpu_key(record.gpu), measured=measured)  # fmt: skip


def test_the_logged_pool_is_the_fraction_of_the_available_memory() -> None:
    """The runtime's arithmetic on the log's own figures: 0.9 × 12.22 GiB (printed to 0.01 GiB) ÷ 40,960 B, rounded
    up to blocks of 64, spans the logged 4,506 blocks; they are the logged 288,384 tokens."""
    blocks = [
        math.ceil(int(FRACTION * (AVAILABLE + side) / TOKEN_BYTES) / BLOCK) for side in (-ROUNDING, ROUNDING)
    ]
    assert blocks[0] <= 4506 <= blocks[1] and blocks[1] - blocks[0] <= 10
    assert 4506 * BLOCK == LOGGED_TOKENS


def test_the_desktop_is_taken_at_the_low_end_only() -> None:
    """The centre and the high end are the plan without the desktop (not modelled); the low end's pool is less by the
    desktop's share × the fraction, to a block (the runtime multiplies the free memory it reads)."""
    with_desktop, without = _plan(desktop=True), _plan(desktop=False)
    assert with_desktop.ledger.token_capacity == without.ledger.token_capacity
    assert with_desktop.token_capacity_max == without.token_capacity_max
    lost = (without.token_capacity_min - with_desktop.token_capacity_min) * TOKEN_BYTES
    assert abs(lost - FRACTION * DESKTOP_HELD_BYTES) <= BLOCK * TOKEN_BYTES
    desktop = with_desktop.estimate.desktop
    assert desktop is not None and f"({gib(DESKTOP_HELD_BYTES)})" in desktop.note


def test_the_logged_pool_lies_between_the_low_end_and_the_centre() -> None:
    """With the desktop said, the interval holds the logged 288,384 tokens; without it, its low end lies above them:
    the desktop's share is what the start lacked."""
    with_desktop, without = _plan(desktop=True), _plan(desktop=False)
    assert with_desktop.token_capacity_min <= LOGGED_TOKENS <= with_desktop.ledger.token_capacity
    assert without.token_capacity_min > LOGGED_TOKENS


def test_what_the_start_held_beyond_the_plan_is_a_desktop_share() -> None:
    """CUDA's total less the available memory less the engine and the runtime's three allocations is what the card
    held beside them; less the plan's one-process context it is 1.1 – 1.2 GiB: a desktop's share (the corpus's other
    desktop starts held 167 – 1,046 MiB beyond Linux, benchmarks/calibration/desktop.py `desktop_excess`)."""
    context = _plan(desktop=True).estimate.term(Term.CONTEXT)
    assert context is not None
    beyond = TOTAL - AVAILABLE - ENGINE - RUNTIME - context.bytes
    assert 1.10 * GIB < beyond < 1.22 * GIB
