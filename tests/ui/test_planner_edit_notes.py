"""The planner says the engine's note on an edit where the edit is made, as `kvtop plan` prints it as 'note:'.

Operator trial (session 58): EP 8 typed on the demo's SGLang 0.5.9 Llama-3-70B TP8 (a model without routed experts)
re-solved to the same 1,222,311 tokens (SGLang makes its MoE-EP group the TP group at ep == tp,
srt/distributed/parallel_state.py initialize_model_parallel: `_MOE_EP = _TP`, so EP holds no memory), but the status
read '✓ valid: edit any field', never saying that the EP typed was planned as EP off; `kvtop plan` printed the note.
"""

from __future__ import annotations

from kvtop.commands.node_source import DemoSource
from tests.ui.conftest import wait_for
from tests.ui.fakes import FakeSource
from tests.ui.helpers import open_planner, retype, shown


async def test_ep_on_a_dense_model_says_it_is_planned_as_ep_off(make_app) -> None:
    node = DemoSource.open("llama70b-tp8-sglang").collect_at(0)
    app = make_app(FakeSource(node, label="demo:llama70b-tp8-sglang"))
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await open_planner(pilot)
        assert (
            " ".join(shown(screen, "#plan-error").split())
            == "✓ valid: edit any field, every keystroke re-solves"
        )
        before = screen.outcome.before.engine.token_capacity
        await retype(pilot, "#plan-ep", "8")
        await wait_for(pilot, lambda: screen.outcome.settings is not None and screen.outcome.settings.ep == 8)
        # EP at ep == tp holds no memory in SGLang: the edit's tokens are the live launch's
        assert screen.outcome.after.engine.token_capacity == before
        said = " ".join(shown(screen, "#plan-error").split())
        assert said.startswith(
            "✓ valid, planned with a note: --ep-size 8 on a model without experts: planned as EP off"
        ), said
        assert "--ep-size 8" in shown(screen, "#plan-flags")


async def test_the_reset_key_says_the_launch_not_live_on_a_demo(make_app) -> None:
    """The footer read '^r Reset to live' on the demo node (whose header says '● simulated'): ctrl+r puts back the
    engine's launch, live or simulated."""
    node = DemoSource.open("llama70b-tp8-sglang").collect_at(0)
    app = make_app(FakeSource(node, label="demo:llama70b-tp8-sglang"))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_planner(pilot)
        said = {
            key: binding.description
            for key, (_, binding, enabled, _) in screen.active_bindings.items()
            if enabled
        }
        assert said["ctrl+r"] == "Reset to launch"
        assert not any("live" in words for words in said.values()), said
