"""The rank ledger of a demo node never calls the engine's token figure "live".

Operator trial (session 58): the default demo (`kvtop --demo`, SGLang Llama-3-70B TP8) showed '● simulated' in its
header, but GPU 0's ledger read 'tokens  clean 1,222,311 → engine vs prediction +6,741 → 1,229,052 live'.
"""

from __future__ import annotations

from kvtop.commands.node_source import DemoSource
from kvtop.ui.screens.ledger import RankLedgerScreen
from tests.ui.conftest import wait_for, wait_for_snapshot
from tests.ui.fakes import FakeSource
from tests.ui.helpers import shown


async def test_a_demo_ranks_waterfall_ends_simulated_not_live(make_app) -> None:
    node = DemoSource.open("llama70b-tp8-sglang").collect_at(0)
    assert node.simulated
    app = make_app(FakeSource(node, label="demo:llama70b-tp8-sglang"))
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for_snapshot(pilot)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, RankLedgerScreen))
        summary = shown(app.screen, "#ledger-summary")
        reported = summary.split("demo simulates ")[1].split()[0]  # the engine's figure, as the line above says it
        tokens = next(line for line in summary.splitlines() if line.startswith("tokens"))
        assert tokens.startswith("tokens         clean ") and tokens.endswith(f"→ {reported} simulated"), (
            tokens
        )
        assert " live" not in summary
