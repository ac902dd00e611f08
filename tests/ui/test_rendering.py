"""What the dashboard rows and the rank ledger say, from the real Llama-3-70B TP8 numbers."""

from __future__ import annotations

import pytest
from textual.geometry import Region

from kvtop.commands.node_source import DemoSource
from kvtop.domain.diagnose import diagnose
from kvtop.domain.observe import ProcessRole
from kvtop.ui.ledger_rows import rank_ledger
from kvtop.ui.state import GpuHistory, GpuTrend
from kvtop.ui.widgets.gpu_list import _columns
from kvtop.ui.widgets.memory_bar import (
    FOREIGN,
    ORPHAN,
    cell_widths,
    observed_segments,
    predicted_segments,
    sparkline,
)
from kvtop.ui.widgets.row_parts import GpuRowData, rank_label, render_row, short_gpu_name
from kvtop.units import GIB, fmt_gib
from tests.ui.fakes import (
    CO_TENANT_BYTES,
    DRIVER_RESERVED_BYTES,
    H100_TOTAL_BYTES,
    LOST_MESSAGE,
    llama_snapshot,
)

KV_BYTES_PER_TOKEN = 40_960  # Llama-3-70B, bf16, TP8: 80 layers × 2 × 1 KV head × 128 × 2 bytes


def segments_by_label(segments):
    return {kind.label: size for kind, size in segments}


def test_observed_bar_of_the_co_tenant_gpu_shows_the_foreign_bytes(co_tenant_snapshot):
    gpu = co_tenant_snapshot.observation.gpu(3)
    split = segments_by_label(observed_segments(gpu, co_tenant_snapshot.rank_on_gpu(3)))
    assert split["foreign"] == CO_TENANT_BYTES
    assert split["driver"] == DRIVER_RESERVED_BYTES
    assert split["KV pool"] == 1_127_125 * KV_BYTES_PER_TOKEN  # the engine's live tokens × bytes per token
    assert sum(split.values()) == H100_TOTAL_BYTES


def test_predicted_bar_splits_the_ledger(healthy_snapshot):
    rank = healthy_snapshot.rank_on_gpu(0)
    split = segments_by_label(predicted_segments(rank, H100_TOTAL_BYTES))
    assert split["weights"] == 17_640_734_720
    assert split["KV pool"] == rank.predicted.kv_pool_bytes
    assert split["free"] == rank.predicted_free_bytes(H100_TOTAL_BYTES)  # the figure the ledger prints, not the bar's
    assert sum(split.values()) == H100_TOTAL_BYTES


def test_predicted_bar_of_the_co_tenant_gpu_shows_the_foreign_bytes(co_tenant_snapshot):
    """Both bars draw what NVML counts beyond the worker as observed: the co-tenant's 6 GiB and the driver's bytes."""
    rank = co_tenant_snapshot.rank_on_gpu(3)
    split = segments_by_label(predicted_segments(rank, H100_TOTAL_BYTES))
    assert (split["foreign"], split["driver"]) == (CO_TENANT_BYTES, DRIVER_RESERVED_BYTES)
    assert sum(split.values()) == H100_TOTAL_BYTES


def test_cell_widths_are_proportional_and_fill_the_bar_exactly():
    assert cell_widths([1, 1, 2], 8) == [2, 2, 4]
    assert sum(cell_widths([17, 51, 15, 1, 6, 1], 25)) == 25
    assert cell_widths([0, 0], 10) == [0, 0]
    assert cell_widths([1.5e9, 2e9], 10) == cell_widths([1_500_000_000, 2_000_000_000], 10) == [4, 6]


def test_equal_bytes_before_an_edge_put_it_in_the_same_cell_of_both_bars():
    """Observed over predicted: same weights and KV pool, different runtime and free. Shares by
    largest remainder would draw the weights edge at cell 2 above and cell 1 below."""
    observed, predicted = cell_widths([14, 14, 72], 10), cell_widths([14, 14, 36, 36], 10)
    assert observed[:2] == predicted[:2] == [1, 2]
    assert observed == [1, 2, 7] and predicted == [1, 2, 3, 4]


def test_sparkline_maps_fractions_to_blocks_and_keeps_the_latest():
    assert sparkline([0.0, 0.5, 1.0], 3) == "▁▅█"
    assert sparkline([None, 1.0], 4) == "   █"
    assert sparkline([0.0] * 10 + [1.0], 2) == "▁█"


def test_history_is_bounded_per_gpu(healthy_snapshot):
    history = GpuHistory(length=3)
    for _ in range(5):
        history.record(healthy_snapshot)
    trend = history.view()[0]
    assert len(trend.kv_usage) == 3 and trend.kv_usage[-1] == 0.42
    gpu = healthy_snapshot.observation.gpu(0)
    assert trend.used_fraction[-1] == pytest.approx((gpu.used_bytes + gpu.reserved_bytes) / gpu.total_bytes)


def test_row_names_the_gpu_rank_and_tightest_mark(co_tenant_snapshot):
    view = co_tenant_snapshot.engines[0]
    data = GpuRowData(
        co_tenant_snapshot.observation.gpu(3), view.ranks[3], view, True, GpuTrend(kv_usage=(0.42,))
    )
    text = render_row(data, 80).plain
    first, second = text.split("\n")
    assert first.startswith(" 3 H100 80GB sglang TP3 obs  ")
    assert "KV  42%" in first
    assert "OK ★tight  pred" in second
    assert len(first) == len(second) == 80
    assert short_gpu_name("NVIDIA H100 80GB HBM3") == "H100 80GB"


def test_a_lost_gpu_row_says_lost_with_its_message():
    snapshot = llama_snapshot(lost_gpu=5)
    data = GpuRowData(snapshot.observation.gpu(5), None, None, False, GpuTrend())
    text = " ".join(render_row(data, 160).plain.split())
    assert f"LOST: {LOST_MESSAGE}" in text


def test_rank_ledger_of_the_co_tenant_gpu(co_tenant_snapshot):
    view = rank_ledger(co_tenant_snapshot, 3)
    rows = {row.label: row for row in view.rows}
    rank = co_tenant_snapshot.rank_on_gpu(3)
    assert rows["weights"].predicted_bytes == 17_640_734_720
    assert rows["foreign (co-tenants)"].observed_bytes == CO_TENANT_BYTES
    assert rows["foreign (co-tenants)"].predicted_bytes == CO_TENANT_BYTES  # taken as given
    assert view.tokens(CO_TENANT_BYTES) == 157_286  # 6 GiB ÷ 40,960 B per token
    worker = rows[f"= worker pid {rank.pid}"]
    assert worker.observed_bytes == rank.observed.process_bytes
    # One byte view: the predicted rows are the explained ledger's (the waterfall's end), so the pool is the
    # one SGLang sized with the co-tenant's 6 GiB gone from the least free GPU: 6 GiB × mfs 0.818 ÷ 40,960 B
    # = 128,660.3 → 128,660 tokens fewer, 128,660 × 40,960 B = 5,269,913,600 B below the clean pool
    assert rows["KV pool (live tok × B)"].predicted_bytes == 51_436_994_560 - 5_269_913_600  # clean pool: see test_exporter
    assert rows["context, NCCL"].predicted_bytes == GIB - DRIVER_RESERVED_BYTES  # its own, not the co-tenant's
    assert "− held by others" not in rows  # no second path reconciles a clean prediction any more
    assert view.tokens_per_gib == pytest.approx(26_214.4)


def test_the_co_tenant_row_names_what_its_finding_says_it_costs(co_tenant_snapshot):
    findings = diagnose(co_tenant_snapshot)
    view = rank_ledger(co_tenant_snapshot, 3, findings)
    finding = next(f for f in findings if f.rule == "co_tenant")
    assert [(c.row, c.tokens) for c in view.outside_costs] == [("foreign (co-tenants)", finding.tokens)]
    assert finding.tokens == 128_660  # not 157,286: SGLang's reserve shrinks with the lost bytes


def _split(view):
    """(the worker's parts, the worker row, the rows after it that partition the rest of the GPU)."""
    at = next(i for i, r in enumerate(view.rows) if r.label.startswith("= worker pid "))
    parts = [r for r in view.rows[:at] if not r.label.startswith("weights · ")]
    rest = [r for r in view.rows[at + 1 :] if r.kind == "item"]
    return parts, view.rows[at], rest


@pytest.mark.parametrize("gpu", [0, 3])
def test_both_columns_add_up_to_the_gpu_total_and_nothing_is_unexplained(co_tenant_snapshot, gpu):
    view = rank_ledger(co_tenant_snapshot, gpu)
    rows = {row.label: row for row in view.rows}
    parts, worker, rest = _split(view)
    assert sum(r.predicted_bytes for r in parts) == worker.predicted_bytes  # less what others hold
    assert worker.predicted_bytes + sum(r.predicted_bytes for r in rest) == H100_TOTAL_BYTES
    assert worker.observed_bytes + sum(r.observed_bytes for r in rest) == H100_TOTAL_BYTES
    assert rows["GPU total"].predicted_bytes == H100_TOTAL_BYTES
    assert rows["unexplained bytes"].observed_bytes == 0  # driver reserved and free have rows of their own


def test_the_driver_reserved_bytes_move_out_of_sglangs_context(healthy_snapshot):
    view = rank_ledger(healthy_snapshot, 0)
    rows = {row.label: row for row in view.rows}
    reserved = healthy_snapshot.observation.gpu(0).reserved_bytes
    assert rows["driver reserved"].predicted_bytes == reserved
    assert (
        rows["context, NCCL"].predicted_bytes
        == healthy_snapshot.rank_on_gpu(0).predicted.context_bytes - reserved
    )


def test_an_orphan_worker_is_in_the_orphan_row_not_foreign():
    snapshot = DemoSource.open("orphan-vllm-worker").collect()
    rows = {row.label: row for row in rank_ledger(snapshot, 1).rows}
    orphan = sum(p.used_bytes for p in snapshot.observation.gpu(1).processes if p.role is ProcessRole.ORPHAN)
    assert orphan > 70 * GIB
    assert rows["orphan engine workers"].observed_bytes == orphan
    assert rows["foreign (co-tenants)"].observed_bytes == 0
    bar = dict(observed_segments(snapshot.observation.gpu(1), None))
    assert bar[ORPHAN] == orphan and bar[FOREIGN] == 0


def test_the_used_figure_is_nvmls_used(co_tenant_snapshot):
    view = co_tenant_snapshot.engines[0]
    gpu = co_tenant_snapshot.observation.gpu(3)
    data = GpuRowData(gpu, view.ranks[3], view, False, GpuTrend())
    first = render_row(data, 160).plain.split("\n")[0]
    assert gpu.used_bytes == view.ranks[3].observed.process_bytes + CO_TENANT_BYTES
    assert f"{fmt_gib(gpu.used_bytes, 1):>10}" in first


def test_changed_spans_below_each_other_are_repainted_as_one_column():
    # (first cell, cells, line): the trend of lines 0-3, a whole line 4, the trend of line 5
    spans = [(125, 34, 0), (125, 34, 1), (125, 34, 2), (125, 34, 3), (0, 159, 4), (125, 34, 5)]
    assert _columns(spans) == [
        Region(1, 4, 159, 1),
        Region(126, 0, 34, 4),
        Region(126, 5, 34, 1),
    ]


def test_tightest_needs_one_percent_of_the_gpu_less_free_than_the_next(co_tenant_snapshot):
    assert co_tenant_snapshot.engines[0].tightest_rank.gpu_index == 3  # 6 GiB less free


def test_free_memory_jitter_on_a_healthy_node_marks_no_rank_tightest():
    source = DemoSource.open("llama70b-tp8-sglang")
    marked = [source.collect_at(tick).engines[0].tightest_rank for tick in range(10)]
    assert marked == [None] * 10


def test_a_dp_layout_names_dp0_too():
    """On DP8 every rank says its DP index, DP0 included (GPU 0 is not 'TP0' beside GPU 1's 'DP1 TP0')."""
    snapshot = DemoSource.open("dsv3-dp-attention-vllm").collect_at(0)
    view = snapshot.engines[0]
    labels = {rank.gpu_index: rank_label(rank, view) for rank in view.ranks}
    assert labels[0] == "DP0 TP0" and labels[1] == "DP1 TP0"
    healthy = llama_snapshot()
    assert rank_label(healthy.rank_on_gpu(0), healthy.engines[0]) == "TP0"  # no DP, no PP: TP alone


@pytest.mark.parametrize("width", [119, 159, 199])
def test_the_tightest_rank_keeps_its_star_when_its_tokens_fill_the_state_cell(co_tenant_snapshot, width):
    """'−129k tok' is 9 of the state cell's 11 characters: with the ★ the row says '−129k ★' instead."""
    from kvtop.ui.widgets.row_parts import CapacityCell

    view = co_tenant_snapshot.engines[0]
    cell = CapacityCell("−129k tok", "warning", True, "−129k")
    tight = GpuRowData(co_tenant_snapshot.observation.gpu(3), view.ranks[3], view, True, GpuTrend(), capacity=cell)
    loose = tight._replace(tightest=False)
    assert "−129k ★" in render_row(tight, width).plain.split("\n")[1]
    assert "−129k tok" in render_row(loose, width).plain.split("\n")[1]
    assert "★" not in render_row(loose, width).plain
