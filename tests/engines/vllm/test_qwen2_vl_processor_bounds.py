"""Qwen2-VL / Qwen2.5-VL's dummy image is sized by the checkpoint's own image processor where its
preprocessor_config.json is read (`ModelSpec.image_pixels`), as vLLM sizes it: `_get_vision_info` smart-resizes the
9,999,999² square with `image_processor.max_pixels` (v0.9.x – v0.12.x, models/qwen2_vl.py), and from v0.13.0
`get_image_size_with_most_features` takes `image_processor.size["longest_edge"]` ÷ (patch × merge)² tokens.

Expected values by that arithmetic (patch 14, merge 2: a factor of 28): at the published 12,845,056 px the square
resizes to 3,584 px, (3,584 ÷ 14)² ÷ 4 = 16,384 tokens, and 12,845,056 ÷ 784 = 16,384 alike; at max_pixels 1,003,520
(1,280 × 28 × 28, the bound Qwen's model cards suggest) floor(√1,003,520 ÷ 28) × 28 = 980 px, (980 ÷ 14)² ÷ 4 = 1,225
tokens at v0.11.0, and 1,003,520 ÷ 784 = 1,280 tokens from v0.13.0."""

from __future__ import annotations

from kvtop.domain.engines.vllm.encoder_dummies import qwen2_vl_item
from kvtop.domain.engines.vllm.encoder_forward import qwen25_dummy
from kvtop.domain.engines.vllm.encoder_profile import encoder_profile
from tests.data_paths import CONFIGS
from tests.engines.vllm.encoder_inputs import encoder_inputs

QWEN25_VL_7B = CONFIGS / "heldout" / "Qwen--Qwen2.5-VL-7B-Instruct.json"
SMALL = (3_136, 1_003_520)


def test_the_v0_11_dummy_image_reads_the_checkpoints_max_pixels() -> None:
    inputs = encoder_inputs(QWEN25_VL_7B, "0.11.0", 4096)
    assert inputs.model is not None and inputs.model.image_pixels is None
    assert qwen2_vl_item(inputs, inputs.model, ("image",)).counted_tokens == 16_384  # published sizes, assumed
    small = inputs.model.model_copy(update={"image_pixels": SMALL})
    item = qwen2_vl_item(inputs.model_copy(update={"model": small}), small, ("image",))
    assert item.counted_tokens == item.embed_rows == 1_225
    assert item.pixel_values == 1_225 * 4 * 3 * 2 * 14 * 14  # patches × 3 × temporal × patch²


def test_the_v0_13_dummy_image_reads_the_checkpoints_longest_edge() -> None:
    inputs = encoder_inputs(QWEN25_VL_7B, "0.13.0", 4096)
    assert inputs.model is not None
    assert qwen25_dummy(inputs.model, 4096, ("image",), inputs.version).tokens == 16_384
    small = inputs.model.model_copy(update={"image_pixels": SMALL})
    assert qwen25_dummy(small, 4096, ("image",), inputs.version).tokens == 1_280


def test_the_profile_says_whose_sizes_it_read() -> None:
    inputs = encoder_inputs(QWEN25_VL_7B, "0.11.0", 4096)
    assert inputs.model is not None
    assumed = encoder_profile(inputs)
    small = inputs.model.model_copy(update={"image_pixels": SMALL})
    read = encoder_profile(inputs.model_copy(update={"model": small}))
    assert assumed is not None and "published sizes, assumed" in assumed.words
    assert read is not None and "checkpoint's preprocessor_config.json" in read.words


def test_a_video_item_says_its_frames_took_the_image_processors_max_pixels() -> None:
    """At 32,768 tokens of context and max_pixels 1,003,520 the video beats the 1,225-token image; vLLM sizes its
    frames at get_image_size_with_most_features (v0.11.0 models/qwen2_vl.py:1016), the image processor's max_pixels
    (:904 `_get_vision_info`), not a video
    processor's sizes."""
    inputs = encoder_inputs(QWEN25_VL_7B, "0.11.0", 32768)
    assert inputs.model is not None
    small = inputs.model.model_copy(update={"image_pixels": SMALL})
    read = encoder_profile(inputs.model_copy(update={"model": small}))
    assert read is not None and read.modality == "video"
    assert "its frames at the image processor's max_pixels from the checkpoint's preprocessor_config.json" in read.words
