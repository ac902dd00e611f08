"""`P` in the planner probes the edit's KV pool, and `c` copies its flags, from the field that has the focus when it
opens (TP), not only from a dropdown (session 57's operator run: the planner opens on TP, and `P` there was typed into
it, 'TP: needs a whole number, got 'P''; TP's text is selected on focus, so a typed `c` would replace the TP). A word
field (the model) still takes them as letters; ctrl+y copies the flags from there too (session 69).

Demo node: SGLang 0.5.9, Llama-3-70B (8 KV heads of 128 dims, 80 layers, bf16) at TP8 on 8× H100."""

from __future__ import annotations

from textual.widgets import Input

from kvtop.commands.node_source import DemoSource
from kvtop.sources.scenario import DEFAULT_SCENARIO
from kvtop.ui.screens.planner import COPY_ANYWHERE, PlannerScreen
from kvtop.ui.screens.probe import ProbeScreen
from kvtop.ui.screens.probe_confirm import ProbePlan
from tests.ui.conftest import footer_keys, wait_for
from tests.ui.helpers import open_planner

#: Llama-3-70B at TP4: 8 KV heads over 4 ranks leave 2 heads of 128 dims, K and V, bf16, on 80 layers per rank.
TP4_BF16_BYTES_PER_TOKEN = 2 * 128 * 2 * 2 * 80  # 81,920 B


def demo_app(make_app):
    return make_app(DemoSource.open(DEFAULT_SCENARIO), probe_runner=lambda request, cancel: None,
                    probe_simulated=True)  # fmt: skip


async def test_p_and_c_from_the_tp_field_probe_and_copy_the_edit_and_are_not_typed_into_it(make_app):
    app = demo_app(make_app)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_planner(pilot)
        tp = screen.query_one("#plan-tp", Input)
        assert screen.focused is tp  # the planner opens on TP
        await pilot.press("4")  # TP's text is selected on focus: '4' replaces the 8
        await wait_for(pilot, lambda: screen.outcome.after is not None and screen.outcome.after.layout.tp == 4)
        assert "P" in await footer_keys(pilot)  # the field leaves the key to its binding, so the footer lists it
        await pilot.press("P")
        await wait_for(pilot, lambda: isinstance(app.screen, ProbeScreen))
        plan = app.screen.plan
        assert isinstance(plan, ProbePlan) and plan.planned
        assert plan.request.bytes_per_token_predicted == TP4_BF16_BYTES_PER_TOKEN
        assert tp.value == "4"  # was 'P' in place of the edit, and the plan invalid
        await pilot.press("escape")  # back to the planner, TP still focused
        await wait_for(pilot, lambda: isinstance(app.screen, PlannerScreen))
        assert screen.focused is tp
        await pilot.press("c")  # copies the flags, as from a dropdown: not typed into TP ('4c')
        await wait_for(pilot, lambda: any("copied: --tp-size 4" in str(n.message) for n in app._notifications))
        assert tp.value == "4"


async def test_p_and_c_in_the_model_field_are_letters(make_app):
    app = demo_app(make_app)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_planner(pilot)
        model = screen.query_one("#plan-model", Input)
        await pilot.press("shift+tab")  # TP → the model field
        await wait_for(pilot, lambda: screen.focused is model)
        await pilot.press("end", "P", "c")
        await pilot.pause()
        assert model.value.endswith("Pc")
        assert isinstance(app.screen, PlannerScreen)
        assert "P" not in await footer_keys(pilot) and "c" not in await footer_keys(pilot)
        assert not any("copied" in str(n.message) for n in app._notifications)
        await pilot.press(COPY_ANYWHERE)  # a control key no field types: copies from the word field too
        await wait_for(pilot, lambda: any("copied: --tp-size 8" in str(n.message) for n in app._notifications))
        assert model.value.endswith("Pc")
