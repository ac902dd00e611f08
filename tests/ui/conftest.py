"""UI fixtures: the Llama-3-70B TP8 node, a fixed clock, an app factory and a bounded wait (the helpers the UI tests
share are in helpers.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

import pytest
from textual.app import App
from textual.pilot import Pilot

from kvtop.domain.model import ModelSpec
from kvtop.domain.node import NodeSnapshot
from kvtop.domain.ports import SnapshotSource
from kvtop.sources.hub import load_model
from kvtop.ui.app import KvtopApp
from kvtop.ui.screens.planner import PlannerScreen
from tests.ui.fakes import FakeSource, FixedClock, llama_model, llama_snapshot

#: A poll interval long enough that only the first collect (and `r`) happen during a test.
QUIET_INTERVAL_S = 3600.0


@pytest.fixture(scope="session")
def llama() -> ModelSpec:
    return llama_model()


@pytest.fixture(scope="session")
def healthy_snapshot() -> NodeSnapshot:
    return llama_snapshot()


@pytest.fixture(scope="session")
def co_tenant_snapshot() -> NodeSnapshot:
    return llama_snapshot(co_tenant_gpu=3)


@pytest.fixture(scope="session")
def roomy() -> NodeSnapshot:
    """The co-tenant node with 18 GiB of every worker's reserve unclaimed: a probe's fill on GPU 3 has room."""
    return llama_snapshot(co_tenant_gpu=3, unclaimed_bytes=18 * 2**30)


@pytest.fixture
def make_app() -> Callable[..., KvtopApp]:
    """`make_app(source_or_snapshot, **options)`: a KvtopApp on a fake source and a fixed clock."""

    def build(source: SnapshotSource | NodeSnapshot, **options: object) -> KvtopApp:
        fake = FakeSource(source) if isinstance(source, NodeSnapshot) else source
        options.setdefault("interval_s", QUIET_INTERVAL_S)
        options.setdefault("clock", FixedClock())
        options.setdefault("theme", "dark")
        return KvtopApp(fake, load_model, **options)  # type: ignore[arg-type]

    return build


@pytest.fixture
def planner_on(
    make_app: Callable[..., KvtopApp], healthy_snapshot: NodeSnapshot
) -> Callable[..., AbstractAsyncContextManager[tuple[KvtopApp, Pilot[object], PlannerScreen]]]:
    """`async with planner_on(size=(100, 40)) as (app, pilot, screen):` the healthy Llama-3-70B TP8 node's app at
    that terminal size (default 80×24), its planner open and solved once (`helpers.open_planner`)."""
    from tests.ui.helpers import open_planner

    @asynccontextmanager
    async def opened(*, size: tuple[int, int] = (80, 24)) -> AsyncIterator[tuple[KvtopApp, Pilot[object], PlannerScreen]]:
        app = make_app(healthy_snapshot)
        async with app.run_test(size=size) as pilot:
            yield app, pilot, await open_planner(pilot)

    return opened


async def wait_for(pilot: Pilot[object], condition: Callable[[], object], *, rounds: int = 200) -> None:
    """Pause until `condition()` is true; fail after `rounds` pauses rather than hang."""
    for _ in range(rounds):
        if condition():
            return
        await pilot.pause(0.01)
    raise AssertionError("condition not met in time")


async def wait_for_value(pilot: Pilot[object], read: Callable[[], object], expected: object, *, rounds: int = 200) -> None:
    """Pause until `read()` gives `expected` (what Textual draws after the event that changed it: a footer's keys, a
    widget's region); fail after `rounds` pauses saying what it last gave, rather than hang."""
    for _ in range(rounds):
        if read() == expected:
            return
        await pilot.pause(0.01)
    shown = read()
    assert shown == expected, f"still {shown!r}, not {expected!r}"


async def wait_for_snapshot(pilot: Pilot[object]) -> None:
    """Until the app shows a snapshot and the dashboard drew its rows."""
    app = pilot.app
    assert isinstance(app, KvtopApp)
    await wait_for(pilot, lambda: app.node.snapshot is not None)
    await pilot.pause()


def drawn_footer_keys(app: App[object]) -> list[str]:
    """The enabled keys the footer of the screen on top shows now (as Textual names them), left to right."""
    from textual.widgets import Footer
    from textual.widgets._footer import FooterKey

    footer = app.screen.query_one(Footer)
    return [key.key for key in footer.query(FooterKey) if not key.has_class("-disabled")]


def promised_footer_keys(app: App[object]) -> set[str]:
    """The enabled keys the screen's bindings now promise the footer (as Textual's `Footer.compose` picks them: the
    first shown binding of each action, and the command palette's key)."""
    from textual.widgets import Footer

    promised: dict[str, tuple[str, bool]] = {}
    active = app.screen.active_bindings
    for _, binding, enabled, _ in active.values():
        if binding.show:
            promised.setdefault(binding.action, (binding.key, enabled))
    keys = {key for key, enabled in promised.values() if enabled}
    footer = app.screen.query_one(Footer)
    palette = active.get(app.COMMAND_PALETTE_BINDING)
    if footer.show_command_palette and app.ENABLE_COMMAND_PALETTE and palette is not None and palette[2]:
        keys.add(palette[1].key)
    return keys


async def footer_keys(pilot: Pilot[object]) -> list[str]:
    """The keys the footer of the screen on top lists (as Textual names them), left to right, once the footer
    has drawn the screen's bindings as they are now: Textual recomposes a footer after a screen's bindings change
    (a screen opened, the focus or the selection moved), so a bare read can see none of them, or the last ones."""
    app = pilot.app
    await wait_for(pilot, lambda: drawn_footer_keys(app) and set(drawn_footer_keys(app)) == promised_footer_keys(app))
    return drawn_footer_keys(app)
