"""Qwen3-VL's own tower forward in vLLM's encoder profile from v0.17.0 (encoder_forward_qwen3.py): the block's peak,
pos_embeds and the deepstack outputs held after their indexes, with the pixels.

Qwen3-VL-8B-Instruct's vision_config (tests/data/configs/heldout/Qwen--Qwen3-VL-8B-Instruct.json): width 1,152, MLP
4,304, out_hidden_size 4,096, merge 2, deepstack_visual_indexes [8, 16, 24] of depth 27. Its dummy at 8,192 of
context is the 4,096² image, 16,384 tokens, 65,536 patches, 65,536 × 3 × 2 × 16² = 100,663,296 pixel values. At TP 1
the block's peak is max(3 × 1,152 + 2 × 4,304, 4 × 1,152 + 4,304) = 12,064 widths (qwen3_vl.py MLP :209, block
:263 at v0.17.0), pos_embeds 1,152 (:546), the three deepstack outputs 3 × 16,384 × 4,096 (:589), all bf16."""

from __future__ import annotations

from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.encoder_profile import encoder_profile, qwen3_forward_counted
from tests.data_paths import CONFIGS
from tests.engines.vllm.encoder_inputs import encoder_inputs

QWEN3_VL_8B = CONFIGS / "heldout" / "Qwen--Qwen3-VL-8B-Instruct.json"
EXPECTED = 65_536 * (12_064 + 1_152) * 2 + 3 * 16_384 * 4_096 * 2 + 100_663_296 * 2


def test_qwen3_vl_s_forward_is_counted_from_v0_17() -> None:
    inputs = encoder_inputs(QWEN3_VL_8B, "0.19.0", 8192)
    profile = encoder_profile(inputs)
    assert profile is not None and (profile.modality, profile.items, profile.item_tokens) == ("image", 1, 16_384)
    assert profile.forward_bytes == EXPECTED  # 2.18 GiB
    assert "3 deepstack outputs" in profile.forward_words


def test_before_v0_17_only_the_kept_cache_is_counted() -> None:
    inputs = encoder_inputs(QWEN3_VL_8B, "0.13.0", 8192)
    assert inputs.model is not None and not qwen3_forward_counted(inputs.model, ResolvedVersion(text="0.13.0"))
    profile = encoder_profile(inputs)
    assert profile is not None and profile.forward_bytes == 0
