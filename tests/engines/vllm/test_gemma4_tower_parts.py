"""vLLM builds Gemma-4's two towers by their own limits (kvtop/domain/engines/vllm/tower_limits.py `TOWER_PARTS`).

Expected values from the engine's code, not from kvtop: v0.21.0 gemma4_mm.py:958 wraps vision_tower and embed_vision in
`_mark_tower_model(vllm_config, {'image', 'video'})` and :965-978 audio_tower and embed_audio in
`_mark_tower_model(vllm_config, 'audio')` (v0.34.0 :1119, :1136-1140 alike), each a `StageMissingLayer` where
`get_limit_per_prompt` answers 0 for all its modalities. E2B's audio encoder and embedder: 307,184,384 parameters
(docs/engines/architectures.md; the QAT checkpoint's 0.614 GB of BF16 audio tensors), 614,368,768 B in BF16, whole on
every rank (ReplicatedLinear). The config: blazejewicz/gemma-4-e2b-japanese-teacher's (E2B's geometry).
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.launch import parse_flags
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.served_model import served_model
from kvtop.domain.tower_spec import TOWER_KINDS
from kvtop.domain.weights import weights_book
from tests.data_paths import DATA

CONFIG = DATA / "calibration" / "configs" / "blazejewicz--gemma-4-e2b-japanese-teacher.json"
AUDIO_PARAMS = 307_184_384
AUDIO_BYTES = 2 * AUDIO_PARAMS  # BF16
LAYERS = 35


def _tower(limits: str | None, release: str = "0.30.0", tp: int = 1) -> tuple[str, int] | None:
    model: ModelSpec = model_from_config(json.loads(CONFIG.read_text()), source="gemma-4-E2B")
    flags = ["--limit-mm-per-prompt", limits] if limits else []
    served = served_model(model, parse_flags("vllm", [*flags, "--engine-version", release, "--tp", str(tp)]))
    book = weights_book(served, ParallelLayout(tp=tp), range(LAYERS), first_stage=True, last_stage=True)
    rows = [(row.component, int(row.bytes)) for row in book.rows if row.component in TOWER_KINDS]
    return rows[0] if rows else None


def test_audio_at_0_drops_the_audio_encoder_alone() -> None:
    whole = _tower(None)
    assert whole is not None and whole[0] == "vision_audio"
    assert _tower('{"audio": 0}') == ("vision", whole[1] - AUDIO_BYTES)


@pytest.mark.parametrize("tp", [1, 2])
def test_images_and_videos_at_0_keep_the_audio_encoder_alone(tp: int) -> None:
    assert _tower('{"image": 0, "video": 0}', tp=tp) == ("audio", AUDIO_BYTES)  # whole on every rank


@pytest.mark.parametrize("limits", ['{"image": 0}', '{"video": 0, "audio": 1}'])
def test_a_vision_modality_left_on_keeps_both(limits: str) -> None:
    assert _tower(limits) == _tower(None)


def test_every_modality_at_0_builds_no_tower() -> None:
    assert _tower('{"image": 0, "video": 0, "audio": 0}') is None


def test_releases_before_the_read_one_count_both() -> None:
    """Gemma-4's marks are read from v0.21.0; an earlier release keeps the whole row (not read, not guessed)."""
    assert _tower('{"audio": 0}', release="0.19.0") == _tower(None, release="0.19.0")


@pytest.mark.parametrize(("limits", "said"), [
    ('{"audio":0}', "the audio encoder is left unbuilt (every modality it is built for at 0 in the launch's "
                    "--limit-mm-per-prompt): the weights hold the vision tower alone, 168,544,256 parameters"),
    ('{"image":0,"video":0}', "the vision tower is left unbuilt (every modality it is built for at 0 in the launch's "
                              f"--limit-mm-per-prompt): the weights hold the audio encoder alone, {AUDIO_PARAMS:,} parameters"),
])  # fmt: skip
def test_a_part_left_unbuilt_is_one_note_the_plan_and_its_json_both_read(
    limits: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Session 67 left the part's drop said in the weights row alone, not in `plan --json`'s notes: one `Ledger.notes`
    line now, the text plan's 'note:' and the JSON's `notes` alike (the vision tower's 168,544,256 = the E2B tower's
    475,728,640 less the audio encoder's 307,184,384; the whole drop and no drop say nothing)."""
    from kvtop.cli import main

    argv = ["plan", "--model", str(CONFIG), "--engine", "vllm", "--engine-version", "0.33.0", "--gpu", "L4"]
    assert main([*argv, "--json", "--", "--limit-mm-per-prompt", limits]) == 0
    assert said in json.loads(capsys.readouterr().out)["notes"]
    assert main([*argv, "--", "--limit-mm-per-prompt", limits]) == 0
    assert f"note: {said}" in capsys.readouterr().out
    for other in ('{"image":0,"video":0,"audio":0}', '{"image":1}'):
        assert main([*argv, "--json", "--", "--limit-mm-per-prompt", other]) == 0
        assert not any("left unbuilt" in note for note in json.loads(capsys.readouterr().out)["notes"])


@pytest.mark.parametrize(("limits", "towers"), [
    ('{"audio":0}', "vision tower"), ('{"image":0,"video":0}', "audio tower"), ('{"image":1}', "vision and audio towers"),
])  # fmt: skip
def test_the_encoder_term_names_only_the_towers_built(
    limits: str, towers: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """vLLM profiles a modality only while its limit is above 0 (`get_limit_per_prompt`), and builds the part for it
    alone (module docstring): the encoder term names the towers built, not both the config names (it named both before session 68)."""
    from kvtop.cli import main

    argv = ["plan", "--model", str(CONFIG), "--engine", "vllm", "--engine-version", "0.30.0", "--gpu", "H100"]
    assert main([*argv, "--json", "--", "--limit-mm-per-prompt", limits]) == 0
    labels = {term["label"] for term in json.loads(capsys.readouterr().out)["deployment"]["terms"]}
    assert f"encoder cache and {towers} profile peak" in labels
