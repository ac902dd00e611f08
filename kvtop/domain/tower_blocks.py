"""How an engine divides a tower's blocks over TP, as data: each engine package names, per encoder class it
builds, when its attention and its MLP split (`BlockSplit`), and what its fused qkv adds over the checkpoint.

Engines disagree on the same encoder: vLLM 0.33.0 qwen3_omni_moe_thinker.py builds Qwen3OmniMoeAudioEncoder's
attention and MLP whole unless the 20 heads divide by TP (`disable_tp`), where SGLang 0.5.23 qwen3_omni_moe.py always
splits the attention (VisionAttention: `dist_utils.divide(num_heads, tp)` asserts) and splits fc1 / fc2 only where
encoder_ffn_dim divides by TP (else ReplicatedLinear). A tower names its encoder's class (`TowerSpec.block_class`) and
the engine's `TowerSplit.blocks` says how that class divides; shared code never asks which engine it is. GLM-4.1V's
and GLM-4.5V's vision transformer (12 heads) at TP 8: vLLM 0.33.0 glm4_1v.py Glm4vVisionAttention asserts the
heads divide (`dist_utils.divide`), SGLang 0.5.23 glm4v.py pads them to 16 with zero heads (num_dummy_heads).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

# always: split over TP (the engine cannot build it where the heads do not divide); heads: split where the heads
# divide by TP, else whole; width: split where the block MLP's width divides by TP, else whole; pad: split, the heads
# padded with zero "dummy" heads up to a multiple of TP (SGLang's vision_utils.update_vit_attn_dummy_heads_config);
# never: whole
SplitWhen = Literal["always", "heads", "width", "pad", "never"]


class BlockSplit(BaseModel):
    """One engine's way with one encoder class's blocks (TowerSpec.head_split_params: attention and MLP)."""

    model_config = ConfigDict(frozen=True)
    attention: SplitWhen = "heads"
    mlp: SplitWhen = "heads"
    k_bias: bool = False  # the fused qkv carries a K bias the checkpoint lacks (TowerSpec.k_bias_params)
    source: str = ""  # the engine file (and release) the rule is read in


def splits(when: SplitWhen, tp: int, heads: int, width: int) -> bool:
    """Whether a part under rule `when` divides over `tp` (heads and width: the encoder's)."""
    if when in ("always", "pad"):
        return True
    if when == "heads":
        return heads > 0 and heads % tp == 0
    if when == "width":
        return width > 0 and width % tp == 0
    return False


def dummy_heads(rule: BlockSplit, tp: int, heads: int) -> int:
    """The zero heads the engine adds so that `heads` divide by `tp` (its "pad" rule), else 0."""
    return -heads % tp if rule.attention == "pad" and heads > 0 else 0


def cannot_build(rule: BlockSplit, tp: int, heads: int) -> bool:
    """The engine splits the attention whatever the heads, and they do not divide by `tp`: its build asserts."""
    return rule.attention == "always" and heads > 0 and heads % tp != 0
