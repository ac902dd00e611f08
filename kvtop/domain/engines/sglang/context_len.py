"""The context length SGLang sizes its request slots with (docs/engines/sglang.md §7.1), where it is not the one
kvtop reads from the config: `ModelConfig._derive_context_length` takes --context-length, else
`get_context_length(hf_text_config)`, the first of max_sequence_length, seq_length, max_seq_len, model_max_length,
max_position_embeddings the config holds, else 2048 (0.5.23 srt/configs/model_config.py, utils/hf_transformers/
common.py CONTEXT_LENGTH_KEYS). Whisper's config holds none of them (its decoder's 448 positions are
max_target_positions): SGLang plans Whisper at 2048, which `resolve_max_num_reqs` (int(tokens ÷ context_len × 512)
clamped to 2048..4096), the req_to_token rows ((n + 1) × (context_len + 4) int32) and every full-context figure read
(the ledger's one context length, `SglangRules.context_length`).
"""

from __future__ import annotations

from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import ModelSpec

# get_context_length's answer where the config holds none of its keys (common.py, 0.5.23)
FALLBACK_CONTEXT = 2048
# the keys get_context_length looks for, in its order (0.5.23 utils/hf_transformers/common.py CONTEXT_LENGTH_KEYS):
# kvtop's schema reads each as max_position_embeddings, so a model whose positions came from another field
# (`ModelSpec.positions_field`: Whisper's max_target_positions; transformers 5.19 WhisperConfig has no
# max_position_embeddings) holds none of them. whisper.py is new in 0.5.23; 0.5.6.post2 builds no Whisper
CONTEXT_LENGTH_KEYS = ("max_sequence_length", "seq_length", "max_seq_len", "model_max_length", "max_position_embeddings")


def holds_no_context_key(model: ModelSpec) -> bool:
    """The config holds none of CONTEXT_LENGTH_KEYS: its positions were read from another field."""
    return model.positions_field not in CONTEXT_LENGTH_KEYS


def _falls_back(model: ModelSpec, settings: LaunchSettings) -> bool:
    return not settings.context_length and holds_no_context_key(model)


def engine_context(model: ModelSpec, settings: LaunchSettings) -> int:
    """The context_len SGLang runs the launch with."""
    if _falls_back(model, settings):
        return FALLBACK_CONTEXT
    return settings.context_length or model.max_position_embeddings


def context_note(model: ModelSpec, settings: LaunchSettings) -> str:
    """Why the context_len is not the config's positions, where it is not; else empty."""
    if not _falls_back(model, settings):
        return ""
    return (
        f"SGLang's context_len {FALLBACK_CONTEXT:,}: get_context_length's fallback, the config holding none of its "
        f"keys (the decoder's {model.max_position_embeddings:,} positions are {model.positions_field})"
    )


def derived_context(model: ModelSpec, settings: LaunchSettings) -> tuple[int, str] | None:
    """What `_derive_context_length` checks a stated --context-length against, where it is not the config's
    positions: (its fallback, in words); None where it is them."""
    if not holds_no_context_key(model):
        return None
    return FALLBACK_CONTEXT, "SGLang's derived context_len: get_context_length's fallback, the config holding none of its keys"
