"""Language models a config names by checkpoint id instead of describing them: Ultravox's `text_model_id`
(vLLM 0.33.0 transformers_utils/configs/ultravox.py: UltravoxConfig.__setattr__ loads that checkpoint's config
with get_config as the file is read; its published config.json drops `text_config` where the id is set).

kvtop cannot fetch a checkpoint: the published configs it holds are package data (examples/models/named/, read by
`kvtop.sources.hub.named_text_configs` and handed in as `known`; their sources in examples/models/README.md), and
the plan says the language model was read from that copy. Another id is refused naming `text_model_id`, never
planned from a guess.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvtop.domain.errors import UnsupportedModelError

# outer model_type -> the field naming its language model's checkpoint
NAMED_TEXT_FIELD: Mapping[str, str] = {"ultravox": "text_model_id"}


def named_text(
    config: dict[str, Any], source: str, known: Mapping[str, Mapping[str, Any]]
) -> tuple[dict[str, Any], str]:
    """`config` with the named checkpoint's config (from `known`: Hub id -> its config.json) as its `text_config`,
    and the plan's words for it ('' where the config names none); a checkpoint kvtop holds no copy of is refused."""
    field = NAMED_TEXT_FIELD.get(str(config.get("model_type")))
    checkpoint = config.get(field) if field else None
    if field is None or not isinstance(checkpoint, str):
        return config, ""
    text = known.get(checkpoint)
    if text is None:
        raise UnsupportedModelError(
            f"the language model is the checkpoint {checkpoint!r}, whose config the engine fetches from the Hub as "
            f"it reads this one; kvtop holds no copy of it (known: {', '.join(sorted(known)) or 'none'})",
            field=field,
            source=source,
        )
    words = f"language model: {checkpoint}'s published config ({field}; kvtop's copy, examples/models/named)"
    return {**config, "text_config": dict(text)}, words
