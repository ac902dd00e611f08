"""THE table of architectures kvtop reads: every entry of the `table_*` modules, by `model_type`."""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping

from kvtop.domain.architectures.description import Architecture
from kvtop.domain.architectures.nesting import AUTO_TEXT, FIXED_TEXT
from kvtop.domain.architectures.table_classic import CLASSIC
from kvtop.domain.architectures.table_dense import DENSE
from kvtop.domain.architectures.table_dense_more import DENSE_MORE
from kvtop.domain.architectures.table_encdec import ENCODER_DECODER
from kvtop.domain.architectures.table_hybrid import HYBRID
from kvtop.domain.architectures.table_latent import LATENT
from kvtop.domain.architectures.table_layouts import LAYOUTS
from kvtop.domain.architectures.table_legacy import LEGACY
from kvtop.domain.architectures.table_lightning import LIGHTNING
from kvtop.domain.architectures.table_moe import MOE
from kvtop.domain.architectures.table_state_only import STATE_ONLY

_ENTRIES: tuple[Architecture, ...] = (*DENSE, *DENSE_MORE, *CLASSIC, *MOE, *LATENT, *HYBRID, *LIGHTNING, *LAYOUTS, *LEGACY,
                                    *STATE_ONLY, *ENCODER_DECODER)
ARCHITECTURES: Mapping[str, Architecture] = {entry.model_type: entry for entry in _ENTRIES}
assert len(ARCHITECTURES) == len(_ENTRIES), "two entries read the same model_type"
# The engines' architecture class names (config.json `architectures`) → the entry that serves each: an engine
# picks its model class by this name, so a config whose model_type is missing or unknown is read by it.
BY_CLASS_NAME: Mapping[str, Architecture] = {
    name: entry for entry in reversed(_ENTRIES) for name in entry.architectures
}


def modelled_types() -> tuple[str, ...]:
    """Every `model_type` kvtop reads, outer (composite) types included, sorted."""
    return tuple(sorted({*ARCHITECTURES, *FIXED_TEXT, *AUTO_TEXT}))


# Fields that only one kind of entry reads: a config that has them is shaped like that entry.
_SHAPES: tuple[tuple[str, str, str], ...] = (
    ("kv_lora_rank", "deepseek_v3", "multi-head latent attention (kv_lora_rank)"),
    ("hybrid_override_pattern", "nemotron_h", "a Mamba/attention layer pattern (hybrid_override_pattern)"),
    ("linear_num_key_heads", "qwen3_next", "linear-attention layers (linear_num_key_heads)"),
    ("ssm_state_size", "nemotron_h", "Mamba2 state layers (ssm_state_size)"),
    ("num_local_experts", "mixtral", "experts named num_local_experts"),
    ("num_experts", "qwen3_moe", "experts named num_experts"),
)


def nearest_entry(model_type: str, fields: frozenset[str], architecture: str = "") -> tuple[str, str]:
    """(the entry an unknown config is most like, why): by its fields, then its names."""
    for field, entry, why in _SHAPES:
        if field in fields:
            return entry, f"it has {why}"
    stem = re.sub(r"(For(CausalLM|ConditionalGeneration)|Model)$", "", architecture).lower()
    for name in (model_type, stem):
        close = difflib.get_close_matches(name, list(ARCHITECTURES), n=1, cutoff=0.6) if name else []
        if close:
            return close[0], f"its name is closest to {close[0]!r}"
    return "llama", "the common decoder's fields: hidden_size, num_attention_heads, num_key_value_heads, …"
