"""One truth per question: every surface shows the domain's one figure, on every demo node.

For each rank: the capacity waterfall (`RankView.capacity`) is the answer to "how many tokens, and
where did the rest go"; the snapshot JSON, the dashboard row, the exporter's series and the
findings must read it, never recompute it. The planner's "before" must be the waterfall's
explained state. The waterfall itself must sum exactly.
"""

from __future__ import annotations

import functools

import pytest

from kvtop.commands.node_source import DemoSource
from kvtop.commands.render_snapshot import snapshot_json
from kvtop.domain.capacity import CapacityCause
from kvtop.domain.diagnose import diagnose
from kvtop.sources.exporter_series import rank_label, snapshot_families
from kvtop.sources.scenario import load_scenario, scenario_names
from kvtop.ui.planning import plan
from kvtop.ui.screens.dashboard import gpu_rows
from kvtop.ui.state import NodeState
from kvtop.units import fmt_tokens_brief
from tests.calibrated_figures import GIB, demo_llama_70b_tokens, demo_sglang_h100_pre_load_bytes

# the demo's SGLang Llama-3-70B TP 8 live figure: SGLang's arithmetic on the 77.43 GiB free a real TP 8 start printed
# and the weights it holds (the book, the rope cache and the caching allocator's tails: 1,229,576 before they counted)
LIVE_TOKENS = 1_229_052
SQUEEZED_LIVE_TOKENS = 1_100_391  # the same with the 6 GiB notebook on GPU 3 (1,100,916 before)

SCENARIOS = scenario_names()


@functools.cache
def _snapshot(name: str):  # type: ignore[no-untyped-def]
    """A demo node's snapshot at its start, built once per scenario in a worker (a frozen value: every test here
    reads it, none changes it)."""
    return DemoSource(load_scenario(name)).collect_at(0)


@pytest.mark.parametrize("name", SCENARIOS)
def test_every_waterfall_sums_exactly(name: str) -> None:
    for view in _snapshot(name).engines:
        for rank in view.ranks:
            waterfall = rank.capacity
            assert waterfall is not None, (name, view.engine.engine_id, rank.gpu_index)
            assert waterfall.clean_tokens + sum(t.tokens for t in waterfall.terms) == waterfall.actual_tokens
            if rank.observed.token_capacity is not None:  # the engine's own figure is the actual one
                assert waterfall.actual_tokens == rank.observed.token_capacity


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_snapshot_json_is_the_waterfall(name: str) -> None:
    snapshot = _snapshot(name)
    out = snapshot_json(snapshot)
    for view, shown in zip(snapshot.engines, out["engines"], strict=True):
        for rank, row in zip(view.ranks, shown["ranks"], strict=True):
            capacity = row["capacity"]
            assert capacity["clean_tokens"] == rank.capacity.clean_tokens
            assert capacity["actual_tokens"] == rank.capacity.actual_tokens
            assert [(t["cause"], t["tokens"]) for t in capacity["terms"]] == [
                (t.cause.value, t.tokens) for t in rank.capacity.terms
            ]


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_snapshot_jsons_engine_predicted_is_its_ranks_predicted(name: str) -> None:
    """The engine-level `predicted` is the explained ledger, as each rank's `predicted` is its rank (before,
    the engine level was the clean plan: 1,221,253 tokens where its ranks said 1,092,592 on the co-tenant
    node); the launch's own plan on empty GPUs is `plan`."""
    snapshot = _snapshot(name)
    for view, shown in zip(snapshot.engines, snapshot_json(snapshot)["engines"], strict=True):
        for rank, row in zip(view.ranks, shown["ranks"], strict=True):
            if rank.capacity is None or row["predicted"] is None:
                continue
            assert shown["predicted"]["token_capacity"] == row["predicted"]["token_capacity"]
            assert shown["predicted"]["token_capacity"] == rank.capacity.explained_tokens


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_dashboard_row_is_the_waterfalls_change(name: str) -> None:
    snapshot = _snapshot(name)
    for row in gpu_rows(NodeState(source_label=name, snapshot=snapshot)):
        if row.rank is None or row.rank.capacity is None or row.gpu.state.value != "ok":
            continue
        change = row.rank.capacity.actual_tokens - row.rank.capacity.clean_tokens
        if change == 0:
            assert row.capacity is None  # nothing moved: the GPU's own state shows
        else:
            assert row.capacity is not None and row.capacity.brief == fmt_tokens_brief(change)
            assert row.capacity.short == (change < 0)


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_exporter_series_are_the_waterfall(name: str) -> None:
    snapshot = _snapshot(name)
    families = {family.name: family for family in snapshot_families(snapshot, "n", None)}
    change = {
        (s.labels["engine"], s.labels["rank"], s.labels["cause"]): s.value
        for s in families["kvtop_rank_capacity_change_tokens"].samples
    }
    capacity = {
        (s.labels["engine"], s.labels["rank"], s.labels["source"]): s.value
        for s in families["kvtop_rank_token_capacity"].samples
    }
    for view in snapshot.engines:
        for rank in view.ranks:
            key = (view.engine.engine_id, rank_label(rank))
            assert capacity[(*key, "clean")] == rank.capacity.clean_tokens
            assert capacity[(*key, "explained")] == rank.capacity.explained_tokens
            for term in rank.capacity.terms:
                assert change[(*key, term.cause.value)] == term.tokens


@pytest.mark.parametrize("name", SCENARIOS)
def test_a_findings_cost_is_its_waterfall_term(name: str) -> None:
    snapshot = _snapshot(name)
    for finding in diagnose(snapshot):
        if finding.term_tokens is None:
            continue
        view = next(v for v in snapshot.engines if v.engine.engine_id == finding.engine_id)
        terms = {t.cause: t for r in view.ranks for t in r.capacity.terms}
        assert finding.cause in terms and finding.term_tokens == terms[finding.cause].tokens
        assert finding.tokens == -finding.term_tokens


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_planners_before_is_the_explained_state(name: str) -> None:
    for view in _snapshot(name).engines:
        if view.explained is None or not view.ranks:
            continue
        basis = view.explained  # what the app's planner opens on (KvtopApp._plan_basis)
        outcome = plan(
            basis.model, basis.settings, {}, gpu_total_bytes=basis.gpu_total_bytes, gpu_name=basis.gpu_name,
            measured=basis.measured, draft=basis.draft,
        )  # fmt: skip
        assert outcome.before is not None
        explained = {rank.capacity.explained_tokens for rank in view.ranks}
        assert explained == {outcome.before.token_capacity}, (name, view.engine.engine_id)


def test_the_co_tenant_node_has_one_named_cause() -> None:
    """The scenario's 6 GiB notebook on GPU 3 is the one named cause on every rank: 6 GiB × 0.818 ÷
    40,960 B = 128,660.3 tokens (SGLang 0.5.9's auto fraction on an H100, Llama-3-70B TP8); each pool is
    floored to whole tokens (tests/calibrated_figures.py, from the committed fits: at the fits of da524f1c
    1,221,506.15 clean, 1,092,845.87 with the notebook; the weights hold SGLang's float32 rope cache, 8,192 × 128 ×
    4 B, beside the checkpoint), so the term is 128,661 there (128,660 at the fits before). Beside it, unnamed, the
    gap between kvtop's explained pool and what SGLang sized from what it measured (77.43 GiB free before its weights,
    as a real TP 8 start on an H100 printed it, less the 6 GiB: 1,100,916 tokens, test_demo) is the same on every
    rank: +8,071 there."""
    clean = demo_llama_70b_tokens(8)
    squeezed = demo_llama_70b_tokens(8, demo_sglang_h100_pre_load_bytes(8) - 6 * GIB)
    cost = clean - squeezed
    assert 128_660 <= cost <= 128_661  # 128,660.3 by two floors
    view = _snapshot("llama70b-tp8-foreign-gpu3").engines[0]
    for rank in view.ranks:
        term, gap = rank.capacity.terms
        assert (term.cause, term.tokens) == (CapacityCause.OTHER_PROCESSES, -cost)
        assert (gap.cause, gap.tokens) == (CapacityCause.ENGINE_VS_PREDICTION, SQUEEZED_LIVE_TOKENS - squeezed)


def test_the_restart_as_launched_is_one_figure_in_every_finding() -> None:
    """`diagnose` printed 1,093,278 as the FP8 advice's base and 1,093,320 as the co-tenant's "or:" restart as
    launched: the advice read the explained ledger (CUDA's calibrated H100 total less SGLang's TP 8 context, less the
    6 GiB notebook), the restart NVML's free + processes − context, where NVML's reserved (491,194,941 B in the demo)
    is not CUDA's (calibrated 493,278,001 B): 2,083,060 B more, 41 tokens. Both are now SGLang's pool from the same
    pre-load less the 6 GiB (SGLang sizes every rank by the least free GPU), by the engine's arithmetic done in
    tests/calibrated_figures.py."""
    as_launched = demo_llama_70b_tokens(8, demo_sglang_h100_pre_load_bytes(8) - 6 * GIB)
    findings = diagnose(_snapshot("llama70b-tp8-foreign-gpu3"))
    (co_tenant,) = [f for f in findings if f.rule == "co_tenant"]
    (fp8,) = [f for f in findings if f.rule == "bf16_kv_where_fp8_supported"]
    assert co_tenant.alternative is not None
    assert co_tenant.alternative.restart_tokens == as_launched
    assert f"capacity {as_launched:,} predicted → " in " ".join(fp8.evidence)
    assert fp8.gain_tokens == demo_llama_70b_tokens(8, demo_sglang_h100_pre_load_bytes(8) - 6 * GIB, cell=20_480) - as_launched
    # the co-tenant's fix: a restart without it gains what the waterfall says it costs
    assert co_tenant.gain_tokens == demo_llama_70b_tokens(8) - as_launched


def test_a_co_tenant_that_came_after_the_engine_costs_nothing_now() -> None:
    """The same 6 GiB notebook, started an hour after the engine: SGLang sized its pool without it,
    so the waterfall names no cause (only the gap between kvtop's prediction and what SGLang measured) and the
    finding prices only a restart."""
    scenario = load_scenario("llama70b-tp8-foreign-gpu3")
    late = scenario.model_copy(
        update={"foreign_processes": tuple(
            f.model_copy(update={"started_before_engines": False}) for f in scenario.foreign_processes
        )}
    )  # fmt: skip
    snapshot = DemoSource(late).collect_at(0)
    view = snapshot.engines[0]
    assert {tuple(term.cause for term in rank.capacity.terms) for rank in view.ranks} == {(CapacityCause.ENGINE_VS_PREDICTION,)}
    # the clean prediction (test_demo: CUDA's H100 total less SGLang's calibrated TP 8 context, less the weights with
    # SGLang's rope cache, SGLang's arithmetic: 50,032,891,900 B ÷ 40,960 B at the fits of da524f1c) against what
    # SGLang sized from what it measured (test_demo: 50,363,451,451 B ÷ 40,960 B)
    assert view.ledger.token_capacity == demo_llama_70b_tokens(8)
    assert {rank.capacity.actual_tokens for rank in view.ranks} == {LIVE_TOKENS}
    (finding,) = [f for f in diagnose(snapshot) if f.rule == "co_tenant"]
    assert finding.tokens == 0 and finding.term_tokens is None and finding.gain_tokens > 128_000
    assert any(line.startswith("it came after the engine started") for line in finding.evidence)
    # the signal dialog does not promise tokens over today's: stopping it keeps what a restart would lose
    from kvtop.domain.observe import ProcessRole
    from kvtop.ui.process_rows import SignalFacts
    from kvtop.ui.screens.signal_confirm import buys_text

    facts = SignalFacts(pid=4242, command="python train.py", role=ProcessRole.CO_TENANT, engine="—", user="ada",
                        held=((3, 6 << 30),), finding=finding, refusal=None)  # fmt: skip
    said = buys_text(facts).plain
    assert said.startswith(f"nothing now; keeps +{finding.gain_tokens:,} tokens per rank that ")
    assert "next restart would lose to it" in said and "once it restarts" not in said


def test_an_unexplained_loss_holds_bytes_like_every_other_cause() -> None:
    """A term's bytes are what the cause holds: positive where tokens were lost (a review found the
    unexplained term signed the other way from the rest)."""
    from kvtop.domain.capacity import CapacitySource
    from kvtop.domain.waterfall import RankActual, engine_capacity

    view = _snapshot("llama70b-tp8-sglang").engines[0]
    clean = view.explained
    assert clean is not None
    lost = 10_000
    capacity = engine_capacity(
        clean, (), view.engine.engine_id, [RankActual(gpu_index=0, tokens=clean.token_capacity - lost, source=CapacitySource.LIVE)]
    )
    (term,) = capacity.waterfalls[0].terms
    assert term.cause is CapacityCause.ENGINE_VS_PREDICTION
    assert (term.tokens, term.bytes) == (-lost, lost * clean.kv_bytes_per_token)


def test_the_token_gap_and_the_byte_gap_have_two_names() -> None:
    """Demo llama70b-tp8-sglang, GPU 0: SGLang holds 1,229,052 tokens live (test_demo) against kvtop's 1,221,934
    (tests/calibrated_figures.py), +7,642 tokens that are the engine's figure against the prediction; its worker's
    bytes are what the prediction says (the rank ledger's byte gap, 0.00 GiB). They were both "unexplained"."""
    view = _snapshot("llama70b-tp8-sglang").engines[0]
    rank = view.ranks[0]
    (term,) = rank.capacity.terms
    assert term.tokens == LIVE_TOKENS - demo_llama_70b_tokens(8)
    assert term.describe() == f"engine vs prediction +{LIVE_TOKENS - demo_llama_70b_tokens(8):,}"
    assert rank.capacity.describe() == (
        f"clean {demo_llama_70b_tokens(8):,} → engine vs prediction +{LIVE_TOKENS - demo_llama_70b_tokens(8):,} → {LIVE_TOKENS:,} simulated"
    )  # a demo's engine figure is its scenario's (`CapacitySource.of_reading`), never live
    assert term.cause.value == "engine_vs_prediction"  # the id in JSON and metrics: the same name, no "unexplained"
    from kvtop.ui.ledger_rows import rank_ledger

    ledger = rank_ledger(_snapshot("llama70b-tp8-sglang"), 0)
    assert ledger is not None
    rows = {row.label: row for row in ledger.rows}
    assert "unexplained" not in rows and rows["unexplained bytes"].observed_bytes == rank.unexplained_bytes
