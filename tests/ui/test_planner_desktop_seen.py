"""The planner and the dashboard on a node that read its own desktop (WSL2's kernel in /proc/version): the planner's
`desktop` field starts on, as `plan --desktop` would, and its title says the fact was read, not typed; the header says
where it came from. The node is the fakes' Llama-3-70B TP8 on H100s with the WSL2 kernel string of
tests/data/host/proc_version_wsl2 (SOURCES.md)."""

from __future__ import annotations

from textual.widgets import Select

from kvtop.domain.host_desktop import host_desktop
from kvtop.domain.node import NodeSnapshot
from kvtop.ui.planning import desktop_fact_note, field_texts
from kvtop.ui.widgets.node_header import NodeHeader
from tests.data_paths import DATA
from tests.ui.conftest import wait_for, wait_for_snapshot
from tests.ui.helpers import open_planner, shown

DESKTOP = host_desktop((DATA / "host" / "proc_version_wsl2").read_text(), dxg_present=False)


def _wsl(snapshot: NodeSnapshot) -> NodeSnapshot:
    """`snapshot` as the predictor gives it on a node that read the WSL2 kernel (`predictor.gpu_inputs`)."""
    seen = {"desktop": True, "desktop_seen": DESKTOP}
    views = tuple(
        view.model_copy(update={
            "ledger": view.ledger.model_copy(update={"measured": view.ledger.measured.model_copy(update=seen)}),
            "explained": view.explained.model_copy(
                update={"measured": view.explained.measured.model_copy(update=seen)}) if view.explained else None,
        }) if view.ledger is not None else view
        for view in snapshot.engines
    )  # fmt: skip
    observation = snapshot.observation.model_copy(update={"desktop": DESKTOP})
    return snapshot.model_copy(update={"engines": views, "observation": observation})


def test_the_desktop_field_starts_on_with_where_it_was_read(healthy_snapshot) -> None:
    measured = _wsl(healthy_snapshot).engines[0].ledger.measured
    assert field_texts(healthy_snapshot.engines[0].ledger.settings, measured)["desktop"] == "on"
    assert desktop_fact_note(measured) == (
        " · Windows desktop under WSL2, read from /proc/version: 5.15.167.4-microsoft-standard-WSL2")
    assert desktop_fact_note(measured.model_copy(update={"desktop": False})) == ""  # turned off in the form
    assert desktop_fact_note(healthy_snapshot.engines[0].ledger.measured) == ""  # nothing read


async def test_the_planner_and_header_show_the_desktop_read_from_proc_version(make_app, healthy_snapshot) -> None:
    app = make_app(_wsl(healthy_snapshot))
    async with app.run_test(size=(200, 50)) as pilot:
        await wait_for_snapshot(pilot)
        # the header reads the domain's phrase (`HostDesktop.brief`), the planner's title and the plan's note its `cited`
        header = app.screen.query_one(NodeHeader).header_content().plain
        assert "│ Windows desktop under WSL2, read from /proc/version" in header
        assert DESKTOP is not None and DESKTOP.brief == "Windows desktop under WSL2, read from /proc/version"
        screen = await open_planner(pilot)
        # the form fills after the planner mounts: on a loaded machine the first look can come before it
        await wait_for(pilot, lambda: screen.query_one("#plan-desktop", Select).value == "on")
        assert "Windows desktop under WSL2, read from /proc/version: 5.15.167.4-microsoft-standard-WSL2" in shown(
            screen, "#planner-title"
        )
        plan = screen.outcome.after_plan
        assert plan is not None and plan.estimate.desktop is not None
        assert plan.estimate.desktop.note.endswith("(Windows desktop under WSL2, read from /proc/version: 5.15.167.4-microsoft-standard-WSL2)")
