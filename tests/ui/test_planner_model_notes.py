"""The planner says how the planned model's config was read, under the model field (#26, session 46 task D4): the
notes `kvtop plan` prints for the model, from `ModelSpec.reading_notes`; what it leaves out (`ModelSpec.not_modelled`)
is in the plan's table, the one list `Ledger.not_modelled` (session 55, task g); a class kvtop names not modelled is
refused there with its reason.

Before: loading a class read through an entry that does not list it (HyperCLOVAX's over Qwen3-VL's text entry) or a
model_type read generically (a name no entry lists; teleflm until session 47 listed it under llama) planned in the TUI with no word of either, where `plan` printed both notes.
"""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import Static

from kvtop.domain.architectures.coverage import SPEECH_NOT_MODELLED
from tests.conftest import CONFIGS
from tests.domain.test_unchecked_class import unchecked_config
from tests.ui.conftest import wait_for
from tests.ui.helpers import paste, shown

# the plan's note for the renamed config (tests/test_cli_plan_unchecked_class.py NOTE, the same words)
KEYE_NOTE = (
    "note: class HyperCLOVAXForCausalLM has no architecture entry of its own: read as qwen3_vl_text "
    "(Qwen3VLTextConfig) by its text_config.model_type 'qwen3_vl_text'; not checked against the engines' model code"
)
# the plan's note on the class at the demo's SGLang 0.5.9 (session 46, F5: the planner planned another model with no
# word of it, where `plan --engine-version 0.5.9` said it): kvtop read SGLang's EntryClass lists from the 0.5.6.post2
# and 0.5.23 wheels only (tests/data/engine_diff/sglang-*.flags.json), and 0.5.9 is neither
KEYE_AT_059 = (
    "note: whether SGLang 0.5.9 registers HyperCLOVAXForCausalLM is not checked: kvtop read its registry "
    "at 0.5.6.post2, 0.5.23 only"
)
MIMO_ASR = CONFIGS / "recon" / "recon--XiaomiMiMo--MiMo-V2.5-ASR.json"


def notes(screen) -> str:
    return " ".join(shown(screen, "#plan-model-notes").split())  # unwrapped: a long note wraps at the screen's width


async def load(pilot, screen, ref: str) -> None:
    """The config's path pasted into the model field, then Enter (typed key by key, each 75-character path was 75
    re-solves of the live plan: most of this test's 153 s in session 62's slowest list)."""
    await paste(pilot, "#plan-model", ref)
    await pilot.press("enter")
    await wait_for(pilot, lambda: screen._model_ref == ref or "model: " in shown(screen, "#plan-error"))
    await pilot.pause()


async def test_the_planner_shows_how_a_model_was_read(planner_on, tmp_path: Path):
    keye = tmp_path / "keye.json"
    keye.write_text(json.dumps(unchecked_config()))
    llama = json.loads((CONFIGS / "meta-llama--Llama-3.1-8B.json").read_text())
    teleflm = tmp_path / "quux.json"
    teleflm.write_text(json.dumps(llama | {"architectures": ["QuuxForCausalLM"], "model_type": "quux"}))
    async with planner_on(size=(200, 50)) as (_, pilot, screen):
        box = screen.query_one("#plan-model-notes", Static)
        assert not box.display and notes(screen) == ""  # the live Llama-3-70B: an entry's class, nothing left out

        await load(pilot, screen, str(keye))
        assert box.display and notes(screen) == f"{KEYE_NOTE} {KEYE_AT_059}"

        await load(pilot, screen, str(teleflm))
        assert notes(screen) == (
            "note: whether SGLang 0.5.9 registers QuuxForCausalLM is not checked: kvtop read its registry at "
            "0.5.6.post2, 0.5.23 only"
        )
        table = " ".join(shown(screen, "#plan-result").split())
        assert "not modelled: generic reading: no architecture entry for 'quux'; assumed " in table
        assert "; not checked against the engines' model code" in table

        await load(pilot, screen, str(MIMO_ASR))  # refused with its reason; the plan stays the last model's
        error = " ".join(shown(screen, "#plan-error").split())
        assert "MiMoV2ASRForCausalLM (model_type 'qwen2') is not modelled by kvtop: " in error
        assert " ".join(SPEECH_NOT_MODELLED["MiMoV2ASRForCausalLM"].split()) in error
