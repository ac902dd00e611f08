"""The cluster TUI's tokens are on screen at 100 columns (session 44, task I3).

`kvtop --demo-cluster` in a 100-column terminal showed the node list's node, health, GPUs, used / total,
unexplained and part of findings: "tokens per rank now / clean", the last column, was wholly off-screen (the
columns before it took 23 + 10 + 12 + 23 + 13 + 23 = 104 of the 100), and the engine list's "tokens per rank" sat
behind its "where" (up to 55 columns). The tokens now come third in both lists.
"""

from __future__ import annotations

import re

from kvtop.ui.widgets.cluster_table import COLUMNS, ClusterTable
from kvtop.ui.widgets.engine_table import ENGINE_COLUMNS, EngineTable
from tests.ui.conftest import wait_for
from tests.ui.helpers import make_demo_cluster_app


def _through(table, columns: tuple[str, ...], name: str) -> tuple[int, int]:
    """The columns the table draws through `name`'s column, and the columns it has to draw in."""
    widths = [column.get_render_width(table) for column in table.ordered_columns]
    return sum(widths[: columns.index(name) + 1]), table.scrollable_content_region.width


async def test_the_tokens_columns_fit_in_100_columns() -> None:
    app, client = make_demo_cluster_app()
    async with app.run_test(size=(100, 40)) as pilot:
        await wait_for(pilot, lambda: app.cluster.view is not None, rounds=3000)
        await pilot.pause()
        nodes = app.cluster_screen.query_one(ClusterTable)
        drawn, room = _through(nodes, COLUMNS, "tokens per rank now / clean")
        assert drawn <= room, (drawn, room)
        # the demo's widest tokens cell is whole: h20-b, the second node of SGLang DeepSeek-V3 TP16 (scenario
        # dsv3-tp16-sglang-node1), whose exporter states a clean and a predicted capacity (a co-tenant on GPU 3;
        # kvtop cluster --demo-cluster --json; both follow the calibrated fits, about 547k and 472k): the cell
        # says both and the shortfall they make, (predicted − clean) ÷ clean to one decimal
        tokens = COLUMNS.index("tokens per rank now / clean")
        cell = nodes.get_row("h20-b")[tokens].plain
        found = re.fullmatch(r"([\d,]+) predicted / ([\d,]+) \((−\d+\.\d)%\)", cell)
        assert found, cell
        predicted, clean = (int(found.group(i).replace(",", "")) for i in (1, 2))
        assert 400_000 < predicted < clean < 600_000
        assert found.group(3) == f"{(predicted - clean) / clean * 100:.1f}".replace("-", "−")
        assert len(cell) + 2 <= nodes.ordered_columns[tokens].get_render_width(nodes)
        engines = app.cluster_screen.query_one(EngineTable)
        drawn, room = _through(engines, ENGINE_COLUMNS, "tokens per rank")
        assert drawn <= room, (drawn, room)
    client.close()
