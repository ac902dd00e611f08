"""The weights book's rows and the deployment's features in words: what a person reads for each key.

`WeightRow.component` is a key the rules match on ('routed_experts', 'calibrated_beyond_book'); a view
shows `component_words(row.component, engine)` instead, never the key (the trial's `calibrated_beyond_book` row
in `kvtop plan` and the TUI ledger). The generic book's rows and the ledger's own are worded here; a row an
engine's rules add ('fp32_lm_head', 'gptq_zero_points') is worded by that engine's own package
(`EngineRules.weight_row_words`). A key without an entry reads with its underscores as spaces.
"""

from __future__ import annotations

from collections.abc import Mapping

from kvtop.domain.deployment import Feature
from kvtop.domain.engines.registry import ENGINE_IDS, EngineId, engine_rules
from kvtop.domain.ledger import CALIBRATED_WEIGHTS_ROW
from kvtop.domain.node import REPORTED_WEIGHTS_ROW

#: Key → words for the rows no engine owns: the generic book's (weights.COMPONENT_ORDER, the towers, the
#: stored `tensors`), the ledger's calibrated row (ledger.py) and the node's reported row (node.py).
COMPONENT_WORDS: Mapping[str, str] = {
    "embedding": "embedding",
    "attention": "attention",
    "linear_attention": "linear attention",
    "mlp": "MLP",
    "routed_experts": "routed experts",
    "shared_experts": "shared experts",
    "router": "router",
    "norms": "norms",
    "lm_head": "LM head",
    "mtp": "MTP layers",
    "vision": "vision tower",
    "audio": "audio tower",
    "vision_audio": "vision+audio tower",
    "tensors": "tensors",
    # what the engine holds on the GPU as weights beyond the checkpoint's tensors (a loader's rope cache, an MXFP4
    # copy, the caching allocator's tails): the calibrated weights term less the book
    CALIBRATED_WEIGHTS_ROW: "held beyond the checkpoint (calibrated)",
    # what the engine reports above kvtop's book (the waterfall's weights term)
    REPORTED_WEIGHTS_ROW: "reported above the book",
}


def component_words(component: str, engine: EngineId | None = None) -> str:
    """What a weights row of `engine`'s ledger holds, in words ('calibrated_beyond_book' → 'held beyond the
    checkpoint (calibrated)'; an engine's own 'fp32_lm_head' → 'FP32 LM head'); `engine` None or unknown: the
    generic words."""
    own = engine_rules(engine).weight_row_words.get(component) if engine in ENGINE_IDS else None
    return own or COMPONENT_WORDS.get(component) or component.replace("_", " ")


#: A deployment feature in words, as `plan`'s "Beside the model" table heads its rows (the key stays in `--json`).
FEATURE_WORDS: Mapping[Feature, str] = {
    Feature.SPECULATIVE: "speculative",
    Feature.EXPERT_PARALLEL: "expert parallel",
    Feature.ENCODER: "encoder",
    Feature.LORA: "LoRA",
    Feature.HOST_KV: "host KV tier",
}
