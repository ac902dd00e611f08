"""A `vision_audio` tower with one part left unbuilt: the engine builds the vision tower or the audio encoder alone.

vLLM from v0.21.0 builds Gemma-4's vision tower only while `image` or `video` may be sent and its audio tower only
while `audio` may (engines/vllm/tower_limits.py, `unbuilt_part`); the weights row then holds the other part alone, and
the plan says so in one note (`unbuilt_note`, a `Ledger.notes` line: the plan's notes, `plan --json`'s and the
planner's read it alike).
"""

from __future__ import annotations

from kvtop.domain.architectures.towers_fields import ROW_WORDS
from kvtop.domain.tower_spec import TowerPart, TowerSpec
from kvtop.domain.wording import whole

_PART_WORDS: dict[TowerPart, str] = {"vision": "vision tower", "audio": "audio encoder"}


def without_part(tower: TowerSpec, part: TowerPart) -> TowerSpec:
    """`tower` less its unbuilt `part`: the vision tower without the audio encoder, or the audio encoder alone
    (whole but for its `audio_replicated_params`, as the engine's `TowerSplit.replicated_linears` builds them)."""
    if part == "audio":
        return tower.model_copy(update={
            "params": tower.params - tower.audio_params,
            "replicated_params": tower.replicated_params - tower.audio_replicated_params,
            "audio_params": 0, "audio_replicated_params": 0, "kind": "vision", "label": ROW_WORDS["vision"],
            "unbuilt_part": part})  # fmt: skip
    return TowerSpec(params=tower.audio_params, tp_split_params=0, config_class=tower.config_class, source=tower.source,
                     replicated_params=tower.audio_replicated_params, audio_params=tower.audio_params,
                     audio_replicated_params=tower.audio_replicated_params, kind="audio", label=ROW_WORDS["audio"],
                     unbuilt_part=part)  # fmt: skip


def unbuilt_note(tower: TowerSpec | None) -> str | None:
    """The plan's one note on a part left unbuilt: 'the audio encoder is left unbuilt (every modality it is built for
    at 0 in the launch's limits): the weights hold the vision tower alone'; None where no part was left out."""
    part = tower.unbuilt_part if tower is not None else None
    if tower is None or part is None:
        return None
    kept = _PART_WORDS["audio" if part == "vision" else "vision"]
    return (f"the {_PART_WORDS[part]} is left unbuilt (every modality it is built for at 0 in the launch's "
            f"--limit-mm-per-prompt): the weights hold the {kept} alone, {whole(tower.params)} parameters")
