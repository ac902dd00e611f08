"""Language models a config names by checkpoint id instead of describing them: Ultravox's `text_model_id`
(vLLM 0.33.0 transformers_utils/configs/ultravox.py: UltravoxConfig.__setattr__ loads that checkpoint's config
with get_config as the file is read; its published config.json drops `text_config` where the id is set).

kvtop cannot fetch a checkpoint: NAMED_TEXT_MODELS holds the published configs it knows (copies and sources in
tests/data/configs/families/SOURCES.md), and the plan says the language model was read from that copy. Another
id is refused naming `text_model_id`, never planned from a guess.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvtop.domain.errors import UnsupportedModelError

# outer model_type -> the field naming its language model's checkpoint
NAMED_TEXT_FIELD: Mapping[str, str] = {"ultravox": "text_model_id"}
# the published config.json of each checkpoint (the fields kvtop reads; tests/data/configs/families/)
NAMED_TEXT_MODELS: Mapping[str, Mapping[str, Any]] = {
    "meta-llama/Llama-3.2-1B-Instruct": {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "attention_bias": False, "mlp_bias": False,
        "head_dim": 64, "hidden_act": "silu", "hidden_size": 2048, "intermediate_size": 8192,
        "max_position_embeddings": 131072, "num_attention_heads": 32, "num_hidden_layers": 16,
        "num_key_value_heads": 8, "rms_norm_eps": 1e-05, "rope_theta": 500000.0, "tie_word_embeddings": True,
        "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                         "original_max_position_embeddings": 8192, "rope_type": "llama3"},
        "torch_dtype": "bfloat16", "vocab_size": 128256,
    },
}  # fmt: skip


def named_text(config: dict[str, Any], source: str) -> tuple[dict[str, Any], str]:
    """`config` with the named checkpoint's config as its `text_config`, and the plan's words for it ('' where the
    config names none); a checkpoint kvtop holds no copy of is refused."""
    field = NAMED_TEXT_FIELD.get(str(config.get("model_type")))
    checkpoint = config.get(field) if field else None
    if field is None or not isinstance(checkpoint, str):
        return config, ""
    text = NAMED_TEXT_MODELS.get(checkpoint)
    if text is None:
        raise UnsupportedModelError(
            f"the language model is the checkpoint {checkpoint!r}, whose config the engine fetches from the Hub as "
            f"it reads this one; kvtop holds no copy of it (known: {', '.join(sorted(NAMED_TEXT_MODELS))})",
            field=field,
            source=source,
        )
    words = f"language model: {checkpoint}'s published config ({field}; kvtop's copy, named_text.py)"
    return {**config, "text_config": dict(text)}, words
