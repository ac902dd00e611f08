"""A plan short of one KV block says its shortfall in a unit that shows it, never '0.00 GiB short'.

An operator trial typed LMDeploy's --cache-max-entry-count 1e-9 on the demo's Llama-3-70B TP4 (TurboMind, int8 KV):
the share of the free memory is a few bytes, so the plan lacks one block (64 tokens) less those bytes. One token of a
rank's KV is 80 layers × (K, V) × 2 heads × (128 B of int8 + 4 B of scale and zero) = 42,240 B (the planner's
'41.25 KiB'), a block 64 × 42,240 = 2,703,360 B = 2.58 MiB; the planner said '0.00 GiB short per rank'.
"""

from __future__ import annotations

from kvtop.commands.node_source import DemoSource
from tests.ui.conftest import wait_for
from tests.ui.fakes import FakeSource
from tests.ui.helpers import open_planner, retype, shown

BLOCK_BYTES = 64 * 80 * 2 * 2 * (128 + 4)  # 2,703,360 B


async def test_a_block_short_reads_in_mib_in_the_status_and_the_table(make_app) -> None:
    node = DemoSource.open("llama70b-tp4-lmdeploy").collect_at(0)
    app = make_app(FakeSource(node, label="demo:llama70b-tp4-lmdeploy"))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_planner(pilot)  # GPU 0: lmdeploy:23000, Llama-3-70B TP4
        assert screen.outcome.before.kv_bytes_per_token * 64 == BLOCK_BYTES
        await retype(pilot, "#plan-memory_fraction", "1e-9")
        await wait_for(pilot, lambda: screen.outcome.after is not None and not screen.outcome.after.engine.fits)
        assert BLOCK_BYTES - 1_000 < screen.outcome.after.engine.shortfall_bytes <= BLOCK_BYTES
        said = " ".join(shown(screen, "#plan-error").split())
        assert said.startswith("✓ valid input, but it does not fit: 2.58 MiB short per rank"), said
        assert "no, 2.58 MiB short" in shown(screen, "#plan-result") and "0.00 GiB" not in said
