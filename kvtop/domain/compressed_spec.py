"""DeepSeek-V4's compressed attention as the model states it (a part of `ModelSpec`, kept apart from model.py so
that module stays one screen per shape kind)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class CompressedSpec(BaseModel):
    """DeepSeek-V4's compressed attention (whole model, before TP): each layer attends over a sliding window of
    raw latents and, where its compress ratio is 4 or 128, over one compressed latent per that many tokens,
    read by a compressor (and on ratio-4 layers picked by an indexer of its own compressed keys). One latent of
    `head_dim` (nope + rope) per entry, one KV head; q through a LoRA (`q_lora_rank`), o through `o_groups`
    grouped LoRAs of `o_lora_rank`. Its hyper-connections are the body's (`BodyShape.hc_streams`, `hc_comb`)."""

    model_config = ConfigDict(frozen=True)
    ratios: tuple[int, ...]  # per main layer: 0 (window only), 4 or 128
    window: int
    q_lora_rank: int
    o_groups: int
    o_lora_rank: int
    index_head_dim: int
    index_heads: int
    rope_head_dim: int
    experts_fp4: bool = True  # config `expert_dtype` "fp4" (its default); "fp8": FP8 experts (DeepSeek-V4-Flash-Base)

    def layers_at(self, ratio: int, layers: range | None = None) -> int:
        """How many of `layers` (default: all) compress by `ratio`."""
        span = range(len(self.ratios)) if layers is None else layers
        return sum(1 for i in span if self.ratios[i] == ratio)
