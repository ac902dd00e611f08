"""An Eagle-3 draft head's config (`LlamaForCausalLMEagle3` and kin): the parts beside its decoder layer.

The head fuses the target's auxiliary hidden states with an fc of `target_hidden_size` (else `hidden_size`) ×
the number of auxiliary states (`num_aux_hidden_states`, else the length of
`eagle_config.eagle_aux_hidden_state_layer_ids`, else 3), optionally normed first (`norm_before_fc`, in
`eagle_config` or at the top) or per state (`fc_norm`, legacy `use_aux_norm`), and predicts over its own
`draft_vocab_size` (SGLang srt/models/llama_eagle3.py LlamaModel / LlamaForCausalLMEagle3, read at 0.5.23).
How an engine builds it is the engine's rule (SGLang: engines/sglang/eagle3.py).
"""

from __future__ import annotations

from typing import Any

from kvtop.domain.errors import InputError
from kvtop.domain.model import Eagle3Head
from kvtop.domain.redact import quoted

DEFAULT_AUX_STATES = (
    3  # llama_eagle3.py: "num_aux resolution: explicit attr > eagle_config layer_ids > default 3"
)


def _count(value: Any, field: str, source: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= 1 << 20:
        raise InputError(
            f"must be a positive whole number (got {quoted(value)})", field=field, source=source
        )
    return value


def read_eagle3_head(
    config: dict[str, Any], architecture: str, hidden_size: int, source: str
) -> Eagle3Head | None:
    """The head's parts where `architecture` is an Eagle-3 class, else None."""
    if "Eagle3" not in architecture:
        return None
    stated = config.get("eagle_config")
    eagle: dict[str, Any] = stated if isinstance(stated, dict) else {}
    layer_ids = eagle.get("eagle_aux_hidden_state_layer_ids")
    aux = _count(config.get("num_aux_hidden_states"), "num_aux_hidden_states", source)
    if aux is None:
        aux = len(layer_ids) if isinstance(layer_ids, list) and layer_ids else DEFAULT_AUX_STATES
    target = _count(config.get("target_hidden_size"), "target_hidden_size", source) or hidden_size
    return Eagle3Head(
        fusion_in=target * aux, target_hidden_size=target, aux_states=aux,
        fusion_bias=bool(config.get("bias", False)),
        norm_before_fusion=bool(eagle.get("norm_before_fc", config.get("norm_before_fc", False))),
        norm_per_aux=bool(config.get("fc_norm") or config.get("use_aux_norm", False)),
        draft_vocab_size=_count(config.get("draft_vocab_size"), "draft_vocab_size", source),
    )  # fmt: skip


# The DFlash drafter classes laid out as vLLM's DFlashQwen3ForCausalLM (qwen3_dflash.py): the architectures its
# registry maps there (model_executor/models/registry.py: DFlashDraftModel v0.21.0 :589 to v0.29.0 :614; Muse
# Glimmer's assistant, bare and as EAGLEConfig's rewritten DFlash{arch}, v0.29.0 :622-623, run as dflash from v0.28.0). Others named DFlash are
# other layouts (DFlash2DraftModel's qwen3_dflash2, DFlashLagunaForCausalLM's laguna_dflash): no fusion read.
DFLASH_QWEN3_DRAFTERS = ("DFlashDraftModel", "MuseGlimmerAssistantModel", "DFlashMuseGlimmerAssistantModel")


def read_dflash_fusion(config: dict[str, Any], architecture: str, hidden_size: int, source: str) -> Eagle3Head | None:
    """A DFlash drafter's fc where `architecture` is one of `DFLASH_QWEN3_DRAFTERS`, else None: `target_hidden_size`
    (else `hidden_size`) × the target layers it reads (`dflash_config.target_layer_ids`, else `num_hidden_layers`),
    no bias, no norm before it (vLLM qwen3_dflash.py DFlashQwen3Model, v0.24.0 :258-276; the z-lab
    checkpoints name the same fields); `dflash_config.use_swa` kept (every layer sliding from vLLM v0.25.0)."""
    if architecture not in DFLASH_QWEN3_DRAFTERS:
        return None
    stated = config.get("dflash_config")
    dflash: dict[str, Any] = stated if isinstance(stated, dict) else {}
    layer_ids = dflash.get("target_layer_ids")
    aux = len(layer_ids) if isinstance(layer_ids, list) and layer_ids else None
    aux = aux or _count(config.get("num_hidden_layers"), "num_hidden_layers", source) or 1
    target = _count(config.get("target_hidden_size"), "target_hidden_size", source) or hidden_size
    return Eagle3Head(fusion_in=target * aux, target_hidden_size=target, aux_states=aux,
                      draft_vocab_size=_count(config.get("draft_vocab_size"), "draft_vocab_size", source),
                      use_swa=bool(dflash.get("use_swa", False)))  # fmt: skip
