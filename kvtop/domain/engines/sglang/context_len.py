"""The context length SGLang sizes its request slots with (docs/engines/sglang.md §7.1), where it is not the one
kvtop reads from the config: `ModelConfig._derive_context_length` takes --context-length, else
`get_context_length(hf_text_config)`, the first of max_sequence_length, seq_length, max_seq_len, model_max_length,
max_position_embeddings the config holds, else 2048 (0.5.23 srt/configs/model_config.py, utils/hf_transformers/
common.py CONTEXT_LENGTH_KEYS). Whisper's config holds none of them (its decoder's 448 positions are
max_target_positions): SGLang plans Whisper at 2048, which `resolve_max_num_reqs` (int(tokens ÷ context_len × 512)
clamped to 2048..4096), the req_to_token rows ((n + 1) × (context_len + 4) int32) and every full-context figure read
(the ledger's one context length, `SglangRules.context_length`). get_context_length also multiplies the key it finds by
the config's `rope_scaling.factor`, unless that block states `original_max_position_embeddings` or its rope_type is
llama3, at every release kvtop models (0.4.0 … 0.5.23: the same body at each release read, `ROPE_FACTOR_READ`):
InternLM2.5-7B (dynamic, factor 2.0) runs at 65,536, not its 32,768 positions.
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


# the rope type whose factor get_context_length leaves out (common.py:685-686, 0.5.23; 0.4.0 :114-115)
UNSCALED_ROPE_TYPE = "llama3"
# Where get_context_length (`def` … `return 2048`) was read, by release: the same body, rope-factor rule and keys at
# each, and `ModelConfig` sizing with it (`derived_context_len = get_context_length(self.hf_text_config)`,
# srt/configs/model_config.py) at each; so the rule holds from 0.4.0 (kvtop's oldest SGLang) to 0.5.23, no era.
ROPE_FACTOR_READ = (
    ("0.4.0", "srt/hf_transformers_utils.py:106-123"),
    ("0.4.3", "srt/hf_transformers_utils.py:101-118"),
    ("0.4.6.post5", "srt/hf_transformers_utils.py:168-185"),
    ("0.4.9.post6", "srt/hf_transformers_utils.py:186-203"),
    ("0.5.0rc2", "srt/hf_transformers_utils.py:214-231"),
    ("0.5.2", "srt/hf_transformers_utils.py:245-262"),
    ("0.5.5", "srt/utils/hf_transformers_utils.py:328-345"),
    ("0.5.9", "srt/utils/hf_transformers_utils.py:453-470"),
    ("0.5.14", "srt/utils/hf_transformers/common.py:378-395"),
    ("0.5.19", "srt/utils/hf_transformers/common.py:567-584"),
    ("0.5.23", "srt/utils/hf_transformers/common.py:677-694"),
)


def rope_scaled(model: ModelSpec) -> int | None:
    """get_context_length's int(factor × the key it finds), where the rope factor scales it; None where not (no factor,
    the block states original_max_position_embeddings, or llama3). kvtop's `rope_original_positions` also holds a
    section's top-level one beside a rope block, which SGLang does not read: such a config is taken as unscaled."""
    if model.rope_factor == 1 or model.rope_original_positions or model.rope_type == UNSCALED_ROPE_TYPE:
        return None
    return int(model.rope_factor * model.max_position_embeddings)


def holds_no_context_key(model: ModelSpec) -> bool:
    """The config holds none of CONTEXT_LENGTH_KEYS: its positions were read from another field."""
    return model.positions_field not in CONTEXT_LENGTH_KEYS


def _falls_back(model: ModelSpec, settings: LaunchSettings) -> bool:
    return not settings.context_length and holds_no_context_key(model)


def engine_context(model: ModelSpec, settings: LaunchSettings) -> int:
    """The context_len SGLang runs the launch with."""
    if _falls_back(model, settings):
        return FALLBACK_CONTEXT
    return settings.context_length or rope_scaled(model) or model.max_position_embeddings


def context_note(model: ModelSpec, settings: LaunchSettings) -> str:
    """Why the context_len is not the config's positions, where it is not; else empty."""
    scaled = None if settings.context_length else rope_scaled(model)
    if scaled is not None and not holds_no_context_key(model):
        return (
            f"SGLang's context_len {scaled:,}: get_context_length multiplies the config's "
            f"{model.max_position_embeddings:,} positions by its rope factor {model.rope_factor:g}"
        )
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
        scaled = rope_scaled(model)
        if scaled is None:
            return None
        return scaled, f"SGLang's derived context_len: get_context_length's positions × the rope factor {model.rope_factor:g}"
    return FALLBACK_CONTEXT, "SGLang's derived context_len: get_context_length's fallback, the config holding none of its keys"
