"""A host KV tier the host cannot hold is refused in the planner, with both figures (session 51's trial: vLLM's host KV
at 9,999 GiB per rank read 'fits yes ✓ valid' on a 2,048 GiB host).

The fake node is SGLang 0.5.9 serving Llama-3-70B at TP 8 on eight H100s (tests/ui/fakes.py), here on a host of
2,048 GiB (the modern-deployment demo's stated 2 TiB) with 1,500 GiB available. The planner's host field is GiB per
rank, pinned on each of the engine's 8 ranks on the node (SGLang's HostKVCache per TP rank, docs/engines/sglang.md
§19.4), and SGLang keeps 10 GiB of the host free beside it (HICACHE_HOST_RESERVE_BYTES). By hand:
9,999 GiB × 8 = 79,992 GiB > 2,048 − 10 = 2,038 GiB: refused; 200 GiB × 8 = 1,600 GiB ≤ 2,038 but 1,600 + 10 > 1,500
available: at risk; 100 GiB × 8 = 800 GiB + 10 = 810 ≤ 1,500: fits (each line says the check's own figures).
"""

from __future__ import annotations

from textual.widgets import Input

from kvtop.domain.observe import HostMemory
from kvtop.domain.wording import GIB
from tests.ui.helpers import open_planner, retype, shown

HOST = HostMemory(total_bytes=2048 * GIB, available_bytes=1500 * GIB)


def _on_host(snapshot):
    observation = snapshot.observation.model_copy(update={"host_memory": HOST})
    return snapshot.model_copy(update={"observation": observation})


async def test_a_host_tier_larger_than_the_host_is_refused_with_both_figures(make_app, healthy_snapshot):
    app = make_app(_on_host(healthy_snapshot))
    async with app.run_test(size=(160, 50)) as pilot:
        screen = await open_planner(pilot)
        await retype(pilot, "#plan-host_kv_gib", "9999")
        said = shown(screen, "#plan-error")
        assert said.startswith("✗ host KV tier: HiCache: 9,999.00 GiB per rank × 8 ranks on this node = 79,992.00 GiB, "
                               "more than the host's 2,048.00 GiB (psutil's total of this host), less the 10.00 GiB "
                               "the engine keeps free: it cannot be pinned")  # fmt: skip
        assert screen.query_one("#plan-host_kv_gib", Input).has_class("-invalid")
        assert shown(screen, "#plan-flags").startswith("engine flags (not copyable, the host cannot hold its KV tier)")
        result = shown(screen, "#plan-result")
        assert "no: host" in result and "✗ HiCache: 9,999.00 GiB per rank" in result

        await retype(pilot, "#plan-host_kv_gib", "200")
        said = shown(screen, "#plan-error")
        assert said.startswith("✓ valid input, but at risk: HiCache: 200.00 GiB per rank × 8 ranks on this node = "
                               "1,600.00 GiB + the 10.00 GiB the engine keeps free = 1,610.00 GiB, within the host's "
                               "2,048.00 GiB")  # fmt: skip
        assert "more than the 1,500.00 GiB available now" in said

        await retype(pilot, "#plan-host_kv_gib", "100")
        assert shown(screen, "#plan-error").startswith("✓ valid: edit any field")
        assert ("800.00 GiB + the 10.00 GiB the engine keeps free = 810.00 GiB, within the 1,500.00 GiB available now, "
                "of the host's 2,048.00 GiB in all (psutil's total of this host)") in " ".join(shown(screen, "#plan-result").split())


async def test_a_host_tier_on_a_node_whose_host_is_not_read_is_said_not_checked(planner_on):
    async with planner_on(size=(160, 50)) as (_, pilot, screen):  # the fake node reads no host memory
        await retype(pilot, "#plan-host_kv_gib", "9999")
        assert "no host memory was read, so whether the node holds it is not checked" in shown(screen, "#plan-result")
        assert not screen.query_one("#plan-host_kv_gib", Input).has_class("-invalid")
