"""An engine server's own GPU memory (vLLM's API server CUDA context) is shown as its engine's:
an "engine server" row in the rank ledger and segment in the bar, never "other used (no process)"
or driver bytes (issue 21). The node is the recorded 8×H100 vLLM TP8 listing plus the server's
500 MiB on GPU 0 (tests/fakes/fake_process_table.py)."""

from __future__ import annotations

from kvtop.domain.node import NodeSnapshot, build_snapshot
from kvtop.sources.processes import attribute_node
from kvtop.ui.ledger_rows import rank_ledger
from kvtop.ui.widgets.memory_bar import DRIVER, SERVER, observed_segments
from tests.fakes.fake_process_table import API_SERVER_CONTEXT_MIB, vllm_tp8_node_with_api_server
from tests.ui.conftest import wait_for_snapshot

MIB = 1 << 20
CONTEXT = API_SERVER_CONTEXT_MIB * MIB
RESERVED = 336 * MIB  # the listing's driver-reserved bytes per H100
BEYOND_WORKER = (79101 - 79028) * MIB  # the listing: NVML used 79,101 MiB, its one process 79,028 MiB


def snapshot(*, workers: bool = True) -> NodeSnapshot:
    return build_snapshot(attribute_node(*vllm_tp8_node_with_api_server(workers=workers)), {})


def test_the_rank_ledger_names_the_servers_bytes_beside_the_worker() -> None:
    view = rank_ledger(snapshot(), 0)
    assert view is not None and view.rank is not None
    observed = {row.label: row.observed_bytes for row in view.rows}
    assert observed["engine server process"] == CONTEXT
    assert observed["other used (no process)"] == BEYOND_WORKER  # what it was before the server came
    assert observed[f"worker pid {view.rank.pid}"] == 79028 * MIB


def test_the_bar_draws_the_servers_bytes_as_its_own_segment_not_as_driver() -> None:
    snap = snapshot()
    segments = dict(observed_segments(snap.observation.gpus[0], snap.rank_on_gpu(0)) or ())
    assert (segments[SERVER], segments[DRIVER]) == (CONTEXT, RESERVED + BEYOND_WORKER)
    other = dict(observed_segments(snap.observation.gpus[1], snap.rank_on_gpu(1)) or ())
    assert (other[SERVER], other[DRIVER]) == (0, RESERVED + BEYOND_WORKER)


def test_a_server_alone_on_a_gpu_is_its_engines_bytes_not_no_process() -> None:
    snap = snapshot(workers=False)
    view = rank_ledger(snap, 0)
    assert view is not None and view.rank is None
    observed = {row.label: row.observed_bytes for row in view.rows}
    assert observed["engine server process"] == CONTEXT and "other used (no process)" not in observed
    segments = dict(observed_segments(snap.observation.gpus[0], None) or ())
    assert (segments[SERVER], segments[DRIVER]) == (CONTEXT, RESERVED)


async def test_the_dashboard_legend_names_the_engine_server_segment(make_app) -> None:
    app = make_app(snapshot())
    async with app.run_test(size=(200, 30)) as pilot:
        await wait_for_snapshot(pilot)
        assert "engine server" in app.screen.query_one("#legend").render().plain
