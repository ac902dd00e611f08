"""A `vision_audio` tower with one part left unbuilt: the engine builds the vision tower or the audio encoder alone.

vLLM from v0.21.0 builds Gemma-4's vision tower only while `image` or `video` may be sent and its audio tower only
while `audio` may (engines/vllm/tower_limits.py, `unbuilt_part`); the weights row then holds the other part alone.
"""

from __future__ import annotations

from kvtop.domain.architectures.towers_fields import ROW_WORDS
from kvtop.domain.tower_spec import TowerPart, TowerSpec


def without_part(tower: TowerSpec, part: TowerPart) -> TowerSpec:
    """`tower` less its unbuilt `part`: the vision tower without the audio encoder, or the audio encoder alone
    (whole but for its `audio_replicated_params`, as the engine's `TowerSplit.replicated_linears` builds them)."""
    if part == "audio":
        return tower.model_copy(update={
            "params": tower.params - tower.audio_params,
            "replicated_params": tower.replicated_params - tower.audio_replicated_params,
            "audio_params": 0, "audio_replicated_params": 0, "kind": "vision", "label": ROW_WORDS["vision"]})  # fmt: skip
    return TowerSpec(params=tower.audio_params, tp_split_params=0, config_class=tower.config_class, source=tower.source,
                     replicated_params=tower.audio_replicated_params, audio_params=tower.audio_params,
                     audio_replicated_params=tower.audio_replicated_params, kind="audio", label=ROW_WORDS["audio"])  # fmt: skip
