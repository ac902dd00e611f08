"""A model reference the loader cannot resolve is named as the field holds it (session 60, operator pass in tmux):
the status said "✗ model: --model: not a file, folder, preset or hub id (presets: …) in nonsense": the CLI's flag,
which the planner has no field of, and the typed text trailing as if it were part of the reason."""

from __future__ import annotations

from tests.ui.conftest import wait_for
from tests.ui.helpers import retype, shown


async def test_an_unknown_model_is_named_by_what_was_typed(planner_on):
    async with planner_on(size=(100, 30)) as (_, pilot, screen):
        await retype(pilot, "#plan-model", "nonsense")
        await pilot.press("enter")
        await wait_for(pilot, lambda: "✗ model" in shown(screen, "#plan-error"))
        said = " ".join(shown(screen, "#plan-error").split())
        assert said.startswith("✗ model: 'nonsense': not a file, folder, preset or hub id (presets: ")
        assert "--model" not in said and " in nonsense" not in said
        assert said.endswith("(still planning with 'llama-3-70b')")  # the fake node's live model, a preset
