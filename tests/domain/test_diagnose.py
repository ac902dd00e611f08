"""diagnose(): no false alarm on a healthy node, and the rules on what is left (unexplained bytes,
invisible pids, a lost GPU, ordering, replayed inputs, the share above SGLang's own, documented ids).

The node is tests/diagnose_node.py's (Meta-Llama-3-70B at TP8 on eight H100s). Token figures are asserted against
predict() re-solved by hand.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kvtop.domain.diagnose import Severity, diagnose, diagnose_ledger
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.observe import (
    GpuProcess,
    ProcessRole,
)
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS
from tests.diagnose_node import (
    GIB,
    co_tenant,
    llama,
    node,
    only,
    problems,
)

# --- no false alarm ---------------------------------------------------------------------------


def test_healthy_llama_tp8_node_has_no_warning_or_critical_finding() -> None:
    found = diagnose(node(llama()))
    assert problems(found) == set()
    assert [f.rule for f in found] == ["bf16_kv_where_fp8_supported"]  # advice only


def test_healthy_vllm_node_has_no_warning_or_critical_finding() -> None:
    assert problems(diagnose(node(llama("vllm")))) == set()


# --- rule 13 and the rest ---------------------------------------------------------------------


def test_unexplained_worker_bytes_are_shown_with_their_worth_in_tokens() -> None:
    plan = llama()
    finding = only(diagnose(node(plan, worker_extra={2: 4 * GIB})), "unexplained_bytes")
    assert finding.gpus == (2,) and finding.bytes == 2 * GIB  # 4 GiB extra less 2 GiB of unclaimed reserve
    assert finding.tokens == 2 * GIB // 40_960 and finding.ranks == ("sglang:4242/tp2",)


def test_bytes_of_invisible_pids_are_unattributed_not_a_named_co_tenant() -> None:
    hidden = GpuProcess(pid=77, used_bytes=2 * GIB, role=ProcessRole.UNATTRIBUTED)
    found = diagnose(node(llama(), others={1: (hidden,)}))
    assert only(found, "unattributed_bytes").gpus == (1,) and "co_tenant" not in {f.rule for f in found}


def test_a_lost_gpu_takes_its_engine_down() -> None:
    plan = llama()
    finding = diagnose(node(plan, lost=5))[0]
    assert (finding.rule, finding.severity, finding.gpus) == ("gpu_lost", Severity.CRITICAL, (5,))
    assert finding.ranks == ("sglang:4242/tp5",) and finding.tokens == plan.token_capacity
    assert finding.fix.startswith("reset GPU 5")


def test_findings_are_frozen_and_sorted_worst_first() -> None:
    found = diagnose(node(llama(), others={3: (co_tenant(9001, 10 * GIB),)}, worker_extra={2: 4 * GIB}))
    order = [({"critical": 0, "warning": 1, "info": 2}[f.severity.value], -f.tokens) for f in found]
    assert order == sorted(order)
    with pytest.raises(ValueError):
        found[0].tokens = 1  # type: ignore[misc]


def test_ledger_rules_replay_the_measured_inputs_of_a_logged_ledger() -> None:
    """A ledger solved from a log's figures (C13: 78.81 GiB free before load, 63.72 GiB after) keeps them in what-ifs."""
    measured = MeasuredInputs(free_before_load_bytes=int(78.81 * GIB), free_after_load_bytes=int(63.72 * GIB))
    settings = parse_flags("sglang", ["--mem-fraction-static", "0.88"])
    model = load_model(str(CONFIGS / "meta-llama--Llama-3.1-8B-Instruct.json"))
    plan = predict(model, settings, gpu_total_bytes=80 * GIB, measured=measured)
    fp8 = predict(
        model,
        settings.model_copy(update={"kv_cache_dtype": "fp8_e4m3"}),
        gpu_total_bytes=80 * GIB,
        measured=measured,
    )
    finding = only(diagnose_ledger(plan), "bf16_kv_where_fp8_supported")
    assert plan.token_capacity == 444_520  # the log's 444,500 to rounding
    assert finding.gain_tokens == fp8.token_capacity - plan.token_capacity == 444_521


def test_a_memory_share_above_sglangs_own_is_an_out_of_memory_risk() -> None:
    """SGLang 0.5.9 on an H100 keeps pre-load × (1 − 0.818) for CUDA graphs and activations
    (docs/engines/sglang.md §5); --mem-fraction-static 0.95 keeps pre-load × 0.05: with the estimated
    pre-load of 79.65 − 1 GiB, 3.93 GiB against 14.31 GiB."""
    plan = llama("sglang", "--mem-fraction-static", "0.95")
    finding = next(f for f in diagnose_ledger(plan) if f.rule == "reserve_below_engines_own")
    pre = plan.gpu_total_bytes - GIB
    assert (
        finding.severity is Severity.WARNING
        and finding.fix == "drop --mem-fraction-static (the engine's own share)"
    )
    assert finding.bytes == round(pre * (1 - 0.818)) - round(pre * 0.05)
    assert finding.fix_settings is not None and finding.fix_settings.mem_fraction_static is None
    assert not [f for f in diagnose_ledger(llama()) if f.rule == "reserve_below_engines_own"]  # auto: none


def test_every_finding_id_is_documented() -> None:
    """docs/findings.md names every rule a finding can carry (the exporter's `rule` label too)."""
    from kvtop.domain.diagnose_findings import Rule

    text = (Path(__file__).parents[2] / "docs" / "findings.md").read_text()
    assert [rule.value for rule in Rule if f"| `{rule.value}` |" not in text] == []


def test_a_lost_gpu_outside_every_engine_is_a_whole_gpu_lost_and_an_empty_gpu_is_advice() -> None:
    """The gpu5-lost demo: GPU 5 belongs to no engine (its bytes from its siblings: NVML reads none of
    a lost GPU); GPU 4 runs nothing on a node whose engines could use it."""
    from kvtop.commands.node_source import DemoSource
    from kvtop.sources.scenario import load_scenario

    snapshot = DemoSource(load_scenario("gpu5-lost")).collect_at(0)
    found = diagnose(snapshot)
    lost, idle = only(found, "gpu_lost"), only(found, "idle_gpu")
    assert (lost.whole_gpus, lost.tokens, lost.engine_id) == (1, 0, None)
    assert lost.bytes == snapshot.observation.gpu(0).total_bytes  # an H100 like its siblings
    assert (idle.gpus, idle.severity, idle.whole_gpus) == ((4,), Severity.INFO, 1)
    assert idle.bytes == snapshot.observation.gpu(4).free_bytes
    # the demo's idle GPU reads 0 B used (NVML v2: used excludes the driver's reserve): said in words, not '0.00 GiB'
    assert snapshot.observation.gpu(4).used_bytes == 0
    assert idle.evidence == ("NVML lists no process on GPU 4; no memory in use",)
    assert found[0] is lost  # critical first; among equals, whole GPUs before token figures


@pytest.mark.parametrize(("used", "said"), [
    (0, "no memory in use"),
    (524_288, "524,288 B in use"),  # under 1 MiB: the bytes themselves
    (3 * 2**20, "3 MiB in use"),  # a persistence daemon's few MiB: not '0.00 GiB'
    (5 * 2**30 // 4, "1.25 GiB in use"),
])  # fmt: skip
def test_an_idle_gpus_memory_in_use_never_reads_zero_gib(used: int, said: str) -> None:
    from kvtop.domain.diagnose import _in_use

    assert _in_use(used) == said
