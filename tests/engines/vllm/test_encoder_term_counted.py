"""vLLM's encoder term says what kvtop counts of a multimodal profile run and what it does not.

For Qwen3-VL, Mistral-Small-3.x and Gemma-3, encoder_profile.py counts the encoder cache vLLM's `profile_run` keeps
through the text run (v0.13.0 v1/worker/gpu_model_runner.py:4424-4487) inside the activation peak; the term then
names what is still not modelled, the encoder's own forward. Other towers (Qwen2-VL) keep "not modelled" for both,
and so does a counted family launched with a dummy size in `--limit-mm-per-prompt` (not read; its counts are).
"""

from __future__ import annotations

import pytest

from kvtop.cli import main
from tests.data_paths import CONFIGS, DATA

QWEN3_VL_30B = CONFIGS / "heldout" / "Qwen--Qwen3-VL-30B-A3B-Instruct.json"
MISTRAL_SMALL = CONFIGS.parent / "calibration" / "configs" / "mistralai--Mistral-Small-3.1-24B-Instruct-2503.json"
GEMMA3_27B = CONFIGS / "google--gemma-3-27b-it.json"
QWEN2_VL = DATA / "engine_diff" / "registry" / "configs" / "Qwen2VLForConditionalGeneration.json"
COUNTED = "vision tower forward in the profile run"
NOT_COUNTED = "encoder cache and vision tower profile peak"


def _beside(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["plan", "--engine", "vllm", "--gpu", "H100", *args]) == 0
    out = capsys.readouterr().out
    return out.split("Beside the model", 1)[1].split("Before the start", 1)[0]


@pytest.mark.parametrize(
    ("config", "family"),
    [(QWEN3_VL_30B, "Qwen3-VL"), (MISTRAL_SMALL, "Mistral-Small-3.x"), (GEMMA3_27B, "Gemma-3")],
)  # fmt: skip
def test_a_counted_family_s_term_says_the_cache_is_in_the_activation_peak(
    capsys: pytest.CaptureFixture[str], config: object, family: str
) -> None:
    beside = _beside(capsys, "--model", str(config), "--engine-version", "0.13.0")
    assert f"{COUNTED}   " in beside and "not modelled" in beside
    assert f"({family}'s dummy batch: its outputs and pixels) is counted inside the activation peak" in beside
    assert "the encoder's own forward before it is not" in beside
    assert NOT_COUNTED not in beside


def test_another_tower_keeps_not_modelled(capsys: pytest.CaptureFixture[str]) -> None:
    beside = _beside(capsys, "--model", str(QWEN2_VL))
    assert f"{NOT_COUNTED}   " in beside and "not modelled" in beside
    assert "only for Qwen3-VL, Mistral-Small-3.x, Gemma-3" in beside
    assert COUNTED not in beside


def test_a_flag_that_changes_the_dummy_keeps_not_modelled(capsys: pytest.CaptureFixture[str]) -> None:
    """A dummy size in `--limit-mm-per-prompt` changes the dummy batch; encoder_profile.py does not read it, nor does
    the term; a count alone it reads (mm_limits.py), so the cache stays counted."""
    launch = "vllm serve g --engine-version 0.13.0 --limit-mm-per-prompt"
    beside = _beside(capsys, "--model", str(GEMMA3_27B), "--cmd", launch + ' \'{"image":{"count":1,"width":448}}\'')
    assert NOT_COUNTED in beside and COUNTED not in beside
    beside = _beside(capsys, "--model", str(GEMMA3_27B), "--cmd", launch + ' \'{"image":1}\'')
    assert COUNTED in beside and NOT_COUNTED not in beside


@pytest.mark.parametrize(
    ("config", "release"),
    [(QWEN3_VL_30B, "0.10.2"),  # no models/qwen3_vl.py before v0.11.0 (encoder_profile.QWEN3_VL_ERAS)
     (GEMMA3_27B, "0.10.1")],  # profile_run's encoder pass not read before v0.10.2 (encoder_profile.KEPT_ERAS)
)  # fmt: skip
def test_a_release_not_read_keeps_not_modelled(capsys: pytest.CaptureFixture[str], config: object, release: str) -> None:
    beside = _beside(capsys, "--model", str(config), "--engine-version", release)
    assert NOT_COUNTED in beside and COUNTED not in beside


def test_a_limit_at_a_release_not_read_is_named_not_modelled(capsys: pytest.CaptureFixture[str]) -> None:
    """vLLM 0.19.0's --limit-mm-per-prompt was not read (mm_limits.LIMIT_ERAS): the plan is the text model's fit and
    the encoder term says the flag is not modelled, where kvtop used to stop with an error."""
    beside = _beside(capsys, "--model", str(QWEN3_VL_30B), "--engine-version", "0.19.0",
                     "--limit-mm-per-prompt", '{"image": 1}')  # fmt: skip
    assert f"{NOT_COUNTED}   " in beside and "--limit-mm-per-prompt is not modelled" in " ".join(beside.split())
