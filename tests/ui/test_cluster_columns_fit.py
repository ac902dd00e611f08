"""The demo cluster's node list at 160 columns: no cell cut at the edge.

Before, the last column read "462.3 / 557." on h100-f (session 67's walk): the columns, each its widest cell and a
column of padding a side, came to 166. Now the engine column (every engine is in the engine list below) gives way
where the table fits without it; at 200 columns every column is shown, and at 100 the table scrolls sideways as before.
"""

from __future__ import annotations

from kvtop.ui.widgets.cluster_table import COLUMNS, ClusterTable
from tests.ui.conftest import wait_for
from tests.ui.helpers import make_demo_cluster_app


async def _columns_at(width: int) -> tuple[list[str], int, int, str]:
    app, client = make_demo_cluster_app()
    try:
        async with app.run_test(size=(width, 40)) as pilot:
            await wait_for(pilot, lambda: app.cluster.view is not None)
            await pilot.pause()
            table = app.cluster_screen.query_one(ClusterTable)
            labels = [str(column.label) for column in table.ordered_columns]
            drawn = sum(column.get_render_width(table) for column in table.ordered_columns)
            memory = table.get_row("h100-f")[labels.index("used / total")].plain
            return labels, drawn, table.scrollable_content_region.width, memory
    finally:
        client.close()


async def test_at_160_columns_the_engine_column_gives_way_and_every_cell_is_whole() -> None:
    labels, drawn, room, memory = await _columns_at(160)
    assert labels == [column for column in COLUMNS if column != "engine"]
    assert drawn <= room <= 160
    # h100-f (scenario gpu5-lost): seven H100s answering, 79.65 GiB each (GPU 5 lost), 7 × 79.65 = 557.5: whole
    assert memory == "462.3 / 557.5 GiB"


async def test_at_200_and_100_columns_every_column_stays() -> None:
    for width in (200, 100):
        labels, _, _, _ = await _columns_at(width)
        assert labels == list(COLUMNS)
