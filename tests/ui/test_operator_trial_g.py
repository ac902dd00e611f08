"""Defects an operator trial found (session 48, tmux at 80×24, 100×30 and 160×45 on the demo nodes), in the planner:
a layout error naming the model's file path (the status line wrapped at 80 columns), a plan 'at risk' said only in
a per-rank line scrolled out of sight while the status said '✓ valid', 'ctrl+u' typed with the new text behind
it clearing that text too (Textual runs the binding after the queued characters), a LoRA rank dropped unseen, a host
size's bound unsaid; and in the process pane, a filter's error overwritten by the next redraw."""

from __future__ import annotations

from textual import events
from textual.widgets import Input

from tests.calibrated_figures import GIB, H100_CUDA_TOTAL_BYTES, sglang_context_bytes
from tests.ui.conftest import wait_for
from tests.ui.helpers import retype, shown


async def test_a_layout_error_names_the_field_and_not_the_model_file(planner_on):
    """Llama-3-70B has 64 attention heads (its config.json), which 3 does not divide: the reason is the field's, and
    the model it concerns is the model row above; the config's path (about 60 characters) only wrapped the line."""
    async with planner_on() as (_, pilot, screen):
        await retype(pilot, "#plan-tp", "3")
        said = shown(screen, "#plan-error")
        assert said == "✗ TP: 64 attention heads do not divide over attention TP 3: use TP 1 or 2"  # was '… TP 3 in /…/<config>.json'
        assert ".json" not in said and len(said) < 80
        assert screen.query_one("#plan-tp", Input).has_class("-invalid")


async def test_a_share_that_leaves_less_than_the_engines_reserve_is_said_at_risk_in_the_status(planner_on):
    """SGLang 0.5.9 keeps pre-load × (1 − its automatic share) for CUDA graphs and activations (docs/engines/sglang.md
    §5; engines/sglang/budget.py `needed`), the share as SGLang rounds it, round((81,559 − 14,848 MiB) ÷ 81,559, 3) =
    0.818; the fake node's pre-load is CUDA's H100 total less SGLang's TP 8 context, both the committed fits
    (tests/calibrated_figures.py; the fake's ledger is solved on the fit, not on its GPUs' NVML v2 total): at the fits
    of 53c086c0 82,730,317,185 B, which keeps 15,056,917,728 B = 14.02 GiB (14.03 at the fits before); at
    --mem-fraction-static 0.99 the reserve is pre-load × 0.01 = 0.77 GiB, below it: the fits row says 'at risk', and
    so does the status line an 80×24 screen shows (the ✗ line under the per-rank rows is below the fold there)."""
    pre_load = H100_CUDA_TOTAL_BYTES - sglang_context_bytes(8)
    kept, reserve = round(pre_load * (1 - 0.818)), round(pre_load * 0.01)
    async with planner_on() as (_, pilot, screen):
        await retype(pilot, "#plan-memory_fraction", "0.99")
        said = shown(screen, "#plan-error")
        assert said.startswith(f"✓ valid input, but at risk: runtime reserve {reserve / GIB:.2f} GiB < "
                               f"{kept / GIB:.2f} GiB the engine keeps")  # fmt: skip
        assert "✓ valid: edit any field" not in said
        assert shown(screen, "#plan-flags") == "engine flags: --tp-size 8 --mem-fraction-static 0.99"
        await retype(pilot, "#plan-memory_fraction", "0.8")  # a reserve above the engine's: no risk, plain valid
        assert shown(screen, "#plan-error").startswith("✓ valid: edit any field")


async def test_ctrl_u_typed_fast_clears_the_old_text_and_keeps_the_new(planner_on):
    """The keys queued before either is handled, as a terminal hands over 'ctrl+u 4' typed fast (tmux send-keys)."""
    async with planner_on() as (app, pilot, screen):
        tp = screen.query_one("#plan-tp", Input)
        tp.cursor_position = len(tp.value)
        app.post_message(events.Key("ctrl+u", None))
        app.post_message(events.Key("4", "4"))
        await wait_for(pilot, lambda: tp.value != "8")
        for _ in range(3):  # a ctrl+u run late would land here and clear the 4
            await pilot.pause()
        assert tp.value == "4"
        app.post_message(events.Key("home", None))  # a cursor move keeps its place in the queue too
        app.post_message(events.Key("1", "1"))
        await wait_for(pilot, lambda: tp.value != "4")
        assert tp.value == "14"


async def test_a_lora_rank_without_lora_slots_is_named_not_dropped(planner_on):
    """With LoRA slots off no LoRA flag is written, the rank's neither: the planner said '✓ valid' and copied
    '--tp-size 8', the 64 typed gone unseen. It is the rank field's error now, its text kept; slots on takes it."""
    async with planner_on() as (_, pilot, screen):
        await retype(pilot, "#plan-lora_rank", "64")
        said = shown(screen, "#plan-error")
        assert said == "✗ LoRA rank: no effect while LoRA slots is off (give it a count or 'default')"
        assert len(said) < 80 and screen.query_one("#plan-lora_rank", Input).has_class("-invalid")
        assert screen.query_one("#plan-lora_rank", Input).value == "64"
        await retype(pilot, "#plan-lora_slots", "4")
        flags = shown(screen, "#plan-flags")
        assert "--max-loras-per-batch 4" in flags and "--max-lora-rank 64" in flags  # SGLang's spellings


async def test_a_host_size_past_the_bound_names_the_bound(planner_on):
    """The field takes 0 < GiB < 2**20 = 1,048,576: a larger size was told 'needs a size in GiB above 0'."""
    async with planner_on(size=(100, 30)) as (_, pilot, screen):
        await retype(pilot, "#plan-host_kv_gib", "2000000")
        assert "needs a size in GiB above 0 and under 1,048,576 (or x2" in shown(screen, "#plan-error")


async def test_a_process_filter_that_does_not_parse_stays_said_and_hides_nothing(make_app, co_tenant_snapshot):
    """The process pane drew 'filter: re: not a regular expression …' once, and the next redraw (a tick, a row
    highlighted) put the selected row's command over it, the table left filtered by the text typed before: 're:[('
    showed '1 process(es) (filtered)' with no word why. Now the reason stays and every process is shown, as the
    dashboard's GPU filter does (test_filter_and_sort.py)."""
    from textual.widgets import Static

    from kvtop.ui.screens.processes import ProcessScreen

    app = make_app(co_tenant_snapshot)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        await pilot.press("X")  # every GPU's processes
        await wait_for(pilot, lambda: isinstance(app.screen, ProcessScreen))
        screen = app.screen
        every = len(screen._rows)
        await pilot.press("slash", *"pid:4242")
        await wait_for(pilot, lambda: len(screen._rows) < every)
        await pilot.press("space", *"re:[(")
        detail = screen.query_one("#processes-detail", Static)
        said = "filter: re: not a regular expression '[(' (unterminated character set at position 0)"
        await wait_for(pilot, lambda: detail.render().plain == said)
        assert len(screen._rows) == every  # nothing hidden by the words typed before
        screen.show_node(screen.node)  # the next tick's redraw
        await pilot.pause()
        assert detail.render().plain == said
        await pilot.press("backspace", "backspace")  # 're:[' still does not parse; 're:' … then a valid filter
        await pilot.press("ctrl+u", *"pid:4242")
        await wait_for(pilot, lambda: len(screen._rows) < every)
        assert not detail.render().plain.startswith("filter:")
