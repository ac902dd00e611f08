"""Every screen's footer at 80×24 (session 62's operator pass): the dashboard's keys were cut at 'Processes' and
'Tree' past the edge. Below 100 columns every kvtop footer is compact (kvtop/ui/widgets/footer.py), one rule for
every screen; the keys each screen needs are listed here from what its bindings promise the user (kvtop/ui/keys.py).
"""

from __future__ import annotations

from textual.widgets._footer import FooterKey

from kvtop.ui.screens.ledger import RankLedgerScreen
from kvtop.ui.screens.planner import PlannerScreen
from kvtop.ui.widgets.footer import Footer
from tests.ui.conftest import wait_for, wait_for_snapshot, wait_for_value
from tests.ui.helpers import open_planner

WIDTH = 80
APP_KEYS = ("Quit", "Help", "Probe")  # every node screen's footer: quit, help and the probe of the planned pool


async def whole_keys(pilot, screen, names: tuple[str, ...]) -> dict[str, FooterKey]:  # type: ignore[no-untyped-def]
    """The footer's keys by label once it has drawn every one of `names` (Textual recomposes a footer after the
    screen's bindings change: a bare read can see none, or keys not laid out yet, whose empty region would pass
    any bound), each asserted drawn and ending inside the terminal's WIDTH columns."""
    footer = screen.query_one(Footer)

    def drawn() -> dict[str, FooterKey]:
        return {key.description: key for key in footer.query(FooterKey) if key.region.width > 0}

    await wait_for_value(pilot, lambda: sorted(set(names) - set(drawn())), [])
    keys = drawn()
    for name, key in keys.items():
        assert key.region.x >= 0 and key.region.right <= WIDTH, (name, key.region)
    assert footer.compact
    return keys


async def test_the_dashboard_ledger_and_planner_show_every_key_at_80_columns(make_app, healthy_snapshot) -> None:  # type: ignore[no-untyped-def]
    app = make_app(healthy_snapshot)
    async with app.run_test(size=(WIDTH, 24)) as pilot:
        await wait_for_snapshot(pilot)
        await whole_keys(pilot, app.screen, ("Ledger", "Filter", "Findings", "Planner", "Processes", "Tree", *APP_KEYS))

        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, RankLedgerScreen))
        await pilot.pause()
        await whole_keys(pilot, app.screen, ("Back", "Planner", "Processes", *APP_KEYS))
        await pilot.press("escape")

        planner = await open_planner(pilot)
        await pilot.pause()
        await whole_keys(pilot, planner, ("Back", "Reset to launch", "Copy flags", "Probe"))
        assert isinstance(app.screen, PlannerScreen)


async def test_at_120_columns_the_footer_is_not_compact(make_app, healthy_snapshot) -> None:  # type: ignore[no-untyped-def]
    app = make_app(healthy_snapshot)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for_snapshot(pilot)
        assert not app.screen.query_one(Footer).compact
        await pilot.resize_terminal(WIDTH, 24)
        # a terminal narrowed to 80 columns gets the compact footer (once the resize reached it)
        await wait_for_value(pilot, lambda: app.screen.query_one(Footer).compact, True)
