"""diagnose() on the processes beside the engine: co-tenants (rule 1), orphans (rule 2), rank imbalance (rule 3).

The node is tests/diagnose_node.py's (Meta-Llama-3-70B at TP8 on eight H100s). Token figures are asserted against
predict() re-solved by hand.
"""

from __future__ import annotations

import math

from kvtop.domain.diagnose import Severity, diagnose
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.ledger import predict
from kvtop.domain.observe import (
    ProcessRole,
)
from tests.diagnose_node import (
    CLEAN,
    GIB,
    H100,
    RESERVED,
    SERVER,
    co_tenant,
    llama,
    node,
    only,
    problems,
    sglang_capacity,
)

# --- rule 1: co-tenant ------------------------------------------------------------------------


def test_co_tenant_on_gpu3_costs_every_sglang_rank_the_planners_tokens() -> None:
    plan = llama()
    # the engine started with the co-tenant there: SGLang solved with 6 GiB less free before load on every
    # rank (predict() re-solved by hand), so its workers hold that smaller pool and reserve and report its tokens
    free = plan.measured.free_before_load(plan.gpu_total_bytes)
    started = predict(plan.model, plan.settings, gpu_total_bytes=H100,
                      measured=MeasuredInputs(free_before_load_bytes=free - 6 * GIB))  # fmt: skip
    smaller = {r.gpu_index: started.ranks[r.gpu_index].kv_pool_bytes + started.ranks[r.gpu_index].reserve_bytes
               - r.kv_pool_bytes - r.reserve_bytes for r in plan.ranks}  # fmt: skip
    squeezed = node(plan, others={3: (co_tenant(9001, 6 * GIB),)}, worker_extra=smaller,
                    live={"token_capacity": started.token_capacity})  # fmt: skip
    found = diagnose(squeezed)
    finding = only(found, "co_tenant")
    expected = sglang_capacity(plan, CLEAN) - sglang_capacity(plan, CLEAN - 6 * GIB)
    assert plan.token_capacity - started.token_capacity == 128_660
    assert finding.tokens == finding.gain_tokens == expected == 128_660  # 6 GiB × mfs 0.818 ÷ 40,960 B
    assert finding.severity is Severity.WARNING and finding.gpus == (3,) and finding.bytes == 6 * GIB
    assert finding.ranks == tuple(f"sglang:4242/tp{i}" for i in range(8))  # every rank pays
    assert finding.fix == "stop pid 9001 (python, user alice, 6.00 GiB on GPU 3), then restart sglang:4242"
    assert problems(found) == {"co_tenant"}  # not also a rank imbalance: the co-tenant explains it
    assert found[0] is finding  # worst first


def test_vllm_co_tenant_blocks_a_restart_and_costs_the_utilization_that_would_fit() -> None:
    plan = llama("vllm")
    found = diagnose(node(plan, others={3: (co_tenant(9001, 6 * GIB),)}))
    restart = found[0]
    assert restart.rule == "restart_will_not_fit" and restart.severity is Severity.CRITICAL
    # a restart finds vLLM's own context taken before its weights: at TP 8, calibrated on the corpus as
    # 0.525946 GiB + 0.875165 GiB once there are several ranks (docs/calibration.md, `vllm.context`)
    clean = H100 - RESERVED - round((0.525946 + 0.875165) * GIB)
    fits = math.floor((clean - 6 * GIB) / H100 * 100) / 100
    # vLLM's parser reads the value with type=float (v0.11.0 wheel, engine/arg_utils.py:764-765
    # `--gpu-memory-utilization`): "0.9" is the 0.90 above, the option's name is the parser's
    assert fits == 0.90 and restart.fix.split() == ["--gpu-memory-utilization", "0.9"]
    assert float(restart.fix.split()[1]) == fits
    at_fit = predict(
        plan.model, plan.settings.model_copy(update={"gpu_memory_utilization": fits}), gpu_total_bytes=H100
    )
    assert restart.tokens == plan.token_capacity and restart.gain_tokens == at_fit.token_capacity
    assert restart.fix_settings is not None and restart.fix_settings.gpu_memory_utilization == 0.90
    tenant = only(found, "co_tenant")
    # vLLM budgets a share of the total: the co-tenant took nothing from the running engine (no
    # waterfall term), and stopping it saves the utilization a restart would otherwise have to drop
    assert tenant.tokens == 0 and tenant.term_tokens is None
    assert tenant.gain_tokens == plan.token_capacity - at_fit.token_capacity > 0
    assert tenant.summary.endswith("cost nothing until a restart")
    assert tenant.fix == "stop pid 9001 (python, user alice, 6.00 GiB on GPU 3), before vllm:4242 restarts"


def test_vllm_co_tenant_inside_the_headroom_is_advice_not_a_fault() -> None:
    found = diagnose(node(llama("vllm"), others={3: (co_tenant(9001, 2 * GIB),)}))
    assert only(found, "co_tenant").severity is Severity.INFO and only(found, "co_tenant").tokens == 0
    assert problems(found) == set()


# --- rule 2: orphans --------------------------------------------------------------------------


def test_orphaned_worker_on_an_engine_gpu_is_priced_and_killed_by_pid() -> None:
    plan = llama()
    orphan = co_tenant(
        5555,
        3 * GIB,
        role=ProcessRole.ORPHAN,
        title="sglang::scheduler_TP5",
        engine_kind="sglang",
        parent_pid=777,
    )
    finding = only(diagnose(node(plan, others={5: (orphan,)})), "orphan_worker")
    assert finding.tokens == sglang_capacity(plan, CLEAN) - sglang_capacity(plan, CLEAN - 3 * GIB)
    assert finding.fix == "kill 5555 (sglang::scheduler_TP5, user alice, 3.00 GiB on GPU 5; server gone), then restart sglang:4242"
    assert finding.gpus == (5,) and finding.bytes == 3 * GIB and finding.severity is Severity.WARNING


def test_orphan_on_a_gpu_without_engine_holds_bytes_but_no_tokens() -> None:
    orphan = co_tenant(
        5555, 70 * GIB, role=ProcessRole.ORPHAN, title="VLLM::Worker_TP1", engine_kind="vllm", parent_pid=1
    )
    finding = only(diagnose(node(llama(), others={8: (orphan,)}, gpus=9)), "orphan_worker")
    assert (finding.tokens, finding.bytes, finding.engine_id) == (0, 70 * GIB, None)
    assert "no running engine on GPU 8" in finding.evidence[-1]
    assert finding.whole_gpus == 1  # the GPU serves nothing while it holds it: not "no token cost"


# --- rule 3: rank imbalance -------------------------------------------------------------------


def test_an_engine_process_on_gpu0_makes_it_the_tightest_rank_for_every_rank() -> None:
    plan = llama()
    helper = co_tenant(4300, 3 * GIB, role=ProcessRole.ENGINE_SERVER, engine_id=f"sglang:{SERVER}")
    finding = only(diagnose(node(plan, others={0: (helper,)})), "rank_imbalance")
    assert finding.gpus == (0,) and finding.bytes == 3 * GIB
    # the finding prices a restart at the plan's own pre-load free (the H100 less kvtop's default 1 GiB context,
    # `predict` with nothing measured: the figure its explained pool stands on), GPU 0 less the helper's 3 GiB
    # (3 GiB × 0.818 ÷ 40,960 B = 64,330.1, each pool floored)
    restart = H100 - GIB
    assert finding.tokens == sglang_capacity(plan, restart) - sglang_capacity(plan, restart - 3 * GIB) == 64_330
    assert "pids 4300" in finding.fix
