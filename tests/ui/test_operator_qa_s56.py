"""Session 56's operator QA run on the demo node (SGLang 0.5.9, Llama-3-70B, TP8 on 8× H100, 1,229,052 tokens
logged per rank): what the screens said badly, each fixed and held here."""

from __future__ import annotations

from kvtop.commands.node_source import DemoSource
from kvtop.sources.scenario import DEFAULT_SCENARIO
from tests.ui.conftest import wait_for, wait_for_snapshot
from tests.ui.helpers import screen_lines


def demo_app(make_app, **options):
    return make_app(DemoSource.open(DEFAULT_SCENARIO), **options)


async def test_a_paused_demo_still_says_it_is_simulated(make_app):
    app = demo_app(make_app)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for_snapshot(pilot)
        assert "● simulated" in screen_lines(app)[0]
        await pilot.press("z")
        await wait_for(pilot, lambda: "PAUSED" in screen_lines(app)[0])
        top = screen_lines(app)[0]
        assert "● simulated · ⏸ PAUSED" in top, top  # was: the badge gone while paused


def test_a_late_or_stale_demo_marker_keeps_its_simulated_badge():
    from kvtop.ui.freshness import Wording, freshness

    demo = Wording(silent="silent", first="first", fresh="simulated")
    assert freshness(0.0, None, 1.0, demo).plain == "● simulated · every 1 s"
    assert freshness(2.5, None, 1.0, demo).plain == "● simulated · ● late · 2 s ago"  # 2 intervals late
    assert freshness(9.0, None, 1.0, demo).plain.startswith("● simulated · ▲ STALE 9 s")
    live = Wording(silent="silent", first="first")
    assert freshness(2.5, None, 1.0, live).plain == "● late · 2 s ago"  # a real node: no badge


#: Llama-3-70B at TP8: 8 KV heads over 8 ranks leave 1 head of 128 dims, K and V, on 80 layers per rank.
BF16_BYTES_PER_TOKEN = 1 * 128 * 2 * 80 * 2  # 40,960 B
FP8_BYTES_PER_TOKEN = 1 * 128 * 2 * 80 * 1  # 20,480 B


async def test_p_in_the_planner_probes_the_planned_fp8_pool_not_the_live_bf16_one(make_app):
    from kvtop.ui.screens.planner import PlannerScreen
    from kvtop.ui.screens.probe import ProbeScreen
    from kvtop.ui.screens.probe_confirm import ProbePlan

    app = demo_app(make_app, probe_runner=lambda request, cancel: None, probe_simulated=True)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for_snapshot(pilot)
        await pilot.press("P")  # from the dashboard: the live launch's bf16 KV
        await wait_for(pilot, lambda: isinstance(app.screen, ProbeScreen))
        live = app.screen.plan
        assert isinstance(live, ProbePlan) and not live.planned
        assert live.request.bytes_per_token_predicted == BF16_BYTES_PER_TOKEN
        await pilot.press("escape")
        await pilot.press("f", "enter")  # the FP8 finding's fix in the planner
        await wait_for(pilot, lambda: isinstance(app.screen, PlannerScreen) and app.screen.outcome is not None)
        await pilot.press("P")
        await wait_for(pilot, lambda: isinstance(app.screen, ProbeScreen))
        planned = app.screen.plan
        assert isinstance(planned, ProbePlan) and planned.planned
        assert planned.request.bytes_per_token_predicted == FP8_BYTES_PER_TOKEN  # was 40,960 (the live bf16)
        assert {b.dtype for b in planned.request.buffers} == {"float8_e4m3fn"}
        text = app.screen.query_one("#probe-plan").render().plain.replace("\n", " ")
        assert "the planner's edit predicts" in text and "(planned 20,480 B)" in text


def test_the_result_shows_the_after_figure_its_release_check_speaks_of():
    from kvtop.domain.probe import ProbeOutcome, ProbeResult
    from kvtop.sources.probe import _exited_unread
    from kvtop.ui.screens.probe import result_text

    result = ProbeResult(
        outcome=ProbeOutcome.OK, message="filled", device="cpu", mode="fill", tokens_allocated=246,
        bytes_allocated=247 * 20_480, bytes_per_token_predicted=20_480, reserve_bytes=0,
        free_before_bytes=3 * 2**30, free_after_bytes=5 * 2**29, chunks=1, released=True,
    )  # fmt: skip
    result = result.model_copy(update={"release_check": _exited_unread(result)})
    shown = result_text(result).plain
    assert "the 'after' figure is the probe's own reading" in shown
    assert "after 2.50 GiB (the probe's own reading before it exited)" in shown  # was: no after figure at all


async def test_a_sort_keeps_the_column_headings_and_the_total_under_each_name_is_labelled(make_app):
    from kvtop.ui.widgets.gpu_list import GpuList

    app = demo_app(make_app)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for_snapshot(pilot)
        gpus = app.screen.query_one(GpuList)
        legend = app.screen.query_one("#legend").render().plain
        assert legend.startswith("GPU · total  engine rank")  # '79.6 GiB' under 'H100 80GB' is the GPU's total
        unsorted_at = legend.index("│ NVML used")
        assert "79.6 GiB" in gpus.row_text(0)  # the demo's H100: 85,520,809,984 B (NVML's total) = 79.65 GiB
        await pilot.press("s", "s")  # least free
        await wait_for(pilot, lambda: "sorted: least free (s)" in app.screen.query_one("#legend").render().plain)
        legend = app.screen.query_one("#legend").render().plain
        # was: 'sorted: least free (s) │ █weights …' and no heading over the figures
        assert legend.startswith("GPU · total  engine rank     sorted: least free (s) ")
        assert "│ NVML used│GPU util" in legend
        assert legend.index("│ NVML used") == unsorted_at  # still over its figures


async def test_the_ledgers_kv_pool_row_gives_the_tokens_the_engine_reports(make_app):
    """One question, one number: the KV pool row read 1,228,931 (its bytes ÷ 40,960 B) under a summary saying the
    engine reports 1,229,052; the row now gives the engine's count, and the note says which rows are bytes ÷ rate."""
    from kvtop.ui.screens.ledger import RankLedgerScreen

    app = demo_app(make_app)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for_snapshot(pilot)
        reported = app.node.snapshot.engines[0].engine.live.token_capacity  # what the (demo) engine reports
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, RankLedgerScreen))
        await pilot.pause()
        table = app.screen.query_one("#ledger-table").render().plain.splitlines()
        summary = app.screen.query_one("#ledger-summary").render().plain
        assert f"demo simulates {reported:,}" in summary  # a demo's figure is its scenario's, never live
        pool = next(line for line in table if line.startswith("KV pool"))
        assert pool.endswith(f" {reported:,}"), pool
        assert "≈ tokens, KV pool: the count the demo simulates (not its bytes ÷ rate)" in table


def test_a_planned_probe_names_why_it_cannot_run_rather_than_probing_the_live_pool():
    from kvtop.ui.screens.probe_confirm import PlannedLaunch, plan_probe
    from tests.ui.fakes import llama_snapshot

    node = llama_snapshot(unclaimed_bytes=18 * 2**30)  # sglang pid 4242 on every GPU
    unsolved = PlannedLaunch("sglang pid 4242", None, "TP: must be at least 1 (got 0)")
    assert plan_probe(node, 3, planned=unsolved) == "nothing planned to probe: TP: must be at least 1 (got 0)"
    other = PlannedLaunch("vllm pid 7", node.engines[0].ledger)
    said = plan_probe(node, 3, planned=other)
    assert isinstance(said, str) and said.startswith("GPU 3 runs sglang pid 4242, not vllm pid 7 the planner edits")
