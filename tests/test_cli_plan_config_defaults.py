"""`kvtop plan`'s note on the fields a config.json leaves out names the class whose defaults filled them in (the
architecture entry's config class), never "transformers'" for a class transformers does not hold (PLaMo 3's
Plamo3Config is the checkpoint's remote code)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtop.cli import main
from tests.data_paths import DATA

PLAMO3 = DATA / "engine_diff" / "registry" / "configs" / "Plamo3ForCausalLM.json"  # composed: SOURCES.md beside it


def test_a_left_out_field_is_named_with_the_class_whose_default_it_takes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Plamo3Config.__init__'s window_size is 2,048 (pfnet configuration_plamo3.py as SGLang ships its copy,
    configs/plamo3.py @ 33918d47: SOURCES.md's Plamo3ForCausalLM entry)."""
    config = json.loads(PLAMO3.read_text())
    del config["window_size"]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    assert main(["plan", "--no-calibration-store", "--model", str(path), "--engine", "vllm", "--gpu", "H100"]) == 0
    text = capsys.readouterr().out
    assert "note: the config leaves out window_size=2048: Plamo3Config (remote code)'s class default\n" in text
    assert "transformers' class defaults" not in text
