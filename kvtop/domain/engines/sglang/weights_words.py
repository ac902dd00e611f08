"""The rows SGLang's rules add to the weights book, in words (what a person reads for each row's key).

Each key is one a module of this package builds (`WeightRow.component`); the views read them through the rules'
`weight_row_words` (`kvtop.domain.ledger_words.component_words`), never the key itself.
"""

from __future__ import annotations

from collections.abc import Mapping

WEIGHT_ROW_WORDS: Mapping[str, str] = {
    # weights_built.py
    "fused_shared_expert": "fused shared expert",
    "expert_scales": "expert scales",
    "aliased_blockscale_swizzled": "NVFP4 swizzled block scales freed after the load",
    "wna16_act_order": "WNA16 act-order copy",
    "wo_a_bf16": "wo_a in BF16",
    # weights_classes.py
    "unused_qk_norms": "unused QK norms",
    "per_layer_embeddings_default": "per-layer embeddings (default)",
    "fp32_lm_head": "FP32 LM head",
    "lm_head_padding": "LM head padding",
    "lm_head_beside_tied": "LM head beside the tied embedding",
    "image_newline": "image newline",
    # gptq_built.py
    "gptq_marlin": "GPTQ Marlin repack",
    # blockscale_leak.py
    "leaked_blockscale_swizzled": "NVFP4 swizzled block scales never freed",
    "kept_blockscale_swizzled": "NVFP4 swizzled block scales kept beside the scales",
}
