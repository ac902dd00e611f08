"""The planner after loading another model: its hints and the engine's own figure follow the model planned
(session 44, task I3).

`kvtop --demo` (SGLang 0.5.9, Llama-3-70B TP8 on H100s), `p`, then a Ministral-3 params.json folder typed into the
model field and Enter: the result read "context length 8,192 → 262,144" while the blank field still said
"auto: 8192" (and the share "auto: 0.818", the Llama's), and "engine reports 1,229,576" stood under the table as
if the live engine had reported it for the Ministral. The hints are now the engine's picks for the launch planned
(the after column); the engine's figure stays, said to be the live engine's for its own model.
"""

from __future__ import annotations

import re

from textual.widgets import Input

from kvtop.commands.node_source import DemoSource
from tests.ui.conftest import wait_for
from tests.ui.fakes import FakeSource
from tests.ui.helpers import open_planner, paste, retype, shown

MINISTRAL = "tests/data/configs/recon/recon--mistralai--Ministral-3-3B-Instruct-2512"  # a params.json folder
GEMMA_3N = "tests/data/configs/heldout/wave6c/google--gemma-3n-E2B.json"
NOT_PLANNED = "the live engine's, for its own model: not the one planned"


def hint(screen, key: str) -> str:
    return screen.query_one(f"#plan-{key}", Input).placeholder


async def load(pilot, screen, ref: str, name: str) -> None:
    await paste(pilot, "#plan-model", ref)  # one edit: typed key by key, a 76-character path was 76 re-solves
    await pilot.press("enter")
    await wait_for(pilot, lambda: screen.outcome.after is not None and screen.outcome.after.model.name == name)


async def test_a_loaded_ministral_3_gets_its_own_hints(planner_on):
    async with planner_on(size=(200, 50)) as (_, pilot, screen):
        # the live Llama-3-70B: config.json max_position_embeddings 8192; SGLang 0.5.9's automatic share on the
        # H100 (81,559 MiB, 14,848 MiB reserved at TP 8): round((81559 − 14848) ÷ 81559, 3) = 0.818
        assert hint(screen, "context_length") == "auto: 8192"
        assert hint(screen, "memory_fraction") == "auto: 0.818"
        assert "engine reports" in shown(screen, "#plan-result")
        assert NOT_PLANNED not in shown(screen, "#plan-result")

        await load(pilot, screen, MINISTRAL, "recon--mistralai--Ministral-3-3B-Instruct-2512")
        # params.json max_position_embeddings 262144; a VLM (its vision_encoder) takes SGLang's
        # adjust_mem_fraction_for_vlm (docs/engines/sglang.md): 0.818 × 0.95 × clamp(1 − 0.1 × (24 × 1024² ÷
        # (24 × 1024²) − 1), 0.8, 1.05) = 0.818 × 0.95 × 1 = 0.7771, its encoder being 24 layers of width 1024
        assert hint(screen, "context_length") == "auto: 262144"
        assert hint(screen, "memory_fraction") == "auto: 0.777"
        result = shown(screen, "#plan-result")
        assert re.search(r"context length +8,192 → +262,144", result)
        # the live engine reported its tokens for the Llama: said so, beside the figure
        line = next(each for each in result.splitlines() if each.startswith("engine reports"))
        assert line.endswith(NOT_PLANNED)

        await pilot.press("ctrl+r")  # back to the live model: its own hints, its own figure unqualified
        await wait_for(pilot, lambda: screen.outcome.after.model.name == "meta-llama--Meta-Llama-3-70B")
        assert hint(screen, "context_length") == "auto: 8192"
        assert hint(screen, "memory_fraction") == "auto: 0.818"
        assert NOT_PLANNED not in shown(screen, "#plan-result")


async def test_a_loaded_gemma_3n_gets_its_own_hints(planner_on):
    async with planner_on(size=(200, 50)) as (_, pilot, screen):
        await load(pilot, screen, GEMMA_3N, "google--gemma-3n-E2B")
        # config.json text_config max_position_embeddings 32768; vision_config hidden_size 2048, no layer count
        # (SGLang's default 24): 0.818 × 0.95 × clamp(1 − 0.1 × (24 × 2048² ÷ (24 × 1024²) − 1), 0.8, 1.05)
        # = 0.818 × 0.95 × clamp(0.7) = 0.818 × 0.95 × 0.8 = 0.62168
        assert hint(screen, "context_length") == "auto: 32768"
        assert hint(screen, "memory_fraction") == "auto: 0.622"
        assert shown(screen, "#plan-result").count(NOT_PLANNED) == 1


async def test_an_edit_that_does_not_solve_keeps_the_hints_of_the_last_that_did(planner_on):
    """The trial: any invalid field turned 'auto: 8192' into 'engine default' while typing. The hint is the last
    solved launch's: TP 4's own (Llama-3-70B's 8192 positions; SGLang's TP 4 share 0.824, test_planner.py's TP4)."""
    async with planner_on(size=(200, 50)) as (_, pilot, screen):
        await retype(pilot, "#plan-tp", "4")
        assert hint(screen, "memory_fraction") == "auto: 0.824"
        await retype(pilot, "#plan-tp", "x")
        assert screen.outcome.after is None
        assert hint(screen, "context_length") == "auto: 8192" and hint(screen, "memory_fraction") == "auto: 0.824"
        await retype(pilot, "#plan-tp", "8")
        assert hint(screen, "memory_fraction") == "auto: 0.818"


async def test_an_engine_that_takes_no_share_says_so(make_app):
    # llama.cpp sizes its KV cache by -c, not by a share of memory (EngineRules.memory_fraction_field is None):
    # its ledger's fraction 1.0 is a placeholder, not a pick to show as "auto: 1.000"
    node = DemoSource.open("llamacpp-llama31-8b").collect_at(0)
    app = make_app(FakeSource(node, label="demo:llamacpp-llama31-8b"))
    async with app.run_test(size=(200, 50)) as pilot:
        screen = await open_planner(pilot)
        assert hint(screen, "memory_fraction") == "no share"
