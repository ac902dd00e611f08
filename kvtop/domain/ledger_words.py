"""The weights book's rows and the deployment's features in words: what a person reads for each key.

`WeightRow.component` is a key the rules match on ('routed_experts', 'calibrated_beyond_book'); a view
shows `component_words(row.component)` instead, never the key (the trial's `calibrated_beyond_book` row in
`kvtop plan` and the TUI ledger). A key without an entry reads with its underscores as spaces.
"""

from __future__ import annotations

from collections.abc import Mapping

from kvtop.domain.deployment import Feature

#: Key → words. The generic book's rows (weights.COMPONENT_ORDER, the towers), the rows an engine's rules add
#: (sglang/weights_built.py, weights_classes.py, gptq_built.py; vllm's), the ledger's calibrated row (ledger.py)
#: and the node's reported row (node.py).
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
    "calibrated_beyond_book": "held beside the book (calibrated)",
    "reported_above_prediction": "reported above the book",
    "expert_scales": "expert scales",
    "fused_shared_expert": "fused shared expert",
    "wna16_act_order": "WNA16 act-order copy",
    "wo_a_bf16": "wo_a in BF16",
    "attention_bias": "attention bias",
    "expert_padding": "expert padding",
    "fp32_lm_head": "FP32 LM head",
    "gptq_marlin": "GPTQ Marlin repack",
    "gptq_moe_wna16": "GPTQ MoE WNA16",
    "gptq_scale_groups": "GPTQ scale groups",
    "gptq_zero_points": "GPTQ zero points",
    "image_newline": "image newline",
    "lm_head_beside_tied": "LM head beside the tied embedding",
    "lm_head_padding": "LM head padding",
    "per_layer_embeddings_default": "per-layer embeddings (default)",
    "qk_norm_bias": "QK norm bias",
    "unused_qk_norms": "unused QK norms",
}


def component_words(component: str) -> str:
    """What a weights row holds, in words ('calibrated_beyond_book' → 'held beside the book (calibrated)')."""
    return COMPONENT_WORDS.get(component) or component.replace("_", " ")


#: A deployment feature in words, as `plan`'s "Beside the model" table heads its rows (the key stays in `--json`).
FEATURE_WORDS: Mapping[Feature, str] = {
    Feature.SPECULATIVE: "speculative",
    Feature.EXPERT_PARALLEL: "expert parallel",
    Feature.ENCODER: "encoder",
    Feature.LORA: "LoRA",
    Feature.HOST_KV: "host KV tier",
}
