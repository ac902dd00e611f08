"""diagnose() on the engine's own memory: weights (rule 4), reserve (rule 5) and a restart (rule 12).

The node is tests/diagnose_node.py's (Meta-Llama-3-70B at TP8 on eight H100s). Token figures are asserted against
predict() re-solved by hand.
"""

from __future__ import annotations

import math

from kvtop.domain.diagnose import Severity, diagnose
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.ledger import predict
from tests.diagnose_node import (
    GIB,
    H100,
    co_tenant,
    llama,
    node,
    only,
    problems,
)

# --- rule 4: weights --------------------------------------------------------------------------


def test_weights_ten_percent_above_the_prediction_are_named_and_priced() -> None:
    plan = llama()
    observed = int(plan.weights_bytes * 1.10)
    finding = only(diagnose(node(plan, live={"weight_bytes": observed})), "weights_larger_than_predicted")
    heavier = predict(
        plan.model, plan.settings, gpu_total_bytes=H100, measured=MeasuredInputs(weights_bytes=observed)
    )
    assert finding.bytes == observed - plan.weights_bytes
    assert finding.tokens == plan.token_capacity - heavier.token_capacity > 0
    assert "(+10%) more than predicted" in finding.summary  # 1.10 × the prediction, through `wording.percent`


def test_weights_twice_the_prediction_point_at_the_dtype() -> None:
    found = diagnose(node(llama(), live={"weight_bytes": 2 * llama().weights_bytes}))
    finding = only(found, "weights_larger_than_predicted")
    assert finding.fix == "--dtype bfloat16" and "2.00×" in finding.evidence[1]


def test_weights_within_three_percent_are_not_a_finding() -> None:
    plan = llama()
    assert "weights_larger_than_predicted" not in problems(
        diagnose(node(plan, live={"weight_bytes": int(plan.weights_bytes * 1.02)}))
    )


# --- rule 5: reserve --------------------------------------------------------------------------


def test_sglang_mem_fraction_below_automatic_costs_tokens() -> None:
    plan = llama("sglang", "--mem-fraction-static", "0.75")
    finding = only(diagnose(node(plan, live={"memory_fraction": 0.75})), "reserve_larger_than_expected")
    auto = llama()
    assert auto.engine.memory_fraction == 0.818 and finding.fix == "--mem-fraction-static 0.818"
    assert finding.tokens == auto.token_capacity - plan.token_capacity > 0
    assert finding.severity is Severity.WARNING


def test_vllm_kv_cache_smaller_than_predicted_shows_the_equivalent_utilization() -> None:
    plan = llama("vllm")
    observed = plan.engine.kv_budget_bytes - 3 * GIB
    finding = only(diagnose(node(plan, live={"kv_cache_bytes": observed})), "reserve_larger_than_expected")
    smaller = predict(
        plan.model, plan.settings, gpu_total_bytes=H100, measured=MeasuredInputs(available_kv_bytes=observed)
    )
    assert finding.bytes == 3 * GIB and finding.tokens == plan.token_capacity - smaller.token_capacity
    raised = math.ceil((0.92 + 3 * GIB / H100) * 10000) / 10000
    assert finding.fix == f"--gpu-memory-utilization {raised:g}" and finding.gain_tokens > 0


# --- rule 12: restart -------------------------------------------------------------------------


def test_sglang_restart_with_a_huge_co_tenant_leaves_no_kv_memory() -> None:
    plan = llama()
    found = diagnose(node(plan, others={3: (co_tenant(9001, 60 * GIB),)}))
    assert found[0].rule == "restart_will_not_fit" and found[0].severity is Severity.CRITICAL
    assert (
        found[0].fix == "free 60.00 GiB on GPU 3 (stop its other processes)"
        and found[0].tokens == plan.token_capacity
    )


def test_sglang_restart_trips_the_balance_check_beyond_ten_percent() -> None:
    plan = llama()
    finding = only(diagnose(node(plan, others={3: (co_tenant(9001, 10 * GIB),)})), "restart_will_not_fit")
    assert finding.severity is Severity.WARNING and "unbalanced" in finding.evidence[0]
    assert "restart_will_not_fit" not in problems(
        diagnose(node(plan, others={3: (co_tenant(9001, 6 * GIB),)}))
    )


def test_weights_twice_the_prediction_with_the_dtype_already_set_say_so_not_a_setting_kvtop_lacks() -> None:
    """A launch that already says `--dtype bfloat16` (SGLang's server_args `--dtype`, 0.5.5 wheel :2011-2015) gains
    nothing from that fix: the words say the value is set, never that the engine lacks the setting."""
    plan = llama("sglang", "--dtype", "bfloat16")
    finding = only(diagnose(node(plan, live={"weight_bytes": 2 * plan.weights_bytes})), "weights_larger_than_predicted")
    assert finding.fix.startswith("the launch already sets dtype bfloat16")
    assert "not a setting" not in finding.fix
