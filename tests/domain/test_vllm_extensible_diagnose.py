"""diagnose() on vLLM v0.34.0's extensible KV cache (kvtop/domain/engines/vllm/diagnosis.py, docs/engines/vllm.md
§0.34.0): the cache sized after warmup from the memory free at each worker's start,

    available = min(requested − resident, free at start − resident − max(1 GiB, 0.75 × peak)) − peak

(v0.34.0 wheel, v1/worker/extensible_kv_cache.py:592-612 measure_kv_cache_bytes), utilization unstated 1.0
(config/cache.py:493-501 resolved_gpu_memory_utilization), no start check (v1/worker/utils.py:783-797).

The node is tests/diagnose_node.py's Meta-Llama-3-70B at TP8 on eight H100s. Expected figures from the wheel's
arithmetic: a rank caches 80 layers × 1 KV head (8 ÷ TP8) × 128 × 2 (K, V) × 2 B = 40,960 B per token, in blocks
of 64 tokens (DEFAULT_BLOCK_SIZE, config/cache.py:185) = 2,621,440 B, and the engine takes the fewest blocks of its
workers (the least free GPU sizes every rank).
"""

from __future__ import annotations

import math

from kvtop.domain.diagnose import Severity, diagnose
from kvtop.domain.engines.vllm.diagnosis import NOT_MODELLED_EXTENSIBLE
from tests.diagnose_node import GIB, H100, RESERVED, co_tenant, llama, node, only, problems

V034 = ("--engine-version", "0.34.0")
TOKEN_BYTES = 80 * 1 * 128 * 2 * 2
BLOCK_TOKENS = 64
BLOCK_BYTES = BLOCK_TOKENS * TOKEN_BYTES


def tokens(available: int) -> int:
    """Tokens per rank of `available` KV bytes: whole blocks of 64 (kv_cache_utils' num_blocks × block_size)."""
    return available // BLOCK_BYTES * BLOCK_TOKENS


def test_a_co_tenant_shrinks_the_restart_by_its_bytes_and_no_start_check_refuses_it() -> None:
    """0.92 × total no longer has to be free: the start check is skipped, and the free memory's headroom binds, so
    10 GiB held on GPU 3 costs every rank 10 GiB of cache: 4,096 blocks, 262,144 tokens."""
    found = diagnose(node(llama("vllm", *V034), others={3: (co_tenant(9001, 10 * GIB),)}))
    assert "restart_will_not_fit" not in problems(found)
    cost = only(found, "co_tenant")
    assert BLOCK_BYTES == 2_621_440 and cost.tokens == tokens(10 * GIB) == 262_144
    assert any("free at each worker's start" in line for line in cost.evidence)
    assert not any("budgets" in line for line in cost.evidence)
    # v0.33.0 on the same node: the share is needed free, and the restart is refused
    assert "restart_will_not_fit" in problems(
        diagnose(node(llama("vllm"), others={3: (co_tenant(9001, 10 * GIB),)}))
    )


def test_a_restart_left_no_kv_cache_is_critical_and_its_fix_not_modelled() -> None:
    """70 GiB held on GPU 3 leaves under 9 GiB free, below the 16.4 GiB of weights a rank loads (70.6e9 B of bf16
    ÷ 8): `measure_kv_cache_bytes` finds no cache (it clamps at 0)."""
    plan = llama("vllm", *V034)
    assert plan.weights_bytes > H100 - RESERVED - 70 * GIB
    finding = only(diagnose(node(plan, others={3: (co_tenant(9001, 70 * GIB),)})), "restart_will_not_fit")
    assert finding.severity is Severity.CRITICAL and finding.gpus == (3,)
    assert finding.fix == NOT_MODELLED_EXTENSIBLE and finding.fix_settings is None


def test_reserve_at_the_default_utilization_has_no_utilization_fix() -> None:
    """Unstated, the utilization is 1.0: requested − resident = total − resident exceeds free at start − resident
    − margin (the context alone is gone from the free memory), so the free memory binds and a larger share buys
    nothing; the fix is the named state."""
    plan = llama("vllm", *V034)
    assert plan.engine.memory_fraction == 1.0
    observed = plan.engine.kv_budget_bytes - 3 * GIB
    finding = only(diagnose(node(plan, live={"kv_cache_bytes": observed})), "reserve_larger_than_expected")
    assert finding.bytes == 3 * GIB
    # the plan's blocks: each of the 80 layer regions mapped in whole 2 MiB granules (v1/worker/
    # extensible_kv_cache.py:304-318 blocks_within), 64 pages of 32,768 B a granule; the live pool is whole blocks
    granules = plan.engine.kv_budget_bytes // (80 * 2 * 1024 * 1024)
    assert plan.engine.token_capacity == granules * 64 * BLOCK_TOKENS < tokens(plan.engine.kv_budget_bytes)
    assert finding.tokens == plan.engine.token_capacity - tokens(observed)
    assert finding.fix == NOT_MODELLED_EXTENSIBLE and finding.gain_tokens == 0 and finding.fix_settings is None
    assert "the free memory binds" in finding.evidence[-1]
    assert not any("CUDAGRAPHS" in line for line in finding.evidence)  # v0.34.0 skips the graph estimate


def test_reserve_under_a_stated_utilization_raises_it_while_the_request_binds() -> None:
    """At 0.8 the request binds (0.8 × 79.65 GiB < free at start less 1 GiB of margin): 3 GiB more resident lowers
    both terms alike, and raising the share by 3 GiB ÷ total gives the cache back what the raise adds to the
    request, ceil(total × 0.8377) − ceil(total × 0.8) bytes."""
    plan = llama("vllm", *V034, "--gpu-memory-utilization", "0.8")
    observed = plan.engine.kv_budget_bytes - 3 * GIB
    finding = only(diagnose(node(plan, live={"kv_cache_bytes": observed})), "reserve_larger_than_expected")
    raised = math.ceil((0.8 + 3 * GIB / H100) * 10000) / 10000
    assert raised == 0.8377 and math.ceil(H100 * raised) < H100 - 2 * GIB  # still under the headroom less margin
    more = math.ceil(H100 * raised) - math.ceil(H100 * 0.8)
    assert finding.fix == "--gpu-memory-utilization 0.8377" and "the request binds" in finding.evidence[-1]
    assert finding.gain_tokens == tokens(observed + more) - tokens(observed) > 0
