"""The dummy item vLLM's encoder profile runs for each counted family (encoder_profile.py says what the profile keeps
of it): its tokens as the budget counts them, its embeddings, its pixels and each output row's width.

Mistral-Small-3.x (`mistral3_item`), Gemma-3 (`gemma3_item`), Qwen2-VL / Qwen2.5-VL at v0.9.0.1 – v0.12.x
(`qwen2_vl_item`), Qwen2.5-VL at v0.13.0 – v0.20.x (`qwen25_vl_item`, its dummy read with its tower in
encoder_forward.py), and the Qwen3-VL family (`qwen3_vl_item`) by vLLM's own processing info
(models/qwen3_vl.py, qwen2_vl.py) over the processor sizes the published Qwen3-VL Instruct checkpoints ship
(preprocessor_config.json: images 65,536 – 16,777,216 px; video_preprocessor_config.json: 4,096 – 25,165,824 px;
patch 16, merge 2, temporal 2; search-index ids 52457624213, 59138427633), assumed, but for the image's bounds where
the checkpoint's own preprocessor_config.json is given (`ModelSpec.image_pixels`, kvtop.domain.processor_config):
- the image with the most features: 9,999,999² px resized to ≤ 16,777,216 px at a factor of patch × merge = 32
  (transformers qwen2_vl smart_resize): 4,096 × 4,096, (4,096 ÷ 16)² ÷ 2² = 16,384 tokens;
- the video: one item (the profiler asks one per modality: v0.12.0 multimodal/registry.py:167-170) of
  min(frames fitting in max_model_len, 24,576) frames (qwen3_vl.py:123 `_MAX_FRAMES_PER_VIDEO`, qwen2_vl.py:979-1011)
  resized together to ≤ 25,165,824 px (qwen3_vl video smart_resize); through v0.12.0 its tokens are counted × 12.5
  for the timestamps (qwen3_vl.py:693-709, v0.12.0), dropped in v0.13.0. At 24,576 frames: 32 × 32 px frames,
  12,288 tokens, 153,600 counted (a v0.12.0 start's log: "a budget of 153600 tokens, … 1 video items").
- each token's output is the merger's plus one per deepstack level (qwen3_vl.py:558-576: the vision section's
  out_hidden_size × (1 + levels) wide; three levels in Qwen3-VL, none in Qwen3.5: `deepstack_levels`), in the
  model dtype; the pixels are
  patches × 3 × temporal × patch² values, cast to the model dtype (v0.11.0 multimodal/processing/context.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.versions import Era, Eras
from kvtop.domain.engines.vllm.encoder_forward import QWEN2_PATCH, qwen2_max_pixels, qwen25_dummy, stated
from kvtop.domain.engines.vllm.mm_tie import profiled_modality
from kvtop.domain.engines.vllm.profile_run import batch_limits
from kvtop.domain.model import ModelSpec
from kvtop.domain.rounding import ceil_div

PATCH, MERGE, TEMPORAL = 16, 2, 2  # Qwen3-VL vision_config (every published checkpoint)
IMAGE_MIN_PIXELS, IMAGE_MAX_PIXELS = 65_536, 16_777_216  # preprocessor_config.json "size"
VIDEO_MIN_PIXELS, VIDEO_MAX_PIXELS = 4_096, 25_165_824  # video_preprocessor_config.json "size"
MAX_FRAMES_PER_VIDEO = 24_576  # qwen3_vl.py _MAX_FRAMES_PER_VIDEO (v0.11.0:91, v0.12.0:123, v0.13.0:132)
DEEPSTACK_LEVELS = 3  # deepstack_visual_indexes: three levels in every Qwen3-VL checkpoint (transformers' default)
# deepstack levels where vision_config leaves deepstack_visual_indexes out, by the tower's config class:
# Qwen3VLVisionConfig / Qwen3VLMoeVisionConfig default [8, 16, 24]; Qwen3.5's classes have no such field, and
# Qwen3_VisionTransformer then takes [] (qwen3_vl.py `hasattr(vision_config, "deepstack_visual_indexes")`: v0.17.0
# :335-339, v0.18.0 :336-340, v0.19.0 :337-341, v0.23.0 :536-540, v0.27.1 :554-558, v0.28.0 :578-582, v0.29.0 and
# v0.30.0 :579-583)
DEEPSTACK_DEFAULTS = {"Qwen3VLVisionConfig": DEEPSTACK_LEVELS, "Qwen3VLMoeVisionConfig": DEEPSTACK_LEVELS}
LARGEST_SIDE = 9_999_999  # get_image_size_with_most_features asks for this square (qwen2_vl.py:961-968)
# Mistral-Small-3.x: the Pixtral tower merged 2 × 2 (Mistral3Config's default)
PIXTRAL_MERGE = 2
# Gemma-3 (pan-and-scan off, the default: gemma3_mm.py:104-118 at v0.19.0): one 896-px crop an image, its
# `image_seq_length` 256 embeddings (Gemma3Config.mm_tokens_per_image, not read: assumed) inside transformers'
# full_image_sequence "\n\n<start_of_image>…<end_of_image>\n\n" (processing_gemma3.py:71, 4.57.1): 4 tokens more
GEMMA3_EMBEDS, GEMMA3_WRAPPING = 256, 4
# Qwen2-VL / Qwen2.5-VL: the processor's published sizes (preprocessor_config.json of every Qwen2-VL / Qwen2.5-VL
# checkpoint: min_pixels 3,136, max_pixels 12,845,056, patch 14, merge 2, temporal 2; search-index ids 5590532836,
# 69393411951), assumed but for max_pixels where the checkpoint's own file was read (encoder_forward.qwen2_max_pixels).
# At v0.9.2 (models/qwen2_vl.py:909-976) the largest image is 9,999,999² px
# resized at a factor of 28 to 3,584 × 3,584: 256 × 256 patches, 16,384 tokens; the video of that image's frames
# (`qwen2_vl_item`) has more tokens from 3 frames (32,768) and is then profiled, the image on a tie. Outputs
# `out_hidden_size` (Qwen2.5-VL) or the text's width (Qwen2-VL) wide, no deepstack; pixels cast to the model dtype
# (inputs/registry.py:168-171, v0.9.2).
# the dummy video's rule where read: (the most frames, whether its frames fit the context less one largest image)
QWEN2_VL_ERAS: Eras[tuple[int, bool] | None] = Eras((
    Era("", None, "not read before v0.9.0.1"),
    Era("0.9.0", (16, True), "v0.9.2 models/qwen2_vl.py:909-976 (the largest image; the video's frames fit the "
                             "context less one image, _MAX_FRAMES_PER_VIDEO 16); v0.9.0.1 :896-1003 the same (v0.9.1 "
                             "not read)"),
    Era("0.10.0", (16, True), "v0.10.0 models/qwen2_vl.py:826-1022: _get_vision_info, get_image_size_with_most_features, "
                              "_get_max_video_frames, get_num_frames_with_most_features (:948-962, less the images) and "
                              "get_dummy_mm_data as v0.9.2's; the dummy built at seq_len = the item's counted tokens "
                              "(v1/worker/gpu_model_runner.py:2385-2391), so its frames give the counted tokens"),
    Era("0.10.1", (16, True), "v0.10.1 models/qwen2_vl.py: _get_vision_info, get_image_size_with_most_features, "
                              "_get_max_video_frames, get_num_frames_with_most_features and get_dummy_mm_data the "
                              "same as v0.9.0.1's (session 58)"),
    Era("0.10.2", (16, False), "v0.10.2 models/qwen2_vl.py get_num_frames_with_most_features: the frames fit the "
                               "whole context (no image subtracted); the other functions as v0.10.1's"),
    Era("0.11.0", (14, False), "v0.11.0 models/qwen2_vl.py: _MAX_FRAMES_PER_VIDEO 14 (:82), _get_max_video_frames from "
                               "1 frame (:974-995), get_num_frames_with_most_features over the whole context (:997-1009), "
                               "the image 9,999,999² smart-resized (:956-963); the dummy at seq_len = max_model_len "
                               "(v1/worker/gpu_model_runner.py:2867-2893 _get_mm_dummy_batch); v0.11.1 :116, :1056-1090, "
                               "v0.11.2 and v0.12.0 (:118, :979-1013) the same"),
    Era("0.13.0", None, "from v0.13.0 Qwen2.5-VL only, its dummy (the image a factor pair) and tower read: "
                        "encoder_forward.py; Qwen2-VL's tower not read"),
))  # fmt: skip
# whether the dummy video is built at seq_len = max_num_batched_tokens (mm_counts one video, no image less) while the
# budget counts it at max_model_len: v0.9.x; from v0.10.0 at the item's counted tokens (or max_model_len)
DUMMY_AT_BATCH_TOKENS_ERAS: Eras[bool] = Eras((
    Era("", False, "not read before v0.9.0"),
    Era("0.9.0", True, "v0.9.0 and v0.9.0.1 v1/worker/gpu_model_runner.py:1871, v0.9.1 :1986, v0.9.2 :2246 "
                       "profile_run: get_decoder_dummy_data(seq_len=self.max_num_tokens, mm_counts={modality: 1}); "
                       "max_num_tokens is max_num_batched_tokens (:129 at v0.9.2)"),
    Era("0.10.0", False, "v0.10.0 gpu_model_runner.py:2388 seq_len=max_tokens_per_mm_item; v0.11.0 _get_mm_dummy_batch "
                         "seq_len=max_model_len (:2877)"),
))  # fmt: skip
# the video's tokens counted × 12.5 for its timestamps (qwen3_vl.py get_max_video_tokens)
TIMESTAMP_ERAS: Eras[float] = Eras((
    Era("", 12.5, "v0.11.0 qwen3_vl.py:674, v0.12.0 :708: video_soft_tokens × 12.5"),
    Era("0.13.0", 1.0, "v0.13.0 qwen3_vl.py:710-722: the soft tokens"),
))  # fmt: skip


def _image_resize(height: int, width: int, min_pixels: int, max_pixels: int) -> tuple[int, int]:
    """transformers qwen2_vl image smart_resize (the image processor vLLM's Qwen3-VL info calls)."""
    factor = PATCH * MERGE
    h_bar, w_bar = round(height / factor) * factor, round(width / factor) * factor
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt(height * width / max_pixels)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar, w_bar = math.ceil(height * beta / factor) * factor, math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


def _video_resize(frames: int, height: int, width: int) -> tuple[int, int]:
    """transformers qwen3_vl video smart_resize (video_processing_qwen3_vl.py, 4.57.1: lines 34-64)."""
    factor = PATCH * MERGE
    h_bar, w_bar = round(height / factor) * factor, round(width / factor) * factor
    t_bar = round(frames / TEMPORAL) * TEMPORAL
    if t_bar * h_bar * w_bar > VIDEO_MAX_PIXELS:
        beta = math.sqrt(frames * height * width / VIDEO_MAX_PIXELS)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif t_bar * h_bar * w_bar < VIDEO_MIN_PIXELS:
        beta = math.sqrt(VIDEO_MIN_PIXELS / (frames * height * width))
        h_bar, w_bar = math.ceil(height * beta / factor) * factor, math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


def _patches(frames: int, height: int, width: int) -> int:
    """vLLM `_get_vision_info`: frames padded to the temporal patch, the grid of patches (qwen3_vl.py:667-673)."""
    padded = frames + frames % TEMPORAL
    return max(padded // TEMPORAL, 1) * (height // PATCH) * (width // PATCH)


def largest_image(pixels: tuple[int, int] | None = None) -> tuple[int, int]:
    """The image with the most features (`get_image_size_with_most_features`) within the image processor's
    (shortest_edge, longest_edge) `pixels` (None: the published 65,536 – 16,777,216, 4,096 × 4,096)."""
    low, high = pixels if pixels is not None else (IMAGE_MIN_PIXELS, IMAGE_MAX_PIXELS)
    return _image_resize(LARGEST_SIDE, LARGEST_SIDE, low, high)


def video_patches(frames: int, pixels: tuple[int, int] | None = None) -> int:
    """Patches of a video of `frames` frames of the largest image (the image processor's: qwen3_vl.py
    get_max_video_tokens, v0.11.0:686), resized together."""
    height, width = largest_image(pixels)
    return _patches(frames, *_video_resize(frames, height, width))


@cache
def video_frames(max_model_len: int, pixels: tuple[int, int] | None = None) -> int:
    """`get_num_frames_with_most_features` for one video: the most frames, from 2, whose tokens fit the context
    (qwen2_vl.py `_get_max_video_frames`), at most 24,576."""
    frames = 2
    while frames < MAX_FRAMES_PER_VIDEO and video_patches(frames + 1, pixels) // MERGE**2 <= max_model_len:
        frames += 1
    return frames


@dataclass(frozen=True)
class DummyItem:
    """One dummy item of the modality profiled: its tokens as the budget counts them, its embeddings (the encoder's
    output rows), the values of its pixels, the width of each output row, in words its shape."""

    modality: str
    counted_tokens: int
    embed_rows: int
    pixel_values: int
    width: int
    shape: str


def qwen3_vl_item(inputs: CalibrationInputs, model: ModelSpec, on: tuple[str, ...]) -> DummyItem:
    """Qwen3-VL's item of the most tokens of the modalities `on`: the image (16,384 at the published sizes; within
    the checkpoint's own image processor bounds where its preprocessor_config.json was read, `ModelSpec.image_pixels`:
    qwen3_vl.py:619-625 at v0.11.0 resizes to `size["longest_edge"]`) or the video of that image's frames (the video
    processor's published sizes; × 12.5 through v0.12.0), module docstring."""
    height, width = largest_image(model.image_pixels)
    image_patches = _patches(1, height, width)
    frames = video_frames(inputs.context_length, model.image_pixels)
    patches = {"image": image_patches, "video": video_patches(frames, model.image_pixels)}
    soft = {modality: count // MERGE**2 for modality, count in patches.items()}
    counted = {"image": soft["image"], "video": int(soft["video"] * TIMESTAMP_ERAS.at(inputs.version))}
    counted = {modality: tokens for modality, tokens in counted.items() if modality in on}
    # the largest, a tie broken as the release's max() over the dict breaks it (mm_tie.py)
    modality = profiled_modality(counted, inputs.version)
    levels = deepstack_levels(model)
    out = stated(model, "out_hidden_size", model.hidden_size) * (1 + levels)
    shape = f"{frames:,} frames" if modality == "video" else f"{width:,} × {height:,} px"
    return DummyItem(modality, counted[modality], soft[modality], patches[modality] * 3 * TEMPORAL * PATCH**2, out,
                     f"{shape}: {soft[modality]:,} tokens; merger and {levels} deepstack levels")  # fmt: skip


def deepstack_levels(model: ModelSpec) -> int:
    """The deepstack levels Qwen3_VisionTransformer concatenates to the merger's output (`torch.cat([hidden_states]
    + deepstack_feature_lists, dim=1)`: qwen3_vl.py v0.17.0 :590-592, v0.19.0 :653-655, v0.27.1 :848-850, v0.28.0
    :881-883, v0.29.0 and v0.30.0 :887-889): the
    length of the `deepstack_visual_indexes` the config states, else its class's default (`DEEPSTACK_DEFAULTS`; 0
    for Qwen3.5's classes)."""
    stated_levels = model.vision.deepstack_levels if model.vision is not None else None
    if stated_levels is not None:
        return stated_levels
    return DEEPSTACK_DEFAULTS.get(model.tower.config_class if model.tower is not None else "", 0)


def qwen2_vl_item(inputs: CalibrationInputs, model: ModelSpec, on: tuple[str, ...]) -> DummyItem:
    """Qwen2-VL / Qwen2.5-VL's item of the most tokens at v0.9.x – v0.12.x (`QWEN2_VL_ERAS`): the image, 3,584 × 3,584
    px (9,999,999² resized at a factor of patch × merge within max_pixels, the checkpoint's where read:
    `qwen2_max_pixels`), 16,384 tokens at the published sizes; or the video of the most frames of that image
    (each frame resized alone, padded to the temporal patch, a pair's tokens an image's) whose tokens fit the context
    (less one image where the release subtracts it and the image is on), at most 16 (14 from v0.11.0: `_get_max_video_frames`,
    `get_num_frames_with_most_features`): from 3 frames (32,768 tokens) it has more than the image and is profiled;
    the image on a tie (first in the dict). Pixels: 3 × temporal × patch² values a patch. At v0.9.x the video built
    is the one fitting `max_num_batched_tokens` instead (`DUMMY_AT_BATCH_TOKENS_ERAS`): its rows and pixels."""
    patch, temporal = stated(model, "patch_size", QWEN2_PATCH), stated(model, "temporal_patch_size", TEMPORAL)
    factor = patch * MERGE
    side = max(factor, math.floor(math.sqrt(qwen2_max_pixels(model)) / factor) * factor)  # smart_resize of 9,999,999²
    image = (side // patch) ** 2 // MERGE**2
    width = stated(model, "out_hidden_size", model.hidden_size)
    rule = QWEN2_VL_ERAS.at(inputs.version)
    most, less_image = rule if rule is not None else (1, False)
    frames = _frames_fitting(inputs.context_length - (image if less_image and "image" in on else 0), most, image,
                             temporal)  # fmt: skip
    video = _pairs(frames, temporal) * image
    if "video" in on and ("image" not in on or video > image):
        if DUMMY_AT_BATCH_TOKENS_ERAS.at(inputs.version):  # the video built: mm_counts {video: 1}, no image less
            frames = _frames_fitting(batch_limits(inputs)[0], most, image, temporal)
        built = _pairs(frames, temporal) * image
        return DummyItem("video", video, built, built * MERGE**2 * 3 * temporal * patch**2, width,
                         f"{frames} frames of {side:,} × {side:,} px: {built:,} tokens"
                         + (f" (counted {video:,})" if built != video else ""))  # fmt: skip
    return DummyItem("image", image, image, image * MERGE**2 * 3 * temporal * patch**2, width,
                     f"{side:,} × {side:,} px: {image:,} tokens")  # fmt: skip


def _frames_fitting(room: int, most: int, image: int, temporal: int) -> int:
    """The most frames, from 1 and at most `most`, whose tokens fit `room` (`_get_max_video_frames` with
    `get_num_frames_with_most_features`' floor of 1)."""
    frames = 0
    while frames < most and _pairs(frames + 1, temporal) * image <= room:
        frames += 1
    return max(frames, 1)


def _pairs(frames: int, temporal: int) -> int:
    """The temporal patches of `frames` frames padded to the temporal patch (`_get_vision_info`)."""
    return max((frames + frames % temporal) // temporal, 1)


def qwen25_vl_item(inputs: CalibrationInputs, model: ModelSpec, on: tuple[str, ...]) -> DummyItem:
    """Qwen2.5-VL's item of the most tokens at v0.13.0 – v0.20.x (encoder_forward.py): the image or the video of the
    largest image's frames; outputs `out_hidden_size` wide, pixels 3 × temporal × patch² values a patch."""
    dummy = qwen25_dummy(model, inputs.context_length, on, inputs.version)
    patch, temporal = stated(model, "patch_size", QWEN2_PATCH), stated(model, "temporal_patch_size", TEMPORAL)
    return DummyItem(dummy.modality, dummy.tokens, dummy.tokens, dummy.patches * 3 * temporal * patch**2,
                     stated(model, "out_hidden_size", model.hidden_size), dummy.shape)  # fmt: skip


def mistral3_item(model: ModelSpec) -> DummyItem:
    """Mistral-Small-3.x's image: `vision_config.image_size` square (1,540), `patch_size` × the merge 2
    (Mistral3Config.spatial_merge_size, not read: assumed) a token (pixtral.py `get_patch_size`, v0.19.0:961-964),
    rows of ncols tokens and a break (mistral3.py:295-301): 55 × 55 = 3,025 embeddings in 3,080 tokens."""
    side, step = stated(model, "image_size", 1540), stated(model, "patch_size", 14) * PIXTRAL_MERGE
    grid = ceil_div(side, step)
    return DummyItem("image", grid * (grid + 1), grid * grid, 3 * side * side, model.hidden_size,
                     f"{side:,} × {side:,} px: {grid * grid:,} embeddings in {grid * (grid + 1):,} tokens")  # fmt: skip


def gemma3_item(model: ModelSpec) -> DummyItem:
    """Gemma-3's image: `vision_config.image_size` square (896), 256 embeddings in 260 tokens (`GEMMA3_CLASSES`)."""
    side = stated(model, "image_size", 896)
    return DummyItem("image", GEMMA3_EMBEDS + GEMMA3_WRAPPING, GEMMA3_EMBEDS, 3 * side * side, model.hidden_size,
                     f"{side:,} × {side:,} px: {GEMMA3_EMBEDS} embeddings in {GEMMA3_EMBEDS + GEMMA3_WRAPPING} tokens")  # fmt: skip
