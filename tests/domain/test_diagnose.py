"""diagnose(): each rule on a hand-built node (real configs, real predict()), and no false alarm.

The node is Meta-Llama-3-70B at TP8 on eight H100s (81,559 MiB each, 512 MiB driver-reserved),
its workers holding what the ledger predicts less 2 GiB of runtime reserve not yet claimed.
Variants add one cause each. Token figures are asserted against predict() re-solved by hand.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from kvtop.domain.diagnose import Finding, Severity, diagnose, diagnose_ledger
from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.node import NodeSnapshot, build_snapshot
from kvtop.domain.observe import (
    EndpointState,
    EngineInstance,
    EngineLive,
    EngineRank,
    GpuObservation,
    GpuProcess,
    GpuState,
    NodeObservation,
    ProcessRole,
)
from kvtop.sources.hub import load_model
from tests.conftest import CONFIGS

MIB, GIB = 1 << 20, 1 << 30
H100 = 81559 * MIB
H200 = 143771 * MIB
RESERVED = 512 * MIB
CONTEXT = GIB  # a fresh CUDA context at a restart (SGLang's own default estimate)
SERVER = 4242
LLAMA_70B = "meta-llama--Meta-Llama-3-70B.json"


#: The SGLang release the node runs, as the demo scenarios do (its automatic fraction has no piecewise
#: prefill-graph reserve, so Llama-3-70B at TP8 on H100 gets 0.818); vLLM runs its latest rules.
SGLANG_VERSION = "0.5.9"


def ledger(config: str, engine: str, *flags: str, gpu: int = H100) -> Ledger:
    pinned = engine == "sglang" and "--engine-version" not in flags
    versioned = [*flags, "--engine-version", SGLANG_VERSION] if pinned else list(flags)
    return predict(load_model(str(CONFIGS / config)), parse_flags(engine, versioned), gpu_total_bytes=gpu)


def llama(engine: str = "sglang", *flags: str) -> Ledger:
    return ledger(LLAMA_70B, engine, "--tp", "8", *flags)


def node(
    plan: Ledger,
    *,
    others: dict[int, tuple[GpuProcess, ...]] | None = None,
    worker_extra: dict[int, int] | None = None,
    lost: int | None = None,
    gpus: int = 8,
    live: dict[str, object] | None = None,
) -> NodeSnapshot:
    """A node serving `plan` on GPUs 0..n-1, with extra processes and worker bytes per GPU."""
    kind = plan.settings.engine
    engine_id = f"{kind}:{SERVER}"
    others, worker_extra = others or {}, worker_extra or {}
    gpu_list = []
    for index in range(gpus):
        if index == lost:
            gpu_list.append(
                GpuObservation(index=index, state=GpuState.LOST, state_message="GPU has fallen off the bus")
            )
            continue
        processes = list(others.get(index, ()))
        if index < len(plan.ranks):
            row = plan.ranks[index]
            if kind == "sglang":
                # the context less the driver's reserved bytes (NVML counts those apart from every process)
                held = (
                    row.weights_bytes + row.kv_pool_bytes + row.reserve_bytes + CONTEXT - RESERVED - 2 * GIB
                )
            else:  # vLLM holds its requested share of total, less what it has not claimed, plus its context
                held = math.ceil(plan.gpu_total_bytes * plan.engine.memory_fraction) - GIB
            processes.insert(0, GpuProcess(
                pid=SERVER + 1 + index, used_bytes=held + worker_extra.get(index, 0), name="python3",
                role=ProcessRole.ENGINE_WORKER, engine_id=engine_id, engine_kind=kind, rank=EngineRank(tp=row.tp_rank),
            ))  # fmt: skip
        used = sum(p.used_bytes or 0 for p in processes)
        gpu_list.append(GpuObservation(
            index=index, total_bytes=plan.gpu_total_bytes, used_bytes=used, reserved_bytes=RESERVED,
            free_bytes=plan.gpu_total_bytes - used - RESERVED, processes=tuple(processes),
        ))  # fmt: skip
    engine_live = EngineLive(
        state=EndpointState.OK,
        token_capacity=plan.token_capacity,
        memory_fraction=plan.engine.memory_fraction,
    )
    engine = EngineInstance(
        engine_id=engine_id, kind=kind, server_pid=SERVER, settings=plan.settings, host="127.0.0.1", port=30000,
        live=engine_live.model_copy(update=live or {}),
    )  # fmt: skip
    observation = NodeObservation(taken_at=0.0, gpus=tuple(gpu_list), engines=(engine,))
    return build_snapshot(observation, {engine_id: plan}, source="test")


def co_tenant(
    pid: int, used: int, *, role: ProcessRole = ProcessRole.CO_TENANT, **fields: object
) -> GpuProcess:
    return GpuProcess.model_validate(
        {"pid": pid, "used_bytes": used, "name": "python", "user": "alice", "role": role, **fields}
    )


def only(findings: tuple[Finding, ...], rule: str) -> Finding:
    matching = [f for f in findings if f.rule == rule]
    assert len(matching) == 1, [f.rule for f in findings]
    return matching[0]


def problems(findings: tuple[Finding, ...]) -> set[str]:
    return {f.rule for f in findings if f.severity is not Severity.INFO}


def sglang_capacity(plan: Ledger, free_before_load: int, **settings: object) -> int:
    """SGLang's capacity for `plan` solved with a measured pre-load free memory (min over ranks)."""
    measured = MeasuredInputs(free_before_load_bytes=free_before_load)
    return predict(
        plan.model,
        plan.settings.model_copy(update=settings),
        gpu_total_bytes=plan.gpu_total_bytes,
        measured=measured,
    ).token_capacity


CLEAN = H100 - RESERVED - CONTEXT  # free before load at a restart, nothing else on the GPU


# --- no false alarm ---------------------------------------------------------------------------


def test_healthy_llama_tp8_node_has_no_warning_or_critical_finding() -> None:
    found = diagnose(node(llama()))
    assert problems(found) == set()
    assert [f.rule for f in found] == ["bf16_kv_where_fp8_supported"]  # advice only


def test_healthy_vllm_node_has_no_warning_or_critical_finding() -> None:
    assert problems(diagnose(node(llama("vllm")))) == set()


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
    # 0.51 GiB + 1.025714 GiB once there are several ranks (docs/calibration.md, `vllm.context`)
    clean = H100 - RESERVED - round((0.51 + 1.025714) * GIB)
    fits = math.floor((clean - 6 * GIB) / H100 * 100) / 100
    assert fits == 0.89 and restart.fix == "--gpu-memory-utilization 0.89"
    at_fit = predict(
        plan.model, plan.settings.model_copy(update={"gpu_memory_utilization": fits}), gpu_total_bytes=H100
    )
    assert restart.tokens == plan.token_capacity and restart.gain_tokens == at_fit.token_capacity
    assert restart.fix_settings is not None and restart.fix_settings.gpu_memory_utilization == 0.89
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


# --- rules 6-11: what the ledger alone says ---------------------------------------------------


def test_bf16_kv_advice_states_the_fp8_gain_and_the_quality_caveat() -> None:
    plan = llama()
    (finding,) = diagnose_ledger(plan)
    fp8 = predict(
        plan.model, plan.settings.model_copy(update={"kv_cache_dtype": "fp8_e4m3"}), gpu_total_bytes=H100
    )
    assert finding.rule == "bf16_kv_where_fp8_supported" and finding.severity is Severity.INFO
    assert (
        finding.gain_tokens == fp8.token_capacity - plan.token_capacity
        and finding.fix == "--kv-cache-dtype fp8_e4m3"
    )
    assert any("quality" in fact for fact in finding.evidence)
    assert diagnose_ledger(llama("sglang", "--kv-cache-dtype", "fp8_e4m3")) == ()


def test_tp_above_kv_heads_recomputes_with_dp_attention() -> None:
    plan = ledger("Qwen--Qwen3-235B-A22B.json", "sglang", "--tp", "8", gpu=H200)  # 4 KV heads
    finding = only(diagnose_ledger(plan), "tp_above_kv_heads")
    alt = ledger(
        "Qwen--Qwen3-235B-A22B.json", "sglang", "--tp", "8", "--dp", "2", "--enable-dp-attention", gpu=H200
    )
    assert finding.fix == "--tp-size 8 --dp-size 2 --enable-dp-attention"
    assert finding.gain_tokens == 2 * alt.token_capacity - plan.token_capacity == 1_300_087
    assert finding.severity is Severity.WARNING
    assert "tp_above_kv_heads" not in {
        f.rule for f in diagnose_ledger(llama())
    }  # 8 heads over TP8: no copies


def test_tp_above_kv_heads_without_a_better_layout_is_advice() -> None:
    plan = ledger("Qwen--Qwen3-235B-A22B.json", "sglang", "--tp", "8")  # on H100 TP4 replicas do not fit
    finding = only(diagnose_ledger(plan), "tp_above_kv_heads")
    assert finding.severity is Severity.INFO and finding.tokens == 0


@pytest.mark.parametrize(
    ("engine", "fix", "alt_flags"),
    [
        (
            "sglang",
            "--tp-size 8 --dp-size 8 --enable-dp-attention",
            ["--tp", "8", "--dp", "8", "--enable-dp-attention"],
        ),
        (
            "vllm",
            "--data-parallel-size 8 --enable-expert-parallel",
            ["--dp", "8", "--enable-expert-parallel"],
        ),
    ],
)
def test_mla_under_attention_tp_recomputes_with_dp_attention(
    engine: str, fix: str, alt_flags: list[str]
) -> None:
    plan = ledger("deepseek-ai--DeepSeek-V3.json", engine, "--tp", "8", gpu=H200)
    finding = only(diagnose_ledger(plan), "mla_under_attention_tp")
    alt = ledger("deepseek-ai--DeepSeek-V3.json", engine, *alt_flags, gpu=H200)
    assert finding.fix == fix and finding.severity is Severity.WARNING
    assert finding.gain_tokens == 8 * alt.token_capacity - plan.token_capacity > 2 * plan.token_capacity
    spread = alt
    assert "mla_under_attention_tp" not in {f.rule for f in diagnose_ledger(spread)}


def test_large_req_to_token_table_names_the_max_running_requests_that_frees_it() -> None:
    plan = ledger("meta-llama--Llama-3.1-8B-Instruct.json", "sglang")  # 131,072 context × 2,048 requests
    finding = only(diagnose_ledger(plan), "req_to_token_large")
    assert finding.bytes == plan.engine.req_to_token_bytes == 2049 * 131076 * 4
    assert finding.fix == "--max-running-requests 512 --mem-fraction-static 0.844"
    fixed = predict(
        plan.model,
        plan.settings.model_copy(update={"max_running_requests": 512, "mem_fraction_static": 0.844}),
        gpu_total_bytes=H100,
    )
    assert finding.gain_tokens == fixed.token_capacity - plan.token_capacity > 0
    assert "req_to_token_large" not in {f.rule for f in diagnose_ledger(llama())}  # 8,192 context: 134 MB


def test_mamba_state_pool_capping_running_requests_is_named() -> None:
    plan = ledger("Qwen--Qwen3-Next-80B-A3B-Thinking.json", "sglang", "--tp", "4")
    finding = only(diagnose_ledger(plan), "mamba_state_caps_requests")
    assert plan.engine.max_running_requests == 242 and "242" in finding.summary
    assert finding.fix == "--disable-radix-cache" and finding.bytes == plan.engine.state_pool_bytes
    # SGLang 0.5.9 (handle_max_mamba_cache): K = int(share // per_req), share = rest × 0.9 ÷ 1.9 (the mamba
    # full-memory ratio) with rest = 84,447,068,160 − 39,925,738,176 weights (Qwen3-Next's gated q_proj counted,
    # as the engines build it) − 14,862,683,996 reserve: int(14,048,832,310.1 // 19,316,736) = 727 slots, 3 per
    # request with the radix cache (242), 1 without it (727)
    assert any("727 running requests" in fact for fact in finding.evidence)
    assert any("3 state slots" in fact for fact in finding.evidence)


def test_vllm_hybrid_kv_manager_disabled_costs_swa_layers_full_length() -> None:
    plan = ledger("google--gemma-3-27b-it.json", "vllm", "--tp", "2", "--disable-hybrid-kv-cache-manager")
    finding = only(diagnose_ledger(plan), "hybrid_kv_manager_disabled")
    enabled = ledger("google--gemma-3-27b-it.json", "vllm", "--tp", "2")
    # 1 full + 6 SWA groups of 10: 8,192 + 6 × (cdiv(1,023 + 2 × 8,192 in flight, 16) + 1) = 14,726 blocks a
    # request (async scheduling's 2 batches, vLLM's default: docs/engines/vllm.md §3). The weights hold
    # Gemma-3's four norms a layer (input, post-attention, pre- and post-feedforward: Gemma3DecoderLayer) and
    # the SigLIP tower and projector vLLM builds on every rank: 422,452,080 + 12,388,608 B at TP 2
    # (test_vision_towers.test_gemma3_siglip_tower_by_hand), which the KV budget loses
    assert finding.gain_tokens == enabled.token_capacity - plan.token_capacity == 666_655 - 193_280
    assert finding.fix_settings is not None and not finding.fix_settings.disable_hybrid_kv_cache_manager
    assert "hybrid_kv_manager_disabled" not in {f.rule for f in diagnose_ledger(enabled)}


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
    assert found[0] is lost  # critical first; among equals, whole GPUs before token figures
