"""Pilot tests of the process panel and its signals (issue 18, item 2), through a fake signal sender.

Co-tenant node (tests/ui/fakes.py): Llama-3-70B TP8 on 8× H100; GPU 3 holds SGLang's rank TP3
(pid 4246) and a 6 GiB Jupyter kernel (pid 9001). The finding `co_tenant` names pid 9001 and
prices stopping it (its `gain_tokens`, once SGLang restarts); the dialog must show that figure
as the domain states it (tests/test_cli_diagnose.py pins it against SGLang's own arithmetic).
The demo scenario `llama70b-tp8-foreign-gpu3` is the same incident with the kernel as pid 4242.
"""

from __future__ import annotations

from kvtop.commands.node_source import DemoSource, LiveSource
from kvtop.domain.diagnose import diagnose
from kvtop.domain.ports import ProcessSignal
from kvtop.domain.process_identity import PidNamespace
from kvtop.sources.nvml import NvmlSource
from kvtop.ui.screens.dashboard import DashboardScreen
from kvtop.ui.screens.processes import ProcessScreen
from kvtop.ui.screens.signal_confirm import SignalScreen
from kvtop.ui.widgets.gpu_list import GpuList
from tests.fakes.fake_process_table import FakeProcessTable, launched
from tests.fakes.fake_pynvml import FakePynvml, gpu_from_mib
from tests.ui.conftest import footer_keys, wait_for, wait_for_snapshot
from tests.ui.fakes import FakeSource
from tests.ui.helpers import CO_TENANT_PID, FakeSignalSender, text

WORKER_TP3_PID = 4246



async def open_co_tenant_panel(pilot) -> ProcessScreen:
    """`f`, then Enter on the co-tenant finding (the first, worst)."""
    await wait_for_snapshot(pilot)
    await pilot.press("f", "enter")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, ProcessScreen))
    return pilot.app.screen


async def test_enter_on_the_co_tenant_finding_opens_gpu_3s_panel_with_its_pid_selected(
    make_app, co_tenant_snapshot
):
    app = make_app(co_tenant_snapshot, signal_sender=FakeSignalSender())
    async with app.run_test(size=(80, 24)) as pilot:
        panel = await open_co_tenant_panel(pilot)
        assert panel.gpu_index == 3
        assert panel.selected_pid == CO_TENANT_PID
        rows = {row.pid: row for row in panel._rows}
        assert set(rows) == {CO_TENANT_PID, WORKER_TP3_PID}
        assert rows[CO_TENANT_PID].role_name == "co-tenant" and rows[CO_TENANT_PID].engine == "—"
        assert rows[WORKER_TP3_PID].engine == "sglang:4242 TP3"
        assert "Processes · GPU 3 H100 80GB · 2 processes" in text(panel, "#processes-title")
        assert {"T", "K", "I"} <= set(await footer_keys(pilot))


async def test_the_signal_dialog_names_pid_bytes_and_the_tokens_the_finding_prices(
    make_app, co_tenant_snapshot
):
    sender = FakeSignalSender()
    app = make_app(co_tenant_snapshot, signal_sender=sender)
    async with app.run_test(size=(100, 30)) as pilot:
        await open_co_tenant_panel(pilot)
        await pilot.press("T")
        await wait_for(pilot, lambda: isinstance(app.screen, SignalScreen))
        dialog = text(app.screen, "#signal-text")
        assert "Send SIGTERM to pid 9001?" in dialog
        assert "frees 6.00 GiB on GPU 3 once it exits" in dialog
        gain = next(f for f in diagnose(co_tenant_snapshot) if f.rule == "co_tenant").gain_tokens
        assert gain > 0
        assert f"+{gain:,} tokens per rank for sglang:4242 once it restarts" in dialog
        assert "(finding: Another process holds memory on an engine's GPU)" in dialog
        assert "REFUSED" not in dialog
        assert (await footer_keys(pilot))[:2] == ["y", "n"] and "F" not in await footer_keys(pilot)
        await pilot.press("y")
        await wait_for(pilot, sender.sent.is_set)
        request = sender.requests[0]
        assert (request.pid, request.signal, request.gpu_index, request.forced) == (
            CO_TENANT_PID,
            ProcessSignal.TERMINATE,
            3,
            False,
        )
        assert request.used_bytes == 6 * 2**30
        await wait_for(
            pilot, lambda: any("logged in /tmp/kvtop-test.log" in n.message for n in app._notifications)
        )
        assert isinstance(app.screen, ProcessScreen)


async def test_n_sends_nothing(make_app, co_tenant_snapshot):
    sender = FakeSignalSender()
    app = make_app(co_tenant_snapshot, signal_sender=sender)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_co_tenant_panel(pilot)
        await pilot.press("K")
        await wait_for(pilot, lambda: isinstance(app.screen, SignalScreen))
        assert "Send SIGKILL to pid 9001?" in text(app.screen, "#signal-text")
        await pilot.press("enter")  # the dialog opens on Cancel: Enter never sends
        await wait_for(pilot, lambda: isinstance(app.screen, ProcessScreen))
        await pilot.press("I", "n")
        await wait_for(pilot, lambda: isinstance(app.screen, ProcessScreen))
        await pilot.pause()
        assert sender.requests == []


async def test_an_engine_worker_is_refused_unless_forced(make_app, co_tenant_snapshot):
    sender = FakeSignalSender()
    app = make_app(co_tenant_snapshot, signal_sender=sender)
    async with app.run_test(size=(100, 30)) as pilot:
        panel = await open_co_tenant_panel(pilot)
        panel.query_one("#processes-table").move_cursor(
            row=[r.pid for r in panel._rows].index(WORKER_TP3_PID)
        )
        await pilot.pause()
        assert panel.selected_pid == WORKER_TP3_PID
        await pilot.press("T")
        await wait_for(pilot, lambda: isinstance(app.screen, SignalScreen))
        dialog = text(app.screen, "#signal-text")
        assert "REFUSED: pid 4246 is engine worker of sglang:4242 TP3, which is serving" in dialog
        assert "no finding prices pid 4246" in dialog
        assert "y" not in await footer_keys(pilot) and "F" in await footer_keys(pilot)
        await pilot.press("y")  # refused: y does nothing
        await pilot.pause()
        assert sender.requests == [] and isinstance(app.screen, SignalScreen)
        await pilot.press("F")
        await wait_for(pilot, sender.sent.is_set)
        assert sender.requests[0].pid == WORKER_TP3_PID and sender.requests[0].forced


async def test_read_only_has_no_signals(make_app, co_tenant_snapshot):
    sender = FakeSignalSender()
    app = make_app(co_tenant_snapshot, read_only=True, signal_sender=sender)
    async with app.run_test(size=(80, 24)) as pilot:
        panel = await open_co_tenant_panel(pilot)
        assert not {"T", "K", "I"} & set(await footer_keys(pilot))
        assert "signals off (--read-only)" in text(panel, "#processes-title")
        await pilot.press("T", "K", "I")
        await pilot.pause()
        assert isinstance(app.screen, ProcessScreen) and sender.requests == []


async def test_x_opens_the_selected_gpus_panel_and_s_cycles_its_sort(make_app, co_tenant_snapshot):
    app = make_app(co_tenant_snapshot)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_snapshot(pilot)
        await pilot.press("down", "down", "down", "x")
        await wait_for(pilot, lambda: isinstance(app.screen, ProcessScreen))
        panel = app.screen
        assert panel.gpu_index == 3
        assert [row.pid for row in panel._rows] == [WORKER_TP3_PID, CO_TENANT_PID]  # most bytes first
        await pilot.press("s")  # by pid
        assert [row.pid for row in panel._rows] == [WORKER_TP3_PID, CO_TENANT_PID]
        assert "sorted by pid" in text(panel, "#processes-title")
        await pilot.press("s", "s")  # user, then role: "co-tenant" before "engine worker"
        assert "sorted by role" in text(panel, "#processes-title")
        assert [row.pid for row in panel._rows] == [CO_TENANT_PID, WORKER_TP3_PID]
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, DashboardScreen))


async def test_the_demo_incident_at_80x24_from_finding_to_dialog(make_app):
    """The issue's 'done when' on the demo: `f`, Enter → GPU 3's panel, pid 4242, the dialog's tokens."""
    node = DemoSource.open("llama70b-tp8-foreign-gpu3").collect_at(0)
    co_tenant = diagnose(node)[0]
    assert (co_tenant.rule, co_tenant.pids) == ("co_tenant", (4242,))  # the scenario's Jupyter kernel
    assert co_tenant.gain_tokens > 0
    app = make_app(FakeSource(node, label="demo:llama70b-tp8-foreign-gpu3"), signal_sender=FakeSignalSender())
    async with app.run_test(size=(80, 24)) as pilot:
        panel = await open_co_tenant_panel(pilot)
        assert (panel.gpu_index, panel.selected_pid) == (3, 4242)
        await pilot.press("T")
        await wait_for(pilot, lambda: isinstance(app.screen, SignalScreen))
        dialog = text(app.screen, "#signal-text")
        assert "Send SIGTERM to pid 4242?" in dialog
        assert "/home/ada/.venv/bin/python -m ipykernel_launcher" in dialog
        assert f"+{co_tenant.gain_tokens:,} tokens per rank for sglang:41000 once it restarts" in dialog


async def test_selecting_a_finding_selects_its_worst_gpu(make_app, co_tenant_snapshot):
    app = make_app(co_tenant_snapshot)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for_snapshot(pilot)
        gpus = app.screen.query_one(GpuList)
        assert gpus.selected == 0
        await pilot.press("f")  # the co-tenant finding (GPU 3)
        await wait_for(pilot, lambda: gpus.selected == 3)
        await pilot.press("j")  # FP8 advice over all eight GPUs: the tightest rank, GPU 3 again
        await pilot.pause()
        assert gpus.selected == 3
        await pilot.press("f", "enter")  # back on the list: Enter opens GPU 3's ledger
        await wait_for(pilot, lambda: getattr(app.screen, "gpu_index", None) == 3)


# --- signals only to a process kvtop can name (issue 25, item 3) ----------------------------------

NAMED_PID, UNSEEN_PID = 5001, 6001


def _source(namespace: PidNamespace) -> LiveSource:
    """One A100-80GB (samples/process_tables figures): a co-tenant kvtop can name (pid 5001) and a pid it
    cannot see (6001: another PID namespace, or gone)."""
    gpu = gpu_from_mib("NVIDIA A100-SXM4-80GB", 0, total_mib=81_920, reserved_mib=557, used_mib=3_000,
                       bus_id="00000000:07:00.0", compute=[(NAMED_PID, 1_000 << 20), (UNSEEN_PID, 2_000 << 20)])  # fmt: skip
    table = FakeProcessTable.of([launched(NAMED_PID, ["python", "train.py"], user="ada")], namespace)
    return LiveSource(nvml=NvmlSource(nvml_module=FakePynvml([gpu])), table=table)


async def _panel_of_gpu_0(pilot) -> ProcessScreen:
    await wait_for_snapshot(pilot)
    await pilot.press("x")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, ProcessScreen))
    await pilot.pause()
    return pilot.app.screen


async def _select(pilot, panel: ProcessScreen, pid: int) -> None:
    panel.query_one("#processes-table").move_cursor(row=[r.pid for r in panel._rows].index(pid))
    await pilot.pause()
    assert panel.selected_pid == pid


async def test_a_pid_kvtop_cannot_name_offers_no_signal_and_says_why(make_app):
    """Before: the unattributed row (`user ? · command ?`) opened the T/K/I dialog, and its request had no
    start time, so the sender could not tell the process it signalled from another."""
    sender = FakeSignalSender()
    app = make_app(_source(PidNamespace.HOST), signal_sender=sender)
    async with app.run_test(size=(120, 30), notifications=True) as pilot:
        panel = await _panel_of_gpu_0(pilot)
        await _select(pilot, panel, UNSEEN_PID)
        assert not {"T", "K", "I"} & set(await footer_keys(pilot))
        detail = text(panel, "#processes-detail")
        assert "no signals pid 6001 is not visible here: it runs in another PID namespace" in detail
        assert "kvtop cannot tell which process it is" in detail
        await pilot.press("T", "K", "I")
        await pilot.pause()
        assert isinstance(app.screen, ProcessScreen) and sender.requests == []
        await _select(pilot, panel, NAMED_PID)  # the process kvtop named keeps its signals
        assert {"T", "K", "I"} <= set(await footer_keys(pilot))
        await pilot.press("T")
        await wait_for(pilot, lambda: isinstance(app.screen, SignalScreen))
        await pilot.press("y")
        await wait_for(pilot, sender.sent.is_set)
        named = sender.requests[0].identity
        assert (named.pid, named.uid, named.exe, named.start_time) == (
            NAMED_PID, 1000, "/usr/bin/python3.11", 1_699_999_000.0,
        )  # fmt: skip


async def test_in_a_containers_pid_namespace_the_panel_says_so_and_signals_nothing(make_app):
    """NVML's pids are the host's: in a container's own namespace pid 5001 is some other process (the
    table answers for it), so kvtop must not name it, nor offer to signal it."""
    sender = FakeSignalSender()
    app = make_app(_source(PidNamespace.FOREIGN), signal_sender=sender)
    async with app.run_test(size=(200, 30)) as pilot:
        panel = await _panel_of_gpu_0(pilot)
        assert "kvtop runs in another PID namespace (a container without --pid=host)" in text(
            panel, "#processes-title"
        )
        for pid in (NAMED_PID, UNSEEN_PID):
            await _select(pilot, panel, pid)
            assert not {"T", "K", "I"} & set(await footer_keys(pilot))
            assert f"pid {pid} is the host's and kvtop runs in another PID namespace" in text(panel, "#processes-detail")
            await pilot.press("T")
            await pilot.pause()
            assert isinstance(app.screen, ProcessScreen) and sender.requests == []


async def test_a_demo_nodes_dialog_says_first_that_no_signal_is_sent(make_app, co_tenant_snapshot):
    """An operator trial (session 50): on `--demo` the dialog read 'Send SIGTERM to pid 4242?' exactly as on a real
    node, and only the answer afterwards said the node was simulated; it now says so before it asks. A live node's
    dialog says nothing of the kind."""
    node = DemoSource.open("llama70b-tp8-foreign-gpu3").collect_at(0)
    demo = make_app(FakeSource(node, label="demo:llama70b-tp8-foreign-gpu3"), signal_sender=FakeSignalSender(),
                    probe_simulated=True)  # fmt: skip
    async with demo.run_test(size=(120, 40)) as pilot:
        await open_co_tenant_panel(pilot)
        await pilot.press("T")
        await wait_for(pilot, lambda: isinstance(demo.app.screen, SignalScreen))
        dialog = text(demo.screen, "#signal-text")
        assert dialog.startswith("Send SIGTERM to pid 4242? (terminate: it may clean up first, or ignore it) a "
                                 "simulated node: no signal is sent (its processes are the demo's, not this machine's)")
    live = make_app(co_tenant_snapshot, signal_sender=FakeSignalSender())
    async with live.run_test(size=(120, 40)) as pilot:
        await open_co_tenant_panel(pilot)
        await pilot.press("T")
        await wait_for(pilot, lambda: isinstance(live.screen, SignalScreen))
        assert "simulated" not in text(live.screen, "#signal-text")
