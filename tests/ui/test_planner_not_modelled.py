"""The planner's table reads the one list of what kvtop leaves out (`Ledger.not_modelled`), the list `plan` prints as
'note: not modelled: …' (session 55, task g).

Before: the table listed the engine's part only (`EngineResult.not_modelled`) and the model field's notes the
checkpoint's own parts, so a cast kvtop does not model (vLLM's `--quantization bitsandbytes`, added to the served
model's list by `served_model`) was in `plan`'s notes and nowhere in the planner. The expected lines are `plan`'s own
output for the same launch (kvtop/commands/render_ledger.py), not the widget's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtop.cli import main
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.sources.hub import load_config_file
from kvtop.ui.planning import PlanOutcome
from kvtop.ui.widgets.model_notes import model_notes
from kvtop.ui.widgets.plan_result import outcome_table
from tests.data_paths import CONFIGS

LLAMA_8B = CONFIGS / "meta-llama--Llama-3.1-8B.json"
H100 = 81559 << 20  # MiB → bytes: the H100 80GB's CUDA total
PREFIX = "note: not modelled: "


@pytest.fixture(autouse=True)
def _notes_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "10000")  # each note read whole: its wrapping is tests/commands/test_prose_wrap.py's


def _plan_notes(capsys: pytest.CaptureFixture[str], config: Path, *flags: str) -> list[str]:
    """`plan`'s 'not modelled' notes for this launch, without their 'note: ' (as the planner words them)."""
    args = [
        "plan",
        "--no-calibration-store",
        "--model",
        str(config),
        "--engine",
        "vllm",
        "--gpu",
        "H100",
        *flags,
    ]
    assert main(args) == 0
    lines = (line.strip() for line in capsys.readouterr().out.splitlines())
    return [line.removeprefix("note: ") for line in lines if line.startswith(PREFIX)]


def _table_notes(config: Path, *flags: str) -> list[str]:
    settings = parse_flags("vllm", list(flags), strict=True)
    ledger = predict(load_config_file(config), settings, gpu_total_bytes=H100, gpu_name="H100")
    table = outcome_table(PlanOutcome(before=ledger, after=ledger, settings=settings), None).plain
    return [line.strip() for line in table.splitlines() if line.strip().startswith("not modelled: ")]


def test_a_cast_kvtop_does_not_model_is_in_the_planners_table(capsys: pytest.CaptureFixture[str]) -> None:
    flags = ("--engine-version", "0.19.0", "--quantization", "bitsandbytes")
    said = _plan_notes(capsys, LLAMA_8B, *flags)
    assert said == [
        "not modelled: --quantization bitsandbytes at load: the books count the checkpoint's bytes"
    ]
    assert _table_notes(LLAMA_8B, *flags) == said


def test_a_generic_reading_moves_from_the_model_field_to_the_table(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A model_type no entry lists is read generically: `plan` says so once; the planner's table says it, and the
    model field says it only where no plan of the model solved (then no table lists it)."""
    quux = tmp_path / "quux.json"
    llama = json.loads(LLAMA_8B.read_text())
    quux.write_text(json.dumps(llama | {"architectures": ["QuuxForCausalLM"], "model_type": "quux"}))
    said = _plan_notes(capsys, quux, "--engine-version", "0.19.0")
    assert len(said) == 1 and said[0].startswith(
        "not modelled: generic reading: no architecture entry for 'quux'"
    )
    assert _table_notes(quux, "--engine-version", "0.19.0") == said
    model = load_config_file(quux)
    assert [n for n in model_notes(model, planned=True) if n.startswith("not modelled")] == []
    assert [n for n in model_notes(model, planned=False) if n.startswith("not modelled")] == said
