"""LMDeploy's KV dtype reads its meaning in the planner (the trial read 'KV dtype 8' on the LMDeploy demo).

LMDeploy takes `--quant-policy 0/4/8/16/17` (lmdeploy/messages.py QuantPolicy: NONE 0, INT4 4, INT8 8, FP8 16,
FP8_E5M2 17); the planner keeps the number as the value and shows what it means beside it, in the words of the
release the edit names: before v0.4.0 (PR #1377, 'Online 8/4-bit KV-cache quantization') 4 was TurboMind's offline
int8 (kCacheKVInt8) and 8, 16, 17 did not exist.
"""

from __future__ import annotations

from textual.widgets import Select

from kvtop.commands.node_source import DemoSource
from kvtop.sources.scenario import load_scenario
from kvtop.ui.planning import kv_dtype_options
from kvtop.ui.screens.planner import PlannerScreen
from tests.ui.conftest import wait_for, wait_for_snapshot
from tests.ui.fakes import FakeSource
from tests.ui.helpers import retype


def test_lmdeploy_s_policies_read_their_meaning_and_keep_the_engine_s_value() -> None:
    options = dict((value, shown) for shown, value in kv_dtype_options("lmdeploy"))
    assert options["8"] == "8 · int8" and options["4"] == "4 · int4" and options["16"] == "16 · fp8_e4m3"
    assert options["17"] == "17 · fp8_e5m2" and options["0"] == "0 · none" and options["int8"] == "int8"
    assert all(len(shown) <= 13 for shown in options.values())  # fits the planner's Select (form 33 − label 16)
    assert dict((v, s) for s, v in kv_dtype_options("vllm"))["fp8_e4m3"] == "fp8_e4m3"  # names need no words


def test_before_v0_4_0_policy_4_reads_offline_int8_and_the_later_numbers_say_so() -> None:
    options = dict((value, shown) for shown, value in kv_dtype_options("lmdeploy", "0.3.0"))
    assert options["4"] == "4 · int8" and options["0"] == "0 · none"
    assert options["8"] == "8 · not yet" and options["16"] == "16 · not yet"
    assert dict((v, s) for s, v in kv_dtype_options("lmdeploy", "0.4.0"))["4"] == "4 · int4"


async def test_the_lmdeploy_demo_planner_shows_int8_beside_policy_8(make_app) -> None:
    node = DemoSource(load_scenario("llama70b-tp4-lmdeploy")).collect_at(0)
    app = make_app(FakeSource(node, label="demo:llama70b-tp4-lmdeploy"))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for_snapshot(pilot)
        await pilot.press("p")
        await wait_for(pilot, lambda: isinstance(app.screen, PlannerScreen))
        select = app.screen.query_one("#plan-kv_cache_dtype", Select)
        assert select.value == "8"  # the engine's own spelling, what the launch line carries
        assert "8 · int8" in str(select.query_one("SelectCurrent #label").render())
        # an edit to a release before v0.4.0 rewords the list; the value chosen stays the launch's
        await retype(pilot, "#plan-engine_version", "0.3.0")
        await wait_for(pilot, lambda: "8 · not yet" in str(select.query_one("SelectCurrent #label").render()))
        assert select.value == "8"
        await retype(pilot, "#plan-engine_version", "")
        await wait_for(pilot, lambda: "8 · int8" in str(select.query_one("SelectCurrent #label").render()))
