"""The node's one process table (nvitop's): every GPU's processes, sorted, filtered, tagged, signalled at once.

The co-tenant node of tests/ui/fakes.py (Llama-3-70B TP8, SGLang's workers pids 4243…4250 on GPUs 0–7,
a 6 GiB Jupyter kernel pid 9001 on GPU 3) with two more processes: pid 9002, a 2 GiB notebook of user
id 1001 on GPU 5 that kvtop named, and pid 9003 on GPU 6 whose start, user and executable kvtop could
not read. Eleven rows: 8 workers + 3 others.
"""

from __future__ import annotations

from dataclasses import replace

from kvtop.domain.diagnose import diagnose
from kvtop.domain.node import NodeSnapshot, build_snapshot
from kvtop.domain.observe import GpuProcess, ProcessInfoState, ProcessRole
from kvtop.domain.ports import ProcessSignal
from kvtop.domain.process_identity import ProcessIdentity
from kvtop.ui.filter_words import FilterError
from kvtop.ui.process_filter import parse_process_filter
from kvtop.ui.process_rows import process_rows
from kvtop.ui.screens.processes import ProcessScreen
from kvtop.ui.screens.signal_confirm import SignalScreen
from tests.ui.conftest import footer_keys, wait_for
from tests.ui.fakes import ENGINE_ID, GIB, llama_ledger, llama_snapshot
from tests.ui.helpers import CO_TENANT_PID, FakeSignalSender, open_node_table, select, text

NOTEBOOK_PID = 9002  # GPU 5, named
UNNAMED_PID = 9003  # GPU 6, not named
WORKER_TP0_PID = 4243


def busy_node() -> NodeSnapshot:
    base = llama_snapshot(co_tenant_gpu=3)
    notebook = GpuProcess(
        pid=NOTEBOOK_PID, used_bytes=2 * GIB, name="python3", title="notebook", user="bob", role=ProcessRole.CO_TENANT,
        identity=ProcessIdentity(pid=NOTEBOOK_PID, start_time=1_700_000_100.0, uid=1001, exe="/usr/bin/python3.11"),
    )  # fmt: skip
    unnamed = GpuProcess(pid=UNNAMED_PID, used_bytes=GIB, role=ProcessRole.CO_TENANT, info_state=ProcessInfoState.ACCESS_DENIED)
    extra = {5: notebook, 6: unnamed}
    gpus = tuple(
        gpu.model_copy(update={"processes": (*gpu.processes, extra[gpu.index])}) if gpu.index in extra else gpu
        for gpu in base.observation.gpus
    )
    observation = base.observation.model_copy(update={"gpus": gpus})
    return build_snapshot(observation, {ENGINE_ID: llama_ledger()}, source="fake:llama-3-70b-tp8")


def test_every_gpus_processes_are_one_row_each_with_their_gpu() -> None:
    rows = process_rows(busy_node())
    assert len(rows) == 11
    assert [(row.gpu, row.pid) for row in rows if row.role is not ProcessRole.ENGINE_WORKER] == [
        (3, CO_TENANT_PID), (5, NOTEBOOK_PID), (6, UNNAMED_PID),
    ]  # fmt: skip
    assert [row.pid for row in process_rows(busy_node(), 5)] == [4248, NOTEBOOK_PID]


def test_the_filter_reads_keys_text_and_negation() -> None:
    rows = process_rows(busy_node())

    def pids(words: str) -> list[int]:
        wanted = parse_process_filter(words)
        return [row.pid for row in rows if wanted.matches(row)]

    assert pids("role:co-tenant") == [CO_TENANT_PID, NOTEBOOK_PID, UNNAMED_PID]
    assert pids("role:co-tenant !gpu:6") == [CO_TENANT_PID, NOTEBOOK_PID]
    assert pids("gpu:3") == [4246, CO_TENANT_PID] == pids("gpu3")
    assert pids("user:bob") == [NOTEBOOK_PID] == pids("notebook")
    assert pids("engine:tp7") == [4250]
    assert pids("9002") == [NOTEBOOK_PID] and pids("pid:9001,9003") == [CO_TENANT_PID, UNNAMED_PID]
    assert pids("re:^jupyter") == [CO_TENANT_PID]
    for bad, said in (("foo:1", "unknown filter key 'foo'"), ("gpu:x", "gpu: takes numbers"), ("re:(", "re: not a regular")):
        try:
            parse_process_filter(bad)
        except FilterError as error:
            assert str(error).startswith(said)
        else:
            raise AssertionError(bad)


async def test_x_upper_opens_every_gpu_and_a_narrows_to_the_selected_processs_gpu(make_app):
    app = make_app(busy_node(), signal_sender=FakeSignalSender())
    async with app.run_test(size=(120, 30)) as pilot:
        panel = await open_node_table(pilot)
        assert panel.gpu_index is None and len(panel._rows) == 11
        assert panel._rows[0].pid == WORKER_TP0_PID  # most bytes first: a worker
        title = text(panel, "#processes-title")
        assert "Processes · every GPU (8) · 11 processes" in title
        await select(pilot, panel, NOTEBOOK_PID)
        await pilot.press("a")  # no GPU to come back to: the selected process's
        assert panel.gpu_index == 5 and [row.pid for row in panel._rows] == [4248, NOTEBOOK_PID]
        assert panel.selected_pid == NOTEBOOK_PID
        await pilot.press("a")
        assert panel.gpu_index is None and panel.selected_pid == NOTEBOOK_PID
        await pilot.press("slash", *"role:co-tenant", "enter")
        assert [row.pid for row in panel._rows] == [CO_TENANT_PID, NOTEBOOK_PID, UNNAMED_PID]  # by bytes
        assert "3 processes (filtered)" in text(panel, "#processes-title")
        await pilot.press("slash", "backspace", "x", "x")  # role:co-tenanxx: matches nothing
        assert panel._rows == () and "no process on any GPU that matches the filter" in text(panel, "#processes-detail")
        await pilot.press("escape")  # closes and clears the filter
        assert len(panel._rows) == 11 and isinstance(app.screen, ProcessScreen)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, ProcessScreen))


async def test_tagged_processes_are_signalled_at_once_after_one_dialog(make_app):
    """Space tags the two notebooks; the unnamed pid is never tagged and says why; T lists both, each
    with the bytes it frees and the tokens its finding prices, and y sends one request each."""
    node = busy_node()
    findings = {f.gpus[0]: f for f in diagnose(node) if f.rule == "co_tenant"}
    assert findings[3].pids == (CO_TENANT_PID,) and findings[5].pids == (NOTEBOOK_PID,)
    sender = FakeSignalSender()
    app = make_app(node, signal_sender=sender)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        panel = await open_node_table(pilot)
        for pid in (CO_TENANT_PID, NOTEBOOK_PID, UNNAMED_PID):
            await select(pilot, panel, pid)
            await pilot.press("space")
        assert set(panel.tagged) == {CO_TENANT_PID, NOTEBOOK_PID}
        said = [n.message for n in app._notifications]
        assert any(m.startswith(f"pid {UNNAMED_PID} cannot be tagged: kvtop could not read pid {UNNAMED_PID}'s start time") for m in said)
        assert "2 tagged" in text(panel, "#processes-title")
        assert {"T", "K", "I"} <= set(await footer_keys(pilot))  # the selected row is the unnamed pid: the tags are signalled
        await pilot.press("K")
        await wait_for(pilot, lambda: isinstance(app.screen, SignalScreen))
        dialog = text(app.screen, "#signal-text")
        assert dialog.startswith("Send SIGKILL to 2 tagged processes, one by one?")
        assert "pid 9001 frees 6.00 GiB on GPU 3 once it exits" in dialog
        assert "pid 9002 frees 2.00 GiB on GPU 5 once it exits" in dialog
        # SGLang sizes every rank by the least free GPU: the kernel's GPU 3 prices, the notebook's GPU 5 alone does not
        assert findings[3].gain_tokens > 0 and findings[5].gain_tokens == 0
        assert f"+{findings[3].gain_tokens:,} tokens per rank for sglang:4242 once it restarts" in dialog
        assert "no tokens for sglang:4242 (finding: Another process holds memory on an engine's GPU)" in dialog
        assert "user bob" in dialog and "REFUSED" not in dialog
        await pilot.press("y")
        await wait_for(pilot, lambda: len(sender.requests) == 2)
        sent = sorted((r.pid, r.gpu_index, r.signal, r.forced, r.identity.uid) for r in sender.requests)
        assert sent == [(CO_TENANT_PID, 3, ProcessSignal.KILL, False, 1000), (NOTEBOOK_PID, 5, ProcessSignal.KILL, False, 1001)]
        assert panel.tagged == {}


async def test_an_engine_process_among_the_tagged_needs_the_force(make_app):
    sender = FakeSignalSender()
    app = make_app(busy_node(), signal_sender=sender)
    async with app.run_test(size=(120, 40)) as pilot:
        panel = await open_node_table(pilot)
        for pid in (CO_TENANT_PID, WORKER_TP0_PID):
            await select(pilot, panel, pid)
            await pilot.press("space")
        await pilot.press("T")
        await wait_for(pilot, lambda: isinstance(app.screen, SignalScreen))
        dialog = text(app.screen, "#signal-text")
        assert "REFUSED: pid 4243 is engine worker of sglang:4242 TP0, which is serving" in dialog
        assert "F sends it anyway; y sends the others." in dialog
        assert (await footer_keys(pilot))[:3] == ["y", "F", "n"]
        await pilot.press("F")
        await wait_for(pilot, lambda: len(sender.requests) == 2)
        assert sorted((r.pid, r.forced) for r in sender.requests) == [(WORKER_TP0_PID, True), (CO_TENANT_PID, False)]


async def test_read_only_tags_nothing(make_app):
    sender = FakeSignalSender()
    app = make_app(busy_node(), read_only=True, signal_sender=sender)
    async with app.run_test(size=(80, 24)) as pilot:
        panel = await open_node_table(pilot)
        await select(pilot, panel, CO_TENANT_PID)
        await pilot.press("space", "T")
        await pilot.pause()
        assert panel.tagged == {} and sender.requests == [] and isinstance(app.screen, ProcessScreen)
        assert not {"space", "T", "K", "I"} & set(await footer_keys(pilot))


async def test_a_tag_is_dropped_when_its_pid_names_another_process(make_app):
    node = busy_node()
    sender = FakeSignalSender()
    app = make_app(node, signal_sender=sender)
    async with app.run_test(size=(120, 30), notifications=True) as pilot:
        panel = await open_node_table(pilot)
        await select(pilot, panel, NOTEBOOK_PID)
        await pilot.press("space")
        assert set(panel.tagged) == {NOTEBOOK_PID}
        reused = ProcessIdentity(pid=NOTEBOOK_PID, start_time=1_750_000_000.0, uid=1001, exe="/usr/bin/python3.11")
        gpus = tuple(
            gpu.model_copy(update={"processes": tuple(
                p.model_copy(update={"identity": reused}) if p.pid == NOTEBOOK_PID else p for p in gpu.processes
            )})
            for gpu in node.observation.gpus
        )  # fmt: skip
        later = node.model_copy(update={"observation": node.observation.model_copy(update={"gpus": gpus})})
        panel.show_node(replace(app.node, snapshot=later))  # the next snapshot: pid 9002 started again
        assert panel.tagged == {}
        await pilot.pause()
        assert any(n.message == f"pid {NOTEBOOK_PID} untagged: it exited or now names another process" for n in app._notifications)



def test_the_bytes_sort_ranks_by_the_figure_shown_so_equal_rows_keep_their_pid_order() -> None:
    """Session 54 (operator trial, `kvtop --demo llama70b-tp8-foreign-gpu3`, X): the workers all showed 73.17 or
    73.18 GiB, yet reshuffled on every poll, ranked by the bytes under the second decimal. Two workers 1 MiB apart
    (both 73.17 GiB shown, 73.17 × 2³⁰ B ≈ 78,566,000,000 B) rank by pid; 0.01 GiB more ranks first."""
    from kvtop.ui.process_rows import PROCESS_SORTS, sorted_rows

    rows = {row.pid: row for row in process_rows(llama_snapshot())}
    low, high = sorted(rows)[:2]
    shown = int(73.17 * GIB)
    by_bytes = next(sort for sort in PROCESS_SORTS if sort.name == "bytes")
    pair = (replace(rows[high], used_bytes=shown + 2**20), replace(rows[low], used_bytes=shown))
    assert [row.pid for row in sorted_rows(pair, by_bytes)] == [low, high]
    larger = (replace(rows[low], used_bytes=shown), replace(rows[high], used_bytes=int(73.18 * GIB)))
    assert [row.pid for row in sorted_rows(larger, by_bytes)] == [high, low]
