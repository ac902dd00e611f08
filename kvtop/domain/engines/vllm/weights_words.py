"""The rows vLLM's rules add to the weights book, in words (what a person reads for each row's key).

Each key is one a module of this package builds (`WeightRow.component`); the views read them through the rules'
`weight_row_words` (`kvtop.domain.ledger_words.component_words`), never the key itself.
"""

from __future__ import annotations

from collections.abc import Mapping

WEIGHT_ROW_WORDS: Mapping[str, str] = {
    # attention_biases.py
    "attention_bias": "attention bias",
    "qk_norm_bias": "QK norm bias",
    # weights_built.py
    "expert_padding": "expert padding",
    # awq_linear.py
    "awq_zero_points": "AWQ zero points (Machete)",
    # gptq_linear.py
    "gptq_scale_groups": "GPTQ scale groups",
    "gptq_zero_points": "GPTQ zero points",
    # gptq_moe_fallback.py
    "gptq_moe_wna16": "GPTQ MoE WNA16",
}
