"""Pilot tests of the planner on the Llama-3-70B TP8 / H100 snapshot: every keystroke re-solves."""

from __future__ import annotations

import asyncio
import re

import pytest
from textual import events
from textual.widgets import Input, Select, Static

from kvtop.domain.calibration.estimate import calibrated_ledger
from kvtop.domain.engines.base import DEFAULT_CONTEXT_BYTES, MeasuredInputs
from kvtop.sources.hub import load_model
from kvtop.ui.screens.dashboard import DashboardScreen
from kvtop.ui.screens.planner import PlannerScreen
from kvtop.units import fmt_gib
from tests.calibrated_figures import H100_CUDA_TOTAL_BYTES, SGLANG_LLAMA_70B_SEGMENT_TAILS, llama_70b_tokens
from tests.ui.conftest import wait_for, wait_for_snapshot
from tests.ui.fakes import (
    CO_TENANT_BYTES,
    H100_TOTAL_BYTES,
    SGLANG_TP8_CONTEXT_BYTES,
    llama_ledger,
    llama_model,
    llama_plan,
    llama_settings,
)
from tests.ui.helpers import open_planner, paste, retype, shown

# The fake node's plan by hand (SGLang 0.5.9, docs/engines/sglang.md §4-§5; tests/calibrated_figures.py, from the
# committed fits): pre-load = CUDA's H100 total less SGLang's calibrated context c + d × log2 TP GiB; KV budget =
# pre-load − weights − pre-load × (1 − the automatic fraction); tokens = budget // the cell per rank. The weights are
# the book plus the rope's float32 cos/sin cache SGLang holds whole on every rank (8,192 × 128 × 4 B = 4,194,304 B).
# At the fits of da524f1c (79.18806 GiB, c = 0.570448, d = 0.521322), TP8: 82,735,722,401 − (17,640,734,720 +
# 4,194,304) − 15,057,901,477 (× 0.182) = 50,032,891,900 B // 40,960 B = 1,221,506. TP4 (fraction (81,559 − 14,336
# MiB) ÷ 81,559 = 0.824): 83,295,487,637 − (35,278,831,616 + 4,194,304) − 14,660,005,824 = 33,352,455,892 B
# (SGLang's float GiB truncated, 1 B under the whole terms) // 81,920 B = 407,134.
TP8_TOKENS = llama_70b_tokens(8)
TP4_TOKENS = llama_70b_tokens(4)
ROPE_CACHE_BYTES = 8_192 * 128 * 4



async def test_planner_starts_from_the_engines_live_settings_and_measured_gpu(planner_on):
    async with planner_on() as (_, pilot, screen):
        assert screen.query_one("#plan-tp", Input).value == "8"
        assert screen.query_one("#plan-kv_cache_dtype", Select).value == "auto"
        assert screen.basis.gpu_total_bytes == H100_TOTAL_BYTES
        assert screen.outcome.after.token_capacity == screen.outcome.before.token_capacity == TP8_TOKENS
        assert screen.query_one("#plan-memory_fraction", Input).placeholder == "auto: 0.818"


async def test_tp_8_to_4_gives_exactly_what_plan_gives_for_tp_4(planner_on):
    expected = llama_plan(tp=4).token_capacity
    assert expected == TP4_TOKENS
    async with planner_on() as (_, pilot, screen):
        await retype(pilot, "#plan-tp", "4")
        assert screen.outcome.after.token_capacity == expected
        result = shown(screen, "#plan-result")
        # the change, signed (1,221,506 → 407,134, −814,372 at the fits of da524f1c)
        assert f"{TP8_TOKENS:,} → {TP4_TOKENS:>12,}\n" in result  # 12: the column
        # its own row under the after column: beside it the row wrapped at 80 columns (44 + 11 cells)
        assert f"  change{'':>{9 + 12 + 3}}{'−' + format(TP8_TOKENS - TP4_TOKENS, ','):>12}" in result
        assert all(len(line) <= 80 - 33 - 2 for line in result.splitlines()[:4])
        assert re.search(r"layout\s+TP8 →\s+TP4", result)
        assert re.search(r"GPUs\s+8 →\s+4", result)
        assert shown(screen, "#plan-flags") == "engine flags: --tp-size 4"


async def test_a_key_typed_right_behind_backspace_lands_after_it(planner_on):
    """Typed fast, both keys are queued before either is handled (Textual ran backspace late)."""
    async with planner_on() as (app, pilot, screen):
        tp = screen.query_one("#plan-tp", Input)
        app.post_message(events.Key("backspace", "\x7f"))
        app.post_message(events.Key("4", "4"))
        await wait_for(pilot, lambda: tp.value != "8")
        for _ in range(3):  # a backspace run late would land here
            await pilot.pause()
        assert tp.value == "4"
        assert screen.outcome.after.token_capacity == TP4_TOKENS
        await pilot.press("1", "2", "backspace")  # one backspace deletes one character
        assert tp.value == "41"


async def test_tp_3_shows_the_reason_inline_and_keeps_the_edit(planner_on):
    async with planner_on() as (_, pilot, screen):
        await retype(pilot, "#plan-tp", "3")
        tp_input = screen.query_one("#plan-tp", Input)
        assert tp_input.value == "3"
        assert tp_input.has_class("-invalid")
        assert "64 attention heads do not divide over attention TP 3" in shown(screen, "#plan-error")
        assert screen.outcome.after is None
        await pilot.press("backspace", "2")  # the edit goes on from where it was
        assert screen.outcome.after.token_capacity == llama_plan(tp=2).token_capacity


async def test_a_field_that_is_not_a_number_is_named_inline(planner_on):
    async with planner_on() as (_, pilot, screen):
        await retype(pilot, "#plan-context_length", "32k")
        assert "context length: needs a whole number, got '32k'" in shown(screen, "#plan-error")
        assert screen.query_one("#plan-context_length", Input).value == "32k"


async def test_kv_dtype_and_memory_fraction_edits_recompute(planner_on):
    settings = llama_settings().model_copy(update={"kv_cache_dtype": "fp8_e4m3", "mem_fraction_static": 0.9})
    expected = calibrated_ledger(llama_model(), settings, gpu_total_bytes=H100_TOTAL_BYTES, gpu_name="H100").token_capacity
    async with planner_on() as (_, pilot, screen):
        screen.query_one("#plan-kv_cache_dtype", Select).value = "fp8_e4m3"
        await retype(pilot, "#plan-memory_fraction", "0.9")
        assert screen.outcome.after.token_capacity == expected
        assert "--kv-cache-dtype fp8_e4m3 --mem-fraction-static 0.9" in shown(screen, "#plan-flags")


async def test_ctrl_r_resets_to_live_and_c_copies_the_flags(planner_on):
    async with planner_on() as (app, pilot, screen):
        await retype(pilot, "#plan-tp", "4")
        await pilot.click("#plan-copy")
        assert app.clipboard == "--tp-size 4"
        await pilot.press("ctrl+r")
        assert screen.query_one("#plan-tp", Input).value == "8"
        assert screen.outcome.after.token_capacity == TP8_TOKENS
        screen.query_one("#plan-copy").focus()
        await pilot.press("c")
        assert app.clipboard == "--tp-size 8"


async def test_a_new_model_is_loaded_off_the_event_loop_on_enter(planner_on):
    expected = calibrated_ledger(load_model("llama-3.1-8b"), llama_settings().model_copy(update={"model": "llama-3.1-8b"}),
                                 gpu_total_bytes=H100_TOTAL_BYTES, gpu_name="H100").token_capacity  # fmt: skip
    async with planner_on() as (_, pilot, screen):
        await paste(pilot, "#plan-model", "llama-3.1-8b")  # one edit, one re-solve (typed: 12)
        assert "press Enter to load 'llama-3.1-8b'" in shown(screen, "#plan-error")
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.outcome.after.model.name == "llama-3.1-8b")
        assert screen.outcome.after.token_capacity == expected
        assert shown(screen, "#plan-flags") == "engine flags: --model-path llama-3.1-8b --tp-size 8"


async def test_a_model_that_cannot_be_found_is_named_and_the_old_model_kept(planner_on):
    async with planner_on() as (_, pilot, screen):
        await paste(pilot, "#plan-model", "no-such-model")
        await pilot.press("enter")
        await wait_for(pilot, lambda: "✗ model:" in shown(screen, "#plan-error"))
        assert "no-such-model" in shown(screen, "#plan-error")
        assert screen.query_one("#plan-model", Input).value == "no-such-model"
        assert screen.outcome.after.model.name == "meta-llama--Meta-Llama-3-70B"


async def test_the_planner_plans_on_the_memory_a_co_tenant_leaves(make_app, co_tenant_snapshot):
    """SGLang at a restart now: the 6 GiB co-tenant's bytes are not free before load, on both sides."""
    free_now = H100_TOTAL_BYTES - DEFAULT_CONTEXT_BYTES - CO_TENANT_BYTES
    measured = MeasuredInputs(free_before_load_bytes=free_now)
    expected = llama_plan(measured=measured).token_capacity
    # the fake engine's report is the book's arithmetic (`predict`); kvtop's plan adds the 4 MiB rope cache and the
    # caching allocator's tails to the weights (tests/calibrated_figures.py): 25,673,728 B ÷ 40,960 B = 626.8 cells,
    # 626 or 627 fewer tokens by the two floors
    engine_reports = co_tenant_snapshot.engines[0].engine.live.token_capacity
    assert engine_reports == llama_ledger(measured=measured).token_capacity
    beside = ROPE_CACHE_BYTES + SGLANG_LLAMA_70B_SEGMENT_TAILS[8]
    assert 0 < engine_reports - expected <= -(-beside // 40_960) and expected < TP8_TOKENS
    app = make_app(co_tenant_snapshot)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_planner(pilot)
        assert screen.outcome.before.token_capacity == screen.outcome.after.token_capacity == expected
        title = " ".join(shown(screen, "#planner-title").split())
        assert f"free before load {free_now:,} B ({fmt_gib(free_now)}), least over its GPUs" in title


async def test_edits_survive_closing_the_planner_until_ctrl_r(planner_on):
    async with planner_on() as (_, pilot, screen):
        await retype(pilot, "#plan-max_running_requests", "512")
        await pilot.press("escape")
        screen = await open_planner(pilot)
        assert screen.query_one("#plan-max_running_requests", Input).value == "512"
        assert "--max-running-requests 512" in shown(screen, "#plan-flags")
        await pilot.press("ctrl+r", "escape")
        screen = await open_planner(pilot)
        assert screen.query_one("#plan-max_running_requests", Input).value == ""


async def test_before_stays_on_the_live_model_and_a_model_that_failed_never_reaches_the_flags(planner_on):
    async with planner_on() as (_, pilot, screen):
        await paste(pilot, "#plan-model", "llama-3.1-8b")  # one edit, one re-solve (typed: 12)
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.outcome.after.model.name == "llama-3.1-8b")
        assert screen.outcome.before.model.name == "meta-llama--Meta-Llama-3-70B"
        assert screen.outcome.before.token_capacity == TP8_TOKENS
        await paste(pilot, "#plan-model", "no-such-model")
        await pilot.press("enter")
        await wait_for(pilot, lambda: "✗ model:" in shown(screen, "#plan-error"))
        assert shown(screen, "#plan-flags") == "engine flags: --model-path llama-3.1-8b --tp-size 8"


async def test_a_layout_larger_than_the_node_is_red_and_not_copyable(make_app, healthy_snapshot):
    app = make_app(healthy_snapshot)
    copied: list[str] = []
    app.copy_to_clipboard = copied.append  # type: ignore[method-assign]
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_planner(pilot)
        await retype(pilot, "#plan-dp", "2")  # two TP8 replicas: 16 GPUs (a TP16 is planned over 2 nodes)
        error = screen.query_one("#plan-error", Static).render()
        assert error.plain == "✗ needs 16 GPUs, the node has 8: not copyable"
        assert "✓" not in error.plain
        assert screen.query_one("#plan-dp").has_class("-invalid")
        assert screen.flags_text is None
        assert "not copyable, needs 16 GPUs, the node has 8" in shown(screen, "#plan-flags")
        await pilot.click("#plan-copy")
        await pilot.pause()
        assert copied == []
        await retype(pilot, "#plan-dp", "1")
        await retype(pilot, "#plan-tp", "4")  # back within the node: copyable again
        assert shown(screen, "#plan-error").startswith("✓ valid")
        await pilot.click("#plan-copy")
        await pilot.pause()
        assert copied == ["--tp-size 4"]


async def test_q_in_a_dropdown_or_a_field_never_quits_and_ctrl_q_does(planner_on):
    async with planner_on() as (app, pilot, screen):
        await retype(pilot, "#plan-tp", "4")
        dtype = screen.query_one("#plan-kv_cache_dtype", Select)
        dtype.focus()
        await pilot.press("q")  # the closed dropdown has the focus
        await pilot.pause()
        assert app.is_running and app.screen is screen
        await pilot.press("enter", "q")  # the open list has the focus
        await pilot.pause()
        assert app.is_running and screen.query_one("#plan-tp", Input).value == "4"
        await pilot.press("escape")
        screen.query_one("#plan-max_running_requests", Input).focus()
        await pilot.press("q")
        await pilot.pause()
        assert app.is_running and screen.query_one("#plan-max_running_requests", Input).value == "q"
        await pilot.press("ctrl+q")
    assert app.return_code == 0


async def test_a_context_longer_than_the_models_positions_says_the_engine_refuses_it(planner_on):
    async with planner_on() as (_, pilot, screen):
        await retype(pilot, "#plan-context_length", "10000000")
        said = " ".join(shown(screen, "#plan-error").split())
        assert said.startswith("✗ SGLang 0.5.9 refuses --context-length 10,000,000 above the model's 8,192 positions")


async def test_a_fraction_above_the_engines_own_keeps_too_little_reserve_and_says_so(planner_on):
    """SGLang 0.5.9's automatic fraction on an H100 is 0.818 (docs/engines/sglang.md §5: (81,559 −
    14,848 MiB) ÷ 81,559): it keeps pre-load × 0.182 for CUDA graphs and activations. 0.95 keeps only
    pre-load × 0.05, the pre-load being CUDA's total less SGLang's calibrated TP 8 context = (79.19 − 2.13) GiB ×
    0.05 = 3.85 GiB at the fits of da524f1c: the pool fits, the graphs may not."""
    async with planner_on(size=(100, 40)) as (_, pilot, screen):
        await retype(pilot, "#plan-memory_fraction", "0.95")
        after = screen.outcome.after
        pre_load = H100_CUDA_TOTAL_BYTES - SGLANG_TP8_CONTEXT_BYTES
        assert after.engine.fits and abs(after.engine.reserve_bytes - pre_load * 0.05) <= 1
        assert abs(after.engine.reserve_needed_bytes - pre_load * (1 - 0.818)) <= 1
        result = shown(screen, "#plan-result")
        assert re.search(r"fits\s+yes → +at risk", result)
        assert f"✗ runtime reserve {fmt_gib(after.engine.reserve_bytes)} < " in result
        await retype(pilot, "#plan-memory_fraction", "0.8")  # below the automatic: nothing to warn of
        assert screen.outcome.after.engine.reserve_short_bytes == 0 and "✗ runtime" not in shown(
            screen, "#plan-result"
        )


async def test_the_fresh_start_interval_is_shown_and_moves_with_the_edit(planner_on):
    """The planner shows what `kvtop plan` would plan for the edit (calibrated terms), and the term to
    measure first; halving TP moves the interval with the capacity."""
    async with planner_on(size=(100, 40)) as (_, pilot, screen):
        first = screen.outcome.after_plan
        assert first is not None and first.token_capacity_min < first.ledger.token_capacity < first.token_capacity_max
        line = next(row for row in shown(screen, "#plan-result").splitlines() if row.startswith("fresh start"))
        assert f"{first.token_capacity_min:,} – {first.token_capacity_max:,}" in line
        assert f"mostly {first.dominant.label} ({first.dominant.source})" in line
        await retype(pilot, "#plan-tp", "4")
        moved = screen.outcome.after_plan
        assert moved is not None and moved.token_capacity_max < first.token_capacity_min

async def test_a_context_above_the_models_positions_is_refused_not_valid(make_app, co_tenant_snapshot):
    """Llama-3-70B holds 8,192 positions: SGLang refuses 16,384 at start unless its override is set."""
    app = make_app(co_tenant_snapshot)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_planner(pilot)
        await retype(pilot, "#plan-context_length", "16384")
        assert screen.outcome.after is not None  # kvtop sizes it …
        said = " ".join(shown(screen, "#plan-error").split())
        assert said.startswith("✗ SGLang 0.5.9 refuses --context-length 16,384 above the model's 8,192 positions")
        assert "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1" in said and "✓ valid" not in said
        assert screen.query_one("#plan-context_length", Input).has_class("-invalid")
        assert screen.flags_text is None  # … but its flags are not copyable
        # … nor does it fit: the table's fits row said "at risk" (the reserve) for a launch that never starts
        fits = next(row for row in shown(screen, "#plan-result").splitlines() if row.startswith("fits"))
        assert fits.split()[-1] == "refused" and "at risk" not in fits, fits
        await retype(pilot, "#plan-context_length", "8192")
        assert shown(screen, "#plan-error").startswith("✓ valid")
        fits = next(row for row in shown(screen, "#plan-result").splitlines() if row.startswith("fits"))
        assert "refused" not in fits, fits


async def test_the_title_names_the_release_and_the_exact_free_memory_plan_agrees_with(make_app, co_tenant_snapshot):
    """`kvtop plan` given the release and the free bytes the planner shows gives the planner's tokens."""
    from kvtop.cli import main

    app = make_app(co_tenant_snapshot)
    async with app.run_test(size=(200, 60)) as pilot:
        screen = await open_planner(pilot)
        await retype(pilot, "#plan-tp", "4")
        title = " ".join(shown(screen, "#planner-title").split())
        free = screen.basis.measured.free_before_load_bytes
        assert "rules of SGLang 0.5.9 (--engine-version 0.5.9)" in title
        assert f"free before load {free:,} B ({fmt_gib(free)}), least over its GPUs" in title
        after = screen.outcome.after.token_capacity
    argv = ["plan", "--model", "llama-3-70b", "--tp", "4", "--engine-version", "0.5.9", "--gpu", "H100",
            "--gpu-memory", f"{H100_TOTAL_BYTES}B", "--free-memory", f"{free}B", "--json"]  # fmt: skip
    import json
    import sys
    from io import StringIO

    out, sys.stdout = sys.stdout, StringIO()
    try:
        assert main(argv) == 0
        planned = json.loads(sys.stdout.getvalue())
    finally:
        sys.stdout = out
    assert planned["token_capacity"] == after


@pytest.mark.parametrize("turns", [0, 1, 2])
async def test_a_planner_closed_before_it_mounted_does_not_take_the_app_down(make_app, co_tenant_snapshot, turns):
    """Under load the planner can be closed before its `on_mount` runs (issue 25, item 5): before, that
    mount looked for `#plan-tp` on a screen with no form any more, and NoMatches ended the app."""
    app = make_app(co_tenant_snapshot)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for_snapshot(pilot)
        app.action_planner()
        for _ in range(turns):
            await asyncio.sleep(0)
        app.pop_screen()
        await pilot.pause(0.1)
        assert app.is_running and isinstance(app.screen, DashboardScreen)
        await pilot.press("p")  # and the planner still opens
        await wait_for(pilot, lambda: isinstance(app.screen, PlannerScreen))
        planner = app.screen
        await wait_for(pilot, lambda: planner.outcome is not None)  # and solves


async def test_the_planner_reads_this_nodes_earlier_start(make_app, healthy_snapshot):
    """The app hands the calibration store's starts to the planner: a start of the same launch that measured
    3 GiB of context before the weights replaces SGLang's calibrated 2.13 GiB (at the fits of da524f1c) on both sides."""
    from kvtop.domain.calibration.node import NodeMeasure, model_key, runtime_settings
    from kvtop.domain.calibration.terms import Term

    settings, model = llama_settings(), llama_model()
    mine = NodeMeasure(date="2026-11-30", engine="sglang", engine_version=settings.engine_version, gpu="H100", tp=8,
                       pp=1, model_key=model_key(model), model_type=model.model_type, settings=runtime_settings(settings),
                       terms={Term.CUDA_TOTAL: H100_CUDA_TOTAL_BYTES, Term.CONTEXT: 3 * 2**30})  # fmt: skip
    free = MeasuredInputs(free_before_load_bytes=H100_CUDA_TOTAL_BYTES - 3 * 2**30)
    app = make_app(healthy_snapshot, node_measures=(mine,))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_planner(pilot)
        expected = llama_plan(measured=free).token_capacity
        assert screen.outcome.before.token_capacity == screen.outcome.after.token_capacity == expected < TP8_TOKENS


async def test_a_valid_edit_that_does_not_fit_says_so_not_just_valid(planner_on):
    """An operator trial set the memory fraction to 0.0001: the table said `fits  no, 16.43 GiB short` while the
    status line said only `✓ valid` (the input is valid; the launch is not one the engine starts). The line now
    names the plan's shortfall, the figure the table's `fits` row shows."""
    async with planner_on(size=(120, 40)) as (_, pilot, screen):
        await retype(pilot, "#plan-memory_fraction", "0.0001")
        after = screen.outcome.after
        assert after is not None and not after.engine.fits and after.token_capacity == 0
        said = " ".join(shown(screen, "#plan-error").split())
        short = fmt_gib(after.engine.shortfall_bytes)  # a shortfall of GiBs reads in GiB (the weights: 16.43 GiB)
        assert said.startswith(f"✓ valid input, but it does not fit: {short} short per rank")
        assert f"no, {short} short" in shown(screen, "#plan-result")


async def test_shift_tab_from_tp_reaches_the_model_field_not_the_form(planner_on):
    """An operator trial pressed shift+tab from TP (where the planner opens) to type a model: the focus went to
    the form's scroll container, so the name's letters ran the screen's keys (its `z` paused the screen; a `q`
    quits). The form is no tab stop: shift+tab reaches the model field, tab comes back to TP."""
    async with planner_on(size=(100, 30)) as (app, pilot, screen):
        assert app.focused is not None and app.focused.id == "plan-tp"
        await pilot.press("shift+tab")
        assert app.focused is not None and app.focused.id == "plan-model"
        await pilot.press("tab")
        assert app.focused is not None and app.focused.id == "plan-tp"
        assert screen.is_current
