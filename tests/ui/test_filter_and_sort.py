"""The `/` filter's grammar, the sort key, pause and the command palette (issue 18, item 4).

Rows come from the co-tenant node (GPU 3: SGLang TP3 pid 4246 and a Jupyter kernel, pid 9001)
and the lost-GPU node (GPU 5 lost); every GPU is an "NVIDIA H100 80GB HBM3".
"""

from __future__ import annotations

import pytest
from textual.command import CommandPalette

from kvtop.domain.diagnose import diagnose
from kvtop.ui.filter_words import FilterError
from kvtop.ui.gpu_filter import parse_filter
from kvtop.ui.screens.dashboard import DashboardScreen, gpu_rows
from kvtop.ui.screens.processes import ProcessScreen
from kvtop.ui.state import NodeState
from kvtop.ui.widgets.gpu_list import GpuList
from kvtop.ui.widgets.row_parts import CapacityCell
from tests.ui.conftest import wait_for, wait_for_snapshot
from tests.ui.fakes import FakeSource, llama_snapshot


def matching(snapshot, text: str) -> list[int]:
    state = NodeState(source_label="t", snapshot=snapshot, findings=diagnose(snapshot))
    wanted = parse_filter(text)
    return [row.gpu.index for row in gpu_rows(state) if wanted.matches(row)]


@pytest.mark.parametrize(
    ("text", "gpus"),
    [
        ("gpu:3", [3]),
        ("gpu:3,5", [3, 5]),
        ("gpu3", [3]),
        ("3", [3]),  # a GPU index, never the "3" of "HBM3"
        ("hbm3", []),  # the marketing name is not searched
        ("h100", []),
        ("pid:9001", [3]),
        ("9001", [3]),
        ("pid:4244", [1]),  # rank TP1's worker
        ("state:tight", [3]),
        ("tight", [3]),  # a state's name typed plain
        ("state:finding", [3]),  # named by the co-tenant warning (the FP8 advice is info)
        ("state:ok", list(range(8))),
        ("engine:sglang", list(range(8))),
        ("engine:4242", list(range(8))),
        ("engine:vllm", []),
        ("jupyter", [3]),  # a process title
        ("tp3", [3]),  # the rank label
        ("llama tp5", [5]),  # model and rank: every word must match
        # every rank is short: SGLang sized all eight by GPU 3, where the co-tenant was before it started
        ("state:short", list(range(8))),
        # regular expressions over the same text, and any word negated (k9s's and nvitop's habits)
        ("re:TP[0-2]$", [0, 1, 2]),  # case-insensitive: the rank label ends the row's text
        (r"re:\bjupyter-\w+", [3]),  # \b and \w kept as typed (never lowered to \B, \W)
        ("!jupyter", [0, 1, 2, 4, 5, 6, 7]),
        ("!state:tight !gpu:0", [1, 2, 4, 5, 6, 7]),
        ("!re:tp[0-6]$", [7]),
        ("!engine:sglang", []),
    ],
)
def test_the_filter_grammar_on_the_co_tenant_node(co_tenant_snapshot, text, gpus):
    assert matching(co_tenant_snapshot, text) == gpus


def test_state_lost_and_state_short_read_the_row():
    lost = llama_snapshot(lost_gpu=5)
    assert matching(lost, "state:lost") == [5]
    state = NodeState(source_label="t", snapshot=lost)
    rows = [
        row._replace(capacity=CapacityCell("−121k tok", "warning", True, "−121k"))
        if row.gpu.index == 2
        else row
        for row in gpu_rows(state)
    ]
    assert [row.gpu.index for row in rows if parse_filter("state:short").matches(row)] == [2]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("foo:bar", "unknown filter key 'foo' (known: gpu, pid, state, engine, re; or plain text)"),
        ("re:tp[", "re: not a regular expression 'tp['"),
        ("re:", "re: needs a pattern"),
        ("gpu:x", "gpu: takes numbers (got 'x'), e.g. gpu:3 or gpu:3,5"),
        ("state:sleepy", "state: one of ok, lost, error"),
        ("pid:", "pid: needs a value, e.g. pid:4242"),
    ],
)
def test_a_filter_it_cannot_read_names_the_word(text, message):
    with pytest.raises(FilterError) as error:
        parse_filter(text)
    assert message in str(error.value)


async def test_a_bad_filter_says_why_in_the_list_and_hides_nothing(make_app, co_tenant_snapshot):
    app = make_app(co_tenant_snapshot)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_snapshot(pilot)
        await pilot.press("slash", *"foo:1")
        gpus = app.screen.query_one(GpuList)
        await wait_for(pilot, lambda: gpus.filter_error is not None)
        assert gpus.shown_gpus == tuple(range(8))
        assert "filter: unknown filter key 'foo'" in app.screen.query_one("#empty").render().plain
        await pilot.press("ctrl+u", *"pid:9001", "enter")
        await wait_for(pilot, lambda: gpus.shown_gpus == (3,))


async def test_s_sorts_problems_first_then_least_free(make_app):
    app = make_app(llama_snapshot(co_tenant_gpu=3, lost_gpu=5))
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for_snapshot(pilot)
        gpus = app.screen.query_one(GpuList)
        await pilot.press("s")
        await wait_for(pilot, lambda: gpus.shown_gpus[:2] == (5, 3))  # lost first, then the warning
        legend = app.screen.query_one("#legend").render().plain
        assert "engine rank     sorted: problems first (s) █" in legend and "│ NVML used│" in legend  # headings kept
        await pilot.press("s")  # least free: the co-tenant's GPU, then the others by index
        await wait_for(pilot, lambda: gpus.shown_gpus[0] == 3)
        await pilot.press("s", "s", "s")  # back to the GPU index
        await wait_for(pilot, lambda: gpus.shown_gpus == tuple(range(8)))


async def test_z_freezes_the_screen_while_polling_goes_on(make_app):
    source = FakeSource(llama_snapshot(kv_usage=0.42))
    app = make_app(source)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for_snapshot(pilot)
        gpus = app.screen.query_one(GpuList)
        await pilot.press("z")
        assert app.paused and app.node.paused
        assert "PAUSED" in app.screen.query_one("#header").render().plain
        calls = source.calls
        source.push(llama_snapshot(kv_usage=0.9))
        await pilot.press("r")  # polling goes on
        await wait_for(pilot, lambda: source.calls > calls and app._held.snapshot is not app.node.snapshot)
        await pilot.pause()
        assert "42%" in gpus.row_text(0) and "90%" not in gpus.row_text(0)
        await pilot.press("z")
        await wait_for(pilot, lambda: "90%" in gpus.row_text(0))
        assert not app.paused and "PAUSED" not in app.screen.query_one("#header").render().plain


async def test_ctrl_p_lists_every_action_and_runs_the_one_chosen(make_app, co_tenant_snapshot):
    app = make_app(co_tenant_snapshot)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for_snapshot(pilot)
        titles = [command.title for command in app.get_system_commands(app.screen)]
        assert len(titles) == len(set(titles))  # each action once
        assert not {"Up", "Down", "Page Left", "Copy selected text", "Focus Next"} & set(titles)
        assert {
            "Filter",
            "Findings",
            "Sort",
            "Ledger",
            "Processes",
            "Planner",
            "Probe",
            "Pause",
            "Next theme",
            "Refresh",
            "Help",
            "Quit",
        } <= set(titles)
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"Processes")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ProcessScreen))
        assert app.screen.gpu_index == 0


async def test_the_worst_gpu_is_selected_when_the_list_cannot_show_it(make_app):
    """A list too short for every GPU: the co-tenant's GPU 7 is selected (before the operator moves)."""
    app = make_app(llama_snapshot(co_tenant_gpu=7))
    async with app.run_test(size=(60, 12)) as pilot:
        await wait_for_snapshot(pilot)
        gpus = app.screen.query_one(GpuList)
        await wait_for(pilot, lambda: gpus.selected == 7)
        assert 7 in gpus.visible_gpus() and len(gpus.visible_gpus()) < 8
        assert isinstance(app.screen, DashboardScreen)


def test_the_rows_state_cell_is_the_waterfalls_change(co_tenant_snapshot):
    """Each rank's cell is its waterfall's actual − clean, as the snapshot's JSON states it."""
    rows = gpu_rows(NodeState(source_label="t", snapshot=co_tenant_snapshot))
    for row in rows:
        change = row.rank.capacity.actual_tokens - row.rank.capacity.clean_tokens
        assert change < -100_000  # the co-tenant's 6 GiB on GPU 3, on every rank
        assert row.capacity.short and row.capacity.brief == f"−{round(-change / 1000)}k"
        assert row.capacity.text == row.capacity.brief + " tok"


def _rows_with_free(snapshot, jitter: dict[int, int]):
    """The dashboard's rows, each GPU's free memory moved by `jitter[index]` bytes (a refresh's drift)."""
    from kvtop.ui.screens.dashboard import gpu_rows
    from kvtop.ui.state import NodeState

    rows = gpu_rows(NodeState(source_label="t", snapshot=snapshot))
    return [
        row._replace(gpu=row.gpu.model_copy(update={"free_bytes": row.gpu.free_bytes + jitter.get(row.gpu.index, 0)}))
        for row in rows
    ]


def test_least_free_keeps_its_order_while_free_memory_drifts_by_mib():
    """GPUs 0–7 hold the same worker; a strict sort by free bytes reshuffled them on every refresh."""
    from kvtop.ui.attention import SORT_KEYS, ordered

    least_free = next(key for key in SORT_KEYS if key.name == "least free")
    snapshot = llama_snapshot(co_tenant_gpu=3)
    MIB = 1 << 20
    first = ordered(_rows_with_free(snapshot, {i: (i % 2) * 50 * MIB for i in range(8)}), least_free)
    assert first[0] == 3  # the co-tenant's GPU: 6 GiB less free than every other
    drifted = _rows_with_free(snapshot, {i: ((i + 1) % 2) * 50 * MIB for i in range(8)})  # the parity flips
    assert tuple(row.gpu.index for row in sorted(drifted, key=least_free.rank))[1:] != first[1:]  # strict: moves
    assert ordered(drifted, least_free, previous=first) == first  # within 1 GiB: nobody moves
    assert ordered(drifted, least_free, previous=first, reverse=True)[-1] == 3  # highest free first


async def test_S_reverses_the_order_and_says_so(make_app):
    app = make_app(llama_snapshot(co_tenant_gpu=3))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for_snapshot(pilot)
        gpus = app.screen.query_one(GpuList)
        await pilot.press("s", "s")  # least free
        await wait_for(pilot, lambda: gpus.shown_gpus[0] == 3)
        await pilot.press("S")
        await wait_for(pilot, lambda: gpus.shown_gpus[-1] == 3)
        legend = app.screen.query_one("#legend").render().plain
        assert "⇅ least free ↑" in legend and "│ NVML used│" in legend  # at 120 columns: the short form


@pytest.mark.parametrize("screen_type", [DashboardScreen, ProcessScreen])
async def test_keys_typed_right_behind_the_slash_land_in_the_filter(make_app, co_tenant_snapshot, screen_type):
    """Typed fast, "/gpu:3" is queued before `/` is handled: the rest is the filter's, not the screen's
    keys (the dashboard's `p` opened the planner and the filter stayed empty)."""
    from textual import events
    from textual.widgets import Input

    app = make_app(co_tenant_snapshot)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for_snapshot(pilot)
        if screen_type is ProcessScreen:
            await pilot.press("X")  # every GPU's processes
            await wait_for(pilot, lambda: isinstance(app.screen, ProcessScreen))
        box_id = "#filter" if screen_type is DashboardScreen else "#processes-filter"
        for key, char in [("slash", "/"), ("g", "g"), ("p", "p"), ("u", "u"), ("colon", ":"), ("3", "3")]:
            app.post_message(events.Key(key, char))
        box = app.screen.query_one(box_id, Input)
        await wait_for(pilot, lambda: box.value == "gpu:3")
        assert isinstance(app.screen, screen_type)
