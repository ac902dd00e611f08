"""A failing, slow or degraded source never crashes or freezes the UI; it shows what happened."""

from __future__ import annotations

import threading

from kvtop.domain.errors import KvtopError
from kvtop.domain.node import NodeSnapshot
from kvtop.domain.node_failure import NodeFailure
from kvtop.ui.screens.dashboard import DashboardScreen
from kvtop.ui.screens.help import HelpScreen
from kvtop.ui.state import NodeState
from kvtop.ui.widgets.gpu_list import GpuList
from kvtop.ui.widgets.node_header import NodeHeader, freshness
from tests.ui.conftest import wait_for, wait_for_snapshot
from tests.ui.fakes import LOST_MESSAGE, FakeSource, llama_snapshot


def header_text(app) -> str:
    return app.screen.query_one(NodeHeader).render().plain


def row_text(app, gpu_index: int) -> str:
    return app.screen.query_one(GpuList).row_text(gpu_index)


async def test_a_source_failing_mid_run_shows_a_stale_marker_and_keeps_the_last_snapshot(
    make_app, healthy_snapshot
):
    source = FakeSource(healthy_snapshot)
    app = make_app(source)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_snapshot(pilot)
        assert "● live · every 3600 s" in header_text(app)
        source.push(RuntimeError("nvmlDeviceGetMemoryInfo timed out"))
        await pilot.press("r")
        await wait_for(pilot, lambda: app.node.failure is not None)
        await pilot.pause()
        assert "▲ STALE · source failing: RuntimeError: nvmlDeviceGetMemoryInfo timed out" in header_text(app)
        assert app.node.snapshot is healthy_snapshot
        assert len(app.screen.query_one(GpuList).shown_gpus) == 8
        await pilot.press("question_mark")  # still answering keys
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.press("escape")
        source.push(healthy_snapshot)
        await pilot.press("r")
        await wait_for(pilot, lambda: app.node.failure is None)
        await pilot.pause()
        assert "● live" in header_text(app)


async def test_a_kvtop_error_from_the_source_is_shown_as_its_message(make_app):
    app = make_app(FakeSource(KvtopError("NVML: no NVIDIA driver is loaded")))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.node.failure is not None)
        await pilot.pause()
        assert "source failing: NVML: no NVIDIA driver is loaded · nothing shown yet" in header_text(app)
        assert "source failing" in app.screen.query_one("#empty").render().plain


async def test_a_gpu_lost_mid_run_shows_lost_and_its_message_on_its_row(make_app, healthy_snapshot):
    source = FakeSource(healthy_snapshot)
    app = make_app(source)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for_snapshot(pilot)
        assert "LOST" not in row_text(app, 5)
        source.push(llama_snapshot(lost_gpu=5))
        await pilot.press("r")
        await wait_for(pilot, lambda: app.node.snapshot is not healthy_snapshot)
        await pilot.pause()
        lost_row = row_text(app, 5)
        assert "LOST" in lost_row
        assert LOST_MESSAGE in " ".join(lost_row.split())
        assert "OK" in row_text(app, 4)


class _BlockingSource:
    """collect() blocks until released: a source that hangs (NVML stuck, an endpoint timing out)."""

    label = "blocking"

    def __init__(self) -> None:
        self.release = threading.Event()
        self.calls = 0

    def collect(self) -> NodeSnapshot:
        self.calls += 1
        self.release.wait(10)
        raise TimeoutError("gave up")


async def test_a_hanging_source_never_blocks_a_keypress_nor_stacks_threads(make_app):
    source = _BlockingSource()
    app = make_app(source)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: source.calls == 1)
            assert "waiting for the first snapshot" in header_text(app)
            await pilot.press("r", "r", "question_mark")
            await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
            await pilot.press("escape")
            await wait_for(pilot, lambda: isinstance(app.screen, DashboardScreen))
            assert source.calls == 1
            source.release.set()
            await wait_for(pilot, lambda: app.node.failure == NodeFailure("TimeoutError: gave up"))
    finally:
        source.release.set()


def test_no_answer_for_three_intervals_reads_stale_with_its_age(healthy_snapshot):
    state = NodeState(source_label="fake", snapshot=healthy_snapshot, received_at=100.0)
    assert freshness(state, now=101.5, interval_s=1.0).plain == "● live · every 1 s"
    assert freshness(state, now=102.0, interval_s=1.0).plain == "● late · 2 s ago"
    assert freshness(state, now=112.0, interval_s=1.0).plain == "▲ STALE 12 s · the source has not answered"
    assert freshness(state, now=109.0, interval_s=5.0).plain == "● live · every 5 s"
    assert freshness(state, now=112.0, interval_s=5.0).plain == "● late · 12 s ago"


def test_a_demo_node_is_never_called_live():
    """`--demo`: on time it reads '● simulated · every 1 s'; a real node's reads '● live'."""
    from kvtop.commands.node_source import DemoSource
    from kvtop.sources.scenario import load_scenario

    demo = DemoSource(load_scenario("llama70b-tp8-sglang")).collect_at(0)
    state = NodeState(source_label=demo.source, snapshot=demo, received_at=100.0)
    assert freshness(state, now=100.5, interval_s=1.0).plain == "● simulated · every 1 s"
    assert "live" not in freshness(state, now=100.5, interval_s=1.0).plain
