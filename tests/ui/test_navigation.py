"""Pilot tests: moving around the dashboard, the ledger, help, findings, filter, probe, quit."""

from __future__ import annotations

from dataclasses import dataclass

from kvtop.domain.diagnose import diagnose
from kvtop.ui.screens.dashboard import DashboardScreen
from kvtop.ui.screens.help import HelpScreen
from kvtop.ui.screens.ledger import RankLedgerScreen
from kvtop.ui.screens.probe import ProbeScreen
from kvtop.ui.widgets.findings import FindingsPane
from kvtop.ui.widgets.gpu_list import GpuList
from tests.ui.conftest import wait_for, wait_for_snapshot


def visible_gpus(app) -> list[int]:
    return list(app.screen.query_one(GpuList).shown_gpus)


async def test_dashboard_lists_every_gpu_and_selects_the_first(make_app, healthy_snapshot):
    app = make_app(healthy_snapshot)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for_snapshot(pilot)
        assert isinstance(app.screen, DashboardScreen)
        assert visible_gpus(app) == list(range(8))
        assert app.screen.query_one(GpuList).selected == 0
        assert app.screen.query_one(GpuList).has_focus


async def test_arrows_and_jk_move_the_selection_and_enter_opens_that_ledger(make_app, healthy_snapshot):
    app = make_app(healthy_snapshot)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_snapshot(pilot)
        await pilot.press("down", "j", "j", "k")
        assert app.screen.query_one(GpuList).selected == 2
        await pilot.press("end")
        assert app.screen.query_one(GpuList).selected == 7
        await pilot.press("home", "down", "down", "down", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, RankLedgerScreen))
        assert app.screen.gpu_index == 3
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, DashboardScreen))


async def test_clicking_a_row_selects_it_and_a_second_click_opens_its_ledger(make_app, healthy_snapshot):
    app = make_app(healthy_snapshot)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for_snapshot(pilot)
        row_5 = (20, 5 * 2 + 1)  # GPU 5's second line (two lines per GPU)
        await pilot.click(GpuList, offset=row_5)
        assert app.screen.query_one(GpuList).selected == 5
        assert isinstance(app.screen, DashboardScreen)
        await pilot.click(GpuList, offset=row_5)
        await wait_for(pilot, lambda: isinstance(app.screen, RankLedgerScreen))
        assert app.screen.gpu_index == 5


async def test_question_mark_opens_help_and_escape_closes_it(make_app, healthy_snapshot):
    app = make_app(healthy_snapshot)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_snapshot(pilot)
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        help_text = app.screen.query_one("#help-text").render().plain
        assert "refresh now" in help_text and "probe" in help_text
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, DashboardScreen))


async def test_tab_cycles_from_the_gpu_list_to_the_findings_pane_and_f_toggles_it(make_app, healthy_snapshot):
    app = make_app(healthy_snapshot)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_snapshot(pilot)
        await pilot.press("tab")
        assert isinstance(app.focused, FindingsPane)
        await pilot.press("f")
        assert isinstance(app.focused, GpuList)
        await pilot.press("f")
        assert isinstance(app.focused, FindingsPane)


async def test_slash_filters_the_gpu_rows_and_escape_clears_the_filter(make_app, co_tenant_snapshot):
    app = make_app(co_tenant_snapshot)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_snapshot(pilot)
        await pilot.press("slash", "t", "p", "3")
        await wait_for(pilot, lambda: visible_gpus(app) == [3])
        assert app.screen.query_one(GpuList).selected == 3
        await pilot.press("escape")
        await wait_for(pilot, lambda: visible_gpus(app) == list(range(8)))


async def test_a_filter_that_matches_nothing_lists_nothing_and_enter_opens_nothing(
    make_app, healthy_snapshot
):
    app = make_app(healthy_snapshot)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_snapshot(pilot)
        await pilot.press("slash", "z", "z", "z", "enter")
        await wait_for(pilot, lambda: visible_gpus(app) == [])
        gpus = app.screen.query_one(GpuList)
        assert gpus.render_line(0).text.strip() == ""  # an empty list, not a stale row
        empty = app.screen.query_one("#empty")
        assert empty.display and "no GPU matches 'zzz' (Esc clears the filter)" in str(empty.render())
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, DashboardScreen)


@dataclass(frozen=True)
class _Finding:
    rule: str
    severity: str
    gpus: tuple[int, ...]
    tokens: int | None
    fix: str
    evidence: str

    @property
    def title(self) -> str:
        return self.rule


async def test_findings_pane_shows_findings_handed_to_the_app(make_app, co_tenant_snapshot):
    app = make_app(co_tenant_snapshot)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for_snapshot(pilot)
        app.show_findings(
            [
                _Finding(
                    "co-tenant",
                    "warning",
                    (3,),
                    128_660,
                    "move pid 9001 off GPU 3",
                    "pid 9001 holds 6.00 GiB",
                )
            ]
        )
        await pilot.pause()
        text = "\n".join(
            static.render().plain for static in app.screen.query_one(FindingsPane).query(".finding")
        )
        assert "co-tenant · GPU 3 · −128,660 tokens" in text  # a cost: signed
        assert "fix: move pid 9001 off GPU 3" in text


async def test_findings_pane_accepts_diagnose_findings(make_app, co_tenant_snapshot):
    findings = diagnose(co_tenant_snapshot)
    co_tenant = next(f for f in findings if f.rule == "co_tenant")
    app = make_app(co_tenant_snapshot)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for_snapshot(pilot)
        app.show_findings(findings)
        await pilot.pause()
        statics = list(app.screen.query_one(FindingsPane).query(".finding"))
        assert len(statics) == len(findings)
        text = "\n".join(static.render().plain for static in statics)
        assert f"● warning Another process holds memory on an engine's GPU · GPU 3 · −{co_tenant.tokens:,} tokens" in text
        assert f"fix: {co_tenant.fix}" in text


async def test_capital_p_opens_the_probe_place_and_read_only_hides_it(make_app, healthy_snapshot):
    app = make_app(healthy_snapshot)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_snapshot(pilot)
        assert "probe" in [b.binding.action for b in app.screen.active_bindings.values() if b.enabled]
        await pilot.press("down", "P")
        await wait_for(pilot, lambda: isinstance(app.screen, ProbeScreen))
        assert app.screen.gpu_index == 1
    read_only = make_app(healthy_snapshot, read_only=True)
    async with read_only.run_test(size=(80, 24)) as pilot:
        await wait_for_snapshot(pilot)
        await pilot.press("P")
        assert isinstance(read_only.screen, DashboardScreen)  # nothing opened: the bindings below say why
        assert "probe" not in [
            b.binding.action for b in read_only.screen.active_bindings.values() if b.enabled
        ]


async def test_q_quits_with_status_zero(make_app, healthy_snapshot):
    app = make_app(healthy_snapshot)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_snapshot(pilot)
        await pilot.press("q")
    assert app.return_code == 0


def selected_rows_visible(app) -> bool:
    """Every line of the selected GPU's row lies inside the list's visible lines."""
    gpus = app.screen.query_one(GpuList)
    return gpus.selected in gpus.visible_gpus()


async def test_the_selected_gpu_stays_on_screen_through_a_resize_and_a_cleared_filter(
    make_app, healthy_snapshot
):
    app = make_app(healthy_snapshot)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_snapshot(pilot)
        await pilot.press("end")
        await pilot.resize_terminal(160, 48)
        await pilot.pause()
        await pilot.resize_terminal(60, 20)
        await wait_for(pilot, lambda: selected_rows_visible(app))
        await pilot.resize_terminal(80, 24)
        await pilot.press("slash", "t", "p", "7", "enter", "escape")
        await wait_for(pilot, lambda: visible_gpus(app) == list(range(8)))
        await wait_for(pilot, lambda: selected_rows_visible(app))
        assert app.screen.query_one(GpuList).selected == 7
