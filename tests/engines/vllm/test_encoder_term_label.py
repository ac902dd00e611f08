"""vLLM's encoder term names the towers the config has: an audio-only model has no vision tower.

Before, Qwen2-Audio (tests/data/engine_diff/registry/configs/Qwen2AudioForConditionalGeneration.json: an
`audio_config` and a `text_config`, no `vision_config`) was shown "encoder cache and vision tower profile peak".
"""

from __future__ import annotations

import pytest

from kvtop.cli import main
from tests.data_paths import DATA

CONFIGS = DATA / "engine_diff" / "registry" / "configs"


@pytest.mark.parametrize(
    ("name", "label"),
    [("Qwen2AudioForConditionalGeneration", "encoder cache and audio tower profile peak"),  # audio_config only
     ("Qwen2VLForConditionalGeneration", "encoder cache and vision tower profile peak"),  # vision_config only
     ("Qwen2_5OmniForConditionalGeneration", "encoder cache and vision and audio towers profile peak")],
)  # fmt: skip
def test_the_encoder_term_names_the_config_s_towers(capsys: pytest.CaptureFixture[str], name: str, label: str) -> None:
    assert main(["plan", "--model", str(CONFIGS / f"{name}.json"), "--engine", "vllm", "--gpu", "H100"]) == 0
    out = capsys.readouterr().out
    assert label in out
    if "vision" not in label:
        assert "vision" not in out.split("Before the start", 1)[1]  # neither the term nor the activation's basis
