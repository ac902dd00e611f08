"""Pilot tests of the findings pane: select a finding, see its GPUs marked, open its fix in the planner.

The co-tenant node yields `co_tenant` (GPU 3, warning) then `bf16_kv_where_fp8_supported` (all
eight GPUs, info, fix `--kv-cache-dtype fp8_e4m3`); the healthy node yields only the latter.
"""

from __future__ import annotations

import re

from textual.color import Color
from textual.widgets import Select, Static

from kvtop.domain.calibration.estimate import calibrated_ledger
from kvtop.domain.diagnose import diagnose
from kvtop.domain.launch import parse_flags
from kvtop.ui.screens.dashboard import DashboardScreen
from kvtop.ui.screens.planner import PlannerScreen
from kvtop.ui.widgets.findings import FindingItem, FindingsPane
from kvtop.ui.widgets.gpu_list import GpuList
from tests.calibrated_figures import llama_70b_tokens
from tests.ui.conftest import wait_for, wait_for_snapshot
from tests.ui.fakes import (
    H100_NAME,
    H100_TOTAL_BYTES,
    LLAMA_70B_CONFIG,
    llama_model,
    llama_plan,
    llama_snapshot,
)


def marked_gpus(app) -> dict[int, str]:
    """GPU index → the tone of the edge drawn on its row, for the rows that carry one."""
    gpus = app.screen.query_one(GpuList)
    return {index: tone for index in gpus.shown_gpus if (tone := gpus.mark_of(index)) is not None}


def drawn_line(app, gpu_index: int):
    """The strip of the first line of a GPU's row, as the list paints it (no scrolling at 160×48)."""
    gpus = app.screen.query_one(GpuList)
    return gpus.render_line(gpus.shown_gpus.index(gpu_index) * 2)


def items_text(app) -> list[str]:
    return [item.render().plain for item in app.screen.query(FindingItem)]


async def test_selecting_the_co_tenant_finding_marks_gpu_3_in_the_warning_colour(
    make_app, co_tenant_snapshot
):
    rules = [f.rule for f in diagnose(co_tenant_snapshot)]
    assert rules == ["co_tenant", "bf16_kv_where_fp8_supported"]
    app = make_app(co_tenant_snapshot)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for_snapshot(pilot)
        assert marked_gpus(app) == {}  # nothing marked while the GPU list has the focus
        await pilot.press("f")
        await wait_for(pilot, lambda: marked_gpus(app) != {})
        assert marked_gpus(app) == {3: "warning"}
        edge = next(iter(drawn_line(app, 3)))
        assert (
            edge.text == "▌"
            and edge.style.color.triplet == Color.parse(app.get_css_variables()["warning"]).rgb
        )
        assert next(iter(drawn_line(app, 2))).text == " "  # unmarked: a blank edge
        assert drawn_line(app, 3).text[1:3] == " 3" and drawn_line(app, 2).text[1:3] == " 2"
        assert drawn_line(app, 3).cell_length == drawn_line(app, 2).cell_length  # the edge takes its own cell
        selected = app.screen.query_one(FindingsPane).query_one(".-selected", FindingItem)
        assert selected.finding.rule == "co_tenant"
        await pilot.press("f")  # back to the GPU list: the marks go
        await wait_for(pilot, lambda: marked_gpus(app) == {})
        assert isinstance(app.focused, GpuList)


async def test_down_selects_the_next_finding_and_marks_its_gpus(make_app, co_tenant_snapshot):
    app = make_app(co_tenant_snapshot)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for_snapshot(pilot)
        await pilot.press("f", "j")
        await wait_for(pilot, lambda: set(marked_gpus(app)) == set(range(8)))
        assert marked_gpus(app)[0] == "info"
        await pilot.press("k")
        await wait_for(pilot, lambda: set(marked_gpus(app)) == {3})


async def test_enter_on_the_fp8_finding_opens_the_planner_before_live_after_the_fix(
    make_app, healthy_snapshot
):
    finding = diagnose(healthy_snapshot)[0]
    assert finding.rule == "bf16_kv_where_fp8_supported"
    assert finding.fix_settings.kv_cache_dtype == "fp8_e4m3"
    fixed = parse_flags(
        "sglang",
        [
            "--model-path",
            str(LLAMA_70B_CONFIG),
            "--tp-size",
            "8",
            "--kv-cache-dtype",
            "fp8_e4m3",
            "--engine-version",
            "0.5.9",
        ],
    )
    # the planner's before and after are `kvtop plan`'s calibrated prediction; FP8 KV halves the 40,960 B cell,
    # so the same budget holds about twice the tokens (tests/calibrated_figures.py, by hand from the committed fits):
    # at the fits of da524f1c 50,032,891,900 B (pre-load 79.18806 − (0.570448 + 0.521322 × 3) GiB, less weights with
    # SGLang's 4 MiB float32 rope cache and the 0.182 reserve) // 40,960 B = 1,221,506 (remainder 6,140 B),
    # // 20,480 B = 2,443,012, twice the floor at 40,960 B (the remainder holds no further 20,480 B cell; at the fits
    # before, 1,221,483 and 2,442,967, one more than twice)
    expected_after = calibrated_ledger(llama_model(), fixed, gpu_total_bytes=H100_TOTAL_BYTES, gpu_name=H100_NAME)
    live = llama_plan()
    assert (live.token_capacity, expected_after.token_capacity) == (llama_70b_tokens(8), llama_70b_tokens(8, cell=20_480))
    app = make_app(healthy_snapshot)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for_snapshot(pilot)
        await pilot.press("f", "enter")
        await wait_for(
            pilot, lambda: isinstance(app.screen, PlannerScreen) and app.screen.outcome is not None
        )
        screen = app.screen
        assert screen.outcome.before.token_capacity == live.token_capacity
        assert screen.outcome.after.token_capacity == expected_after.token_capacity
        assert screen.query_one("#plan-kv_cache_dtype", Select).value == "fp8_e4m3"
        assert screen.query_one("#plan-kv_cache_dtype", Select).has_focus  # the field the fix changed
        result = screen.query_one("#plan-result", Static).render().plain
        assert re.search(rf"tokens per rank\s+{live.token_capacity:,} →\s+{expected_after.token_capacity:,}", result)
        assert "after starts from the fix of “16-bit KV where the engine supports FP8 KV”" in (
            screen.query_one("#planner-title", Static).render().plain
        )
        await pilot.press("ctrl+r")  # reset: every field back to live
        assert screen.outcome.after.token_capacity == live.token_capacity
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, DashboardScreen))


async def test_enter_on_a_fix_that_opens_nothing_says_so_inline(make_app):
    lost = llama_snapshot(lost_gpu=5)
    gpu_lost = diagnose(lost)[0]
    assert gpu_lost.rule == "gpu_lost" and gpu_lost.fix_settings is None and not gpu_lost.pids
    app = make_app(lost)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for_snapshot(pilot)
        await pilot.press("f", "enter")
        await pilot.pause()
        assert isinstance(app.screen, DashboardScreen)
        assert (
            "Enter has nothing to open here (not a flag change, no process to stop): reset GPU 5 "
            "(nvidia-smi --gpu-reset -i 5) or reboot the node" in " ".join(items_text(app)[0].split())
        )
        await pilot.press("j")  # the note belongs to the finding it answered
        await pilot.pause()
        assert "nothing to open" not in "\n".join(items_text(app))


async def test_a_click_selects_a_finding_and_a_double_click_opens_its_fix(make_app, co_tenant_snapshot):
    app = make_app(co_tenant_snapshot)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for_snapshot(pilot)
        pane = app.screen.query_one(FindingsPane)
        second = list(pane.query(FindingItem))[1]
        await pilot.click(second)
        await wait_for(pilot, lambda: set(marked_gpus(app)) == set(range(8)))
        assert pane.selected_finding.rule == "bf16_kv_where_fp8_supported"
        assert isinstance(app.focused, FindingsPane)
        await pilot.click(second, times=2)
        await wait_for(pilot, lambda: isinstance(app.screen, PlannerScreen))
        planner = app.screen
        await wait_for(pilot, lambda: planner.outcome is not None)  # opened whole: solved, not torn down mid-mount


async def test_the_same_findings_again_keep_their_widgets_and_the_selection(make_app, co_tenant_snapshot):
    findings = diagnose(co_tenant_snapshot)
    app = make_app(co_tenant_snapshot)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for_snapshot(pilot)
        await pilot.press("f", "j")
        pane = app.screen.query_one(FindingsPane)
        before = list(pane.query(FindingItem))
        app.show_findings(diagnose(co_tenant_snapshot))  # equal, not identical
        await pilot.pause()
        assert list(pane.query(FindingItem)) == before
        app.show_findings(findings[1:])  # the co-tenant gone: the selection stays on its finding
        await pilot.pause()
        assert [item.finding.rule for item in pane.query(FindingItem)] == ["bf16_kv_where_fp8_supported"]
        assert pane.selected_finding.rule == "bf16_kv_where_fp8_supported"
