"""A GPU row's token cell reads the figure the findings and the banner state for the same gap (session 60, task h1).

`kvtop --demo llama70b-tp8-foreign-gpu3`: pid 4242 holds 6.00 GiB on GPU 3 and SGLang 0.5.9 sizes every rank of
Llama-3-70B TP8 by the least free GPU: 6 GiB × mfs 0.818 ÷ 40,960 B per token (bf16 KV, 80 layers × 8 KV heads ×
128 × 2 × 2 B ÷ TP 8) = 128,660.3 → 128,660 tokens fewer per rank, the findings' and the banner's "−128,660". The
demo simulates 1,100,391 tokens against the 1,093,981 kvtop predicts with the co-tenant: engine vs prediction +6,410,
the engine's own figure, no cause's. The row said "−122k tok" (1,100,391 − clean 1,222,641 = −122,250: the cause's
cost with the engine's own difference folded in); it now says the cause's −129k, as the findings do.
"""

from __future__ import annotations

import re

from kvtop.commands.node_source import DemoSource
from tests.ui.conftest import wait_for_snapshot
from tests.ui.fakes import FakeSource
from tests.ui.helpers import screen_lines

COST = round(6 * (1 << 30) * 0.818 / 40_960 - 0.5)  # 128,660: the floor SGLang's pool takes


async def test_the_rows_say_the_tokens_the_findings_say_the_co_tenant_costs(make_app):
    node = DemoSource.open("llama70b-tp8-foreign-gpu3").collect_at(0)
    app = make_app(FakeSource(node, label="demo:llama70b-tp8-foreign-gpu3"))
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for_snapshot(pilot)
        lines = screen_lines(app)
    text = "\n".join(lines)
    assert COST == 128_660
    assert f"−{COST:,} tokens" in text and "engine vs prediction +6,410" in text  # the findings: cause and engine
    cells = [line for line in lines if re.match(r"^\s+79\.6 GiB ", line)]  # each row's second line: total, state
    assert len(cells) == 8
    assert all("−129k" in cell and "−122k" not in cell for cell in cells), cells
