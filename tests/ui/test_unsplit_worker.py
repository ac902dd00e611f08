"""A worker with no predicted ledger (a node read through Prometheus, a model kvtop cannot resolve).

Its bytes are one "engine worker" segment, not "runtime"; observed weights and KV pool split it
when the engine reported them. Node: tests/ui/fakes.py's Llama-3-70B TP8, ledgers withheld.
"""

from __future__ import annotations

from kvtop.domain.node import build_snapshot
from kvtop.ui.screens.dashboard import DashboardScreen
from kvtop.ui.widgets.memory_bar import observed_segments
from tests.ui.conftest import wait_for_snapshot
from tests.ui.fakes import GIB, H100_TOTAL_BYTES, llama_ledger, llama_snapshot

#: GPU 0's worker: weights + KV pool + reserve + context − the 2 GiB of reserve not yet claimed.
WORKER_BYTES = 83_373_353_861


def unpredicted_snapshot():
    healthy = llama_snapshot()
    return build_snapshot(healthy.observation, {}, source="fake:no-ledger")


def split(segments) -> dict[str, int]:
    return {kind.label: size for kind, size in segments}


def test_a_worker_without_prediction_is_one_engine_worker_segment():
    snapshot = unpredicted_snapshot()
    rank = snapshot.rank_on_gpu(0)
    assert rank.predicted is None and rank.observed.process_bytes == WORKER_BYTES
    bar = split(observed_segments(snapshot.observation.gpu(0), rank))
    assert bar["engine worker"] == WORKER_BYTES
    assert bar["runtime"] == bar["weights"] == bar["KV pool"] == 0
    assert sum(bar.values()) == H100_TOTAL_BYTES


def test_observed_weights_and_kv_split_an_unpredicted_worker():
    snapshot = unpredicted_snapshot()
    rank = snapshot.rank_on_gpu(0)
    ledger_rank = llama_ledger().ranks[0]
    observed = rank.observed.model_copy(
        update={"weights_bytes": ledger_rank.weights_bytes, "kv_pool_bytes": ledger_rank.kv_pool_bytes}
    )
    bar = split(
        observed_segments(snapshot.observation.gpu(0), rank.model_copy(update={"observed": observed}))
    )
    assert bar["weights"] == 17_640_734_720
    assert bar["KV pool"] == ledger_rank.kv_pool_bytes
    assert bar["runtime"] == WORKER_BYTES - 17_640_734_720 - ledger_rank.kv_pool_bytes
    assert bar["runtime"] == ledger_rank.reserve_bytes + ledger_rank.context_bytes - 2 * GIB
    assert bar["engine worker"] == 0


def test_weights_alone_leave_the_rest_as_engine_worker():
    snapshot = unpredicted_snapshot()
    rank = snapshot.rank_on_gpu(0)
    observed = rank.observed.model_copy(update={"weights_bytes": 17_640_734_720})
    bar = split(
        observed_segments(snapshot.observation.gpu(0), rank.model_copy(update={"observed": observed}))
    )
    assert bar["weights"] == 17_640_734_720
    assert bar["engine worker"] == WORKER_BYTES - 17_640_734_720
    assert bar["runtime"] == 0


async def test_the_dashboard_legend_names_the_engine_worker_only_when_a_row_shows_one(
    make_app, healthy_snapshot
):
    for snapshot, named in ((unpredicted_snapshot(), True), (healthy_snapshot, False)):
        app = make_app(snapshot)
        async with app.run_test(size=(160, 48)) as pilot:
            await wait_for_snapshot(pilot)
            assert isinstance(app.screen, DashboardScreen)
            text = app.screen.query_one("#legend").render().plain
            assert ("░engine worker" in text) is named
            assert "▒runtime" in text
