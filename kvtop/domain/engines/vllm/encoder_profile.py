"""What a multimodal model's profile run holds besides the text model's: vLLM's encoder profile (docs/engines/vllm.md §10).

V1's `profile_run` (v0.12.0 v1/worker/gpu_model_runner.py:4284-4369; v0.13.0 :4424-4487; v0.19.0 :5721-5795) first
runs the encoder on a dummy batch of the modality with the most tokens per item (`MultiModalBudget`, v0.12.0
v1/worker/utils.py:21-124): the encoder budget is max(`max_num_batched_tokens`, the largest item's tokens) (both
`max_num_encoder_input_tokens` and `encoder_cache_size` default to `max_num_batched_tokens`: v0.12.0
config/scheduler.py:224-225; v1/core/encoder_cache_manager.py:296-343 `compute_mm_encoder_budget`), the items
budget ÷ the item's tokens (at least 1). It keeps the encoder's outputs in `encoder_cache` and the dummy inputs
(`batched_dummy_mm_inputs`, a local of `profile_run`) through the text model's `_dummy_run` and `_dummy_sampler_run`,
clearing them only after: both add to the torch peak the text run reaches. v0.11.0 – v0.11.2 first expand each
output to (the encoder budget, width) where it is shorter (v0.11.0 :3375-3384), v0.12.0 to (the item's tokens,
width) (v0.12.0 :4340-4351); v0.10.2 (:3026) and v0.13.0 on keep it as returned. Where v0.11.0 – v0.12.x expand,
the loop's variable (`for output in dummy_encoder_outputs`, v0.11.0 :3377, v0.11.2 :4121, v0.12.0 :4343) still names
the last returned output when the text run starts; it is rebound only by `output = self._dummy_sampler_run(...)`
(v0.11.0 :3397, v0.11.2 :4142, v0.12.0 :4364), after the forward and the sampler have run. The outputs the counted
families return are split views of one tensor (qwen3_vl.py:1343 `video_embeds.split`, pixtral.py:422 and
mistral3.py:509 `torch.split`, gemma3_mm.py:576-578, v0.11.0), so that view keeps every item's returned rows through
the peak beside their expanded copies (`EXPANDED`): Qwen3-VL-30B-A3B's video 12,288 × 8,192 × 2 B =
0.19 GiB more, Mistral-Small's two images 2 × 3,025 × 5,120 × 2 B = 0.06 GiB (its v0.11.0 log's 2.12 GiB against the
FlashInfer count's 2.00 without them, 2.06 with).

V1 at v0.9.2 (gpu_model_runner.py:2202-2284; v0.9.0.1 :1827-1900 the same) keeps them as returned too, with cdiv(budget, the item's tokens) items
(:2221); v0.10.0 (:2342-2425, read in its wheel) the budget's floor (:2361-2362), kept as returned (:2412).

Counted for four families (the rest stay the text model's fit, assumed: LLaVA, InternVL, Llama-4, Kimi-VL,
Granite-Vision and every other tower in the catalogue, whose processors kvtop does not size): Mistral-Small-3.x
(`_mistral3_item`), Gemma-3 (`_gemma3_item`), Qwen2-VL / Qwen2.5-VL at v0.9.0.1 – v0.12.x (`_qwen2_vl_item`; Qwen2.5-VL's
tower's forward too, encoder_forward.py), Qwen2.5-VL at v0.13.0 – v0.20.x with its tower's forward
(`_qwen25_vl_item`, encoder_forward.py), and the
Qwen3-VL family (Qwen3VLVisionConfig,
Qwen3VLMoeVisionConfig), by vLLM's own processing info
(models/qwen3_vl.py, qwen2_vl.py) over the processor sizes every published Qwen3-VL checkpoint ships
(preprocessor_config.json: images 65,536 – 16,777,216 px; video_preprocessor_config.json: 4,096 – 25,165,824 px;
patch 16, merge 2, temporal 2; search-index ids 52457624213, 59138427633), which kvtop does not read (assumed):
- the image with the most features: 9,999,999² px resized to ≤ 16,777,216 px at a factor of patch × merge = 32
  (transformers qwen2_vl smart_resize): 4,096 × 4,096, (4,096 ÷ 16)² ÷ 2² = 16,384 tokens;
- the video: one item (the profiler asks one per modality: v0.12.0 multimodal/registry.py:167-170) of
  min(frames fitting in max_model_len, 24,576) frames (qwen3_vl.py:123 `_MAX_FRAMES_PER_VIDEO`, qwen2_vl.py:979-1011)
  resized together to ≤ 25,165,824 px (qwen3_vl video smart_resize); through v0.12.0 its tokens are counted × 12.5
  for the timestamps (qwen3_vl.py:693-709, v0.12.0), dropped in v0.13.0. At 24,576 frames: 32 × 32 px frames,
  12,288 tokens, 153,600 counted (a v0.12.0 start's log: "a budget of 153600 tokens, … 1 video items").
- each token's output is the merger's plus the three deepstack levels' (qwen3_vl.py:558-576: the vision section's
  out_hidden_size × 4 wide), in the model dtype; the pixels are
  patches × 3 × temporal × patch² values, cast to the model dtype (v0.11.0 multimodal/processing/context.py).
Not counted: the encoder's own forward but for Qwen2.5-VL at v0.9.0 – v0.20.x (encoder_forward.py: the profile's
peak the larger of it and the text run with what is kept, `EncoderProfile.peak`; Qwen3-VL's is the tower's width
over the patches: at the v0.12.0 start's 49,152 patches, 1,152 wide and a 4,304-wide MLP over TP 2, under 1 GiB with
its pixels, below the text run and what it keeps, 3.9 GiB), other families (their processors' sizes: assumed,
the text model's fit), and launches that change the dummy (`--mm-processor-kwargs`, not read; `--limit-mm-per-prompt`
with a width, height, frames or length: the text model's fit, assumed).
`--limit-mm-per-prompt` counts (mm_limits.py, read v0.11.0 – v0.13.x): a modality at 0 is not profiled (the other
taken, e.g. Qwen3-VL's image where its video is off), and the count caps the items a prompt holds.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

from kvtop.domain.calibration.inputs import CalibrationInputs
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion, era_for
from kvtop.domain.engines.vllm.architectures import TOWER_SPLIT
from kvtop.domain.engines.vllm.encoder_forward import (
    QWEN2_MAX_PIXELS,
    QWEN2_PATCH,
    forward_counted,
    qwen25_dummy,
    stated,
    tower_forward_bytes,
    tower_forward_words,
)
from kvtop.domain.engines.vllm.mm_limits import MMLimits, read_limits, refuse_text_only
from kvtop.domain.engines.vllm.profile_run import batch_limits, engine_era
from kvtop.domain.model import ModelSpec
from kvtop.domain.rounding import ceil_div
from kvtop.domain.wording import GIB

QWEN3_VL_TOWERS = frozenset({"Qwen3VLVisionConfig", "Qwen3VLMoeVisionConfig"})
PATCH, MERGE, TEMPORAL = 16, 2, 2  # Qwen3-VL vision_config (every published checkpoint)
IMAGE_MIN_PIXELS, IMAGE_MAX_PIXELS = 65_536, 16_777_216  # preprocessor_config.json "size"
VIDEO_MIN_PIXELS, VIDEO_MAX_PIXELS = 4_096, 25_165_824  # video_preprocessor_config.json "size"
MAX_FRAMES_PER_VIDEO = 24_576  # qwen3_vl.py _MAX_FRAMES_PER_VIDEO (v0.11.0:91, v0.12.0:123, v0.13.0:132)
DEEPSTACK_LEVELS = 3  # deepstack_visual_indexes: three levels in every Qwen3-VL checkpoint
LARGEST_SIDE = 9_999_999  # get_image_size_with_most_features asks for this square (qwen2_vl.py:961-968)
UNREAD_FLAGS = ("mm-processor-kwargs",)
# Mistral-Small-3.x (HF Mistral3ForConditionalGeneration; its mistral-format params.json builds PixtralForConditionalGeneration
# over the same tower, which kvtop reads as the HF class): the Pixtral tower merged 2 × 2 (Mistral3Config's default)
MISTRAL3_CLASSES = frozenset({"Mistral3ForConditionalGeneration", "PixtralForConditionalGeneration"})
PIXTRAL_MERGE = 2
# Gemma-3 (pan-and-scan off, the default: gemma3_mm.py:104-118 at v0.19.0): one 896-px crop an image, its
# `image_seq_length` 256 embeddings (Gemma3Config.mm_tokens_per_image, not read: assumed) inside transformers'
# full_image_sequence "\n\n<start_of_image>…<end_of_image>\n\n" (processing_gemma3.py:71, 4.57.1): 4 tokens more
GEMMA3_CLASSES = frozenset({"Gemma3ForConditionalGeneration"})
GEMMA3_EMBEDS, GEMMA3_WRAPPING = 256, 4
# Qwen2-VL / Qwen2.5-VL: the processor's published sizes (preprocessor_config.json of every Qwen2-VL / Qwen2.5-VL
# checkpoint: min_pixels 3,136, max_pixels 12,845,056, patch 14, merge 2, temporal 2; search-index ids 5590532836,
# 69393411951), not read (assumed). At v0.9.2 (models/qwen2_vl.py:909-976) the largest image is 9,999,999² px
# resized at a factor of 28 to 3,584 × 3,584: 256 × 256 patches, 16,384 tokens; the video of that image's frames
# (`_qwen2_vl_item`) has more tokens from 3 frames (32,768) and is then profiled, the image on a tie. Outputs
# `out_hidden_size` (Qwen2.5-VL) or the text's width (Qwen2-VL) wide, no deepstack; pixels cast to the model dtype
# (inputs/registry.py:168-171, v0.9.2).
QWEN2_VL_TOWERS = frozenset({"Qwen2VLVisionConfig", "Qwen2_5_VLVisionConfig"})  # its sizes: encoder_forward.QWEN2_*
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
# Mistral-Small-3.x and Gemma-3's dummies: read from v0.10.2 (not at v0.9.2)
LATER_FAMILIES_ERAS: Eras[bool] = Eras((
    Era("", False, "Mistral-Small-3.x and Gemma-3's processing not read before v0.10.2"),
    Era("0.10.2", True, "mistral3.py / pixtral.py, gemma3_mm.py (read at v0.10.2 – v0.19.0)"),
))  # fmt: skip
# the families whose encoder profile is counted, in words (deployment.py's encoder term reads them: one list)
QWEN3_VL, MISTRAL3, GEMMA3, QWEN2_VL = "Qwen3-VL", "Mistral-Small-3.x", "Gemma-3", "Qwen2-VL / Qwen2.5-VL"
COUNTED_FAMILIES = (QWEN3_VL, MISTRAL3, GEMMA3, QWEN2_VL)
# each family's modalities (its processing info's `get_supported_mm_limits`: qwen2_vl.py:868-869, which Qwen3-VL
# inherits; mistral3.py, gemma3_mm.py: image only, v0.11.0)
FAMILY_MODALITIES: Mapping[str, tuple[str, ...]] = {
    QWEN3_VL: ("image", "video"), QWEN2_VL: ("image", "video"), MISTRAL3: ("image",), GEMMA3: ("image",),
}
QWEN3_VL_ERAS: Eras[bool] = Eras((
    Era("", False, "no models/qwen3_vl.py through v0.10.2"),
    Era("0.11.0", True, "first in v0.11.0: models/qwen3_vl.py"),
))  # fmt: skip

# what `profile_run` keeps of each encoder output: "budget" (expanded to the encoder budget's rows), "item" (to the
# item's tokens), "returned", or None where not read
KEPT_ERAS: Eras[str | None] = Eras((
    Era("", None, "not read before v0.9.0.1"),
    Era("0.9.0", "returned", "v0.9.2 v1/worker/gpu_model_runner.py:2270 profile_run: kept as returned; v0.9.0.1 "
                             ":1827-1900 the same (v0.9.1 not read)"),
    Era("0.10.0", "returned", "v0.10.0 v1/worker/gpu_model_runner.py:2412 profile_run: kept as returned (the items "
                              "the budget's floor, :2361-2362)"),
    Era("0.10.1", "returned", "v0.10.1 v1/worker/gpu_model_runner.py:2617-2618 profile_run: kept as returned "
                              "(the items by MultiModalBudget.get_max_items' floor, v1/worker/utils.py:98)"),
    Era("0.10.2", "returned", "v0.10.2 v1/worker/gpu_model_runner.py:3026 profile_run: kept as returned"),
    Era("0.11.0", "budget", "v0.11.0 v1/worker/gpu_model_runner.py:3375-3384 (v0.11.2 :4119): each output shorter "
                            "than the encoder budget expanded to (budget, width)"),
    Era("0.12.0", "item", "v0.12.0 gpu_model_runner.py:4340-4351: each output expanded to (max tokens per item, width)"),
    Era("0.13.0", "returned", "v0.13.0 gpu_model_runner.py:4470-4471 (v0.19.0 :5778-5779): kept as returned; the "
                              "caching loop (`for i, output in enumerate(dummy_encoder_outputs)`) holds the views "
                              "the cache holds, nothing beside"),
))  # fmt: skip
# where KEPT_ERAS expands the outputs ("budget", "item": v0.11.0 – v0.12.x), the expanding loop's variable still names
# the last returned output through the text run, and the outputs being views of one tensor, every item's returned rows
# stay beside their copies (module docstring; `returned_held_bytes`)
EXPANDED = frozenset({"budget", "item"})
# the items profiled: cdiv(budget, the item's tokens) at v0.9.2 (gpu_model_runner.py:2221), else floor
# (MultiModalBudget, v0.12.0 v1/worker/utils.py:21-124)
ITEMS_ROUNDED_UP_ERAS: Eras[bool] = Eras((
    Era("", False, "floor: MultiModalBudget"),
    Era("0.9.0", True, "v0.9.2 gpu_model_runner.py:2221, v0.9.0.1 :1845: cdiv(encoder_budget, max_tokens_per_mm_item)"),
    Era("0.10.0", False, "floor: MultiModalBudget"),
))  # fmt: skip
# the video's tokens counted × 12.5 for its timestamps (qwen3_vl.py get_max_video_tokens)
TIMESTAMP_ERAS: Eras[float] = Eras((
    Era("", 12.5, "v0.11.0 qwen3_vl.py:674, v0.12.0 :708: video_soft_tokens × 12.5"),
    Era("0.13.0", 1.0, "v0.13.0 qwen3_vl.py:710-722: the soft tokens"),
))  # fmt: skip


@dataclass(frozen=True)
class EncoderProfile:
    """The dummy batch vLLM profiles the encoder on, and the bytes it keeps through the text model's run."""

    modality: str
    item_tokens: int  # the budget's count for one item (video: × 12.5 through v0.12.0)
    items: int
    budget: int
    kept_bytes: int  # encoder outputs in encoder_cache plus the dummy pixels, held through the text run
    words: str
    forward_bytes: int = 0  # the tower's own forward with the pixels (encoder_forward.py); 0 where not counted
    forward_words: str = ""

    def peak(self, text_bytes: int) -> int:
        """The profile's torch peak: the text run's with what is kept through it, or the tower's forward before it."""
        return max(text_bytes + self.kept_bytes, self.forward_bytes)

    def peak_words(self, text_bytes: int) -> str:
        """What `peak` took, in words."""
        larger = "the larger" if self.forward_bytes > text_bytes + self.kept_bytes else "below it"
        return f"what {self.words}" + (f"; or {self.forward_words}: {larger}" if self.forward_bytes else "")


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


def largest_image() -> tuple[int, int]:
    """The image with the most features (`get_image_size_with_most_features`): 4,096 × 4,096 at the defaults."""
    return _image_resize(LARGEST_SIDE, LARGEST_SIDE, IMAGE_MIN_PIXELS, IMAGE_MAX_PIXELS)


def video_patches(frames: int) -> int:
    """Patches of a video of `frames` frames of the largest image, resized together."""
    height, width = largest_image()
    return _patches(frames, *_video_resize(frames, height, width))


@cache
def video_frames(max_model_len: int) -> int:
    """`get_num_frames_with_most_features` for one video: the most frames, from 2, whose tokens fit the context
    (qwen2_vl.py `_get_max_video_frames`), at most 24,576."""
    frames = 2
    while frames < MAX_FRAMES_PER_VIDEO and video_patches(frames + 1) // MERGE**2 <= max_model_len:
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


def _qwen3_vl_item(inputs: CalibrationInputs, model: ModelSpec, on: tuple[str, ...]) -> DummyItem:
    """Qwen3-VL's item of the most tokens of the modalities `on`: the image (16,384) or the video (× 12.5 through
    v0.12.0), module docstring."""
    height, width = largest_image()
    image_patches = _patches(1, height, width)
    frames = video_frames(inputs.context_length)
    patches = {"image": image_patches, "video": video_patches(frames)}
    soft = {modality: count // MERGE**2 for modality, count in patches.items()}
    counted = {"image": soft["image"], "video": int(soft["video"] * TIMESTAMP_ERAS.at(inputs.version))}
    counted = {modality: tokens for modality, tokens in counted.items() if modality in on}
    # the first of the largest, as vLLM's max() over the dict
    modality = max(counted, key=lambda name: counted[name])
    out = stated(model, "out_hidden_size", model.hidden_size) * (1 + DEEPSTACK_LEVELS)
    shape = f"{frames:,} frames" if modality == "video" else f"{width:,} × {height:,} px"
    return DummyItem(modality, counted[modality], soft[modality], patches[modality] * 3 * TEMPORAL * PATCH**2, out,
                     f"{shape}: {soft[modality]:,} tokens; merger and {DEEPSTACK_LEVELS} deepstack levels")  # fmt: skip


def _qwen2_vl_item(model: ModelSpec, inputs: CalibrationInputs, on: tuple[str, ...]) -> DummyItem:
    """Qwen2-VL / Qwen2.5-VL's item of the most tokens at v0.9.x – v0.12.x (`QWEN2_VL_ERAS`): the image, 3,584 × 3,584
    px (9,999,999² resized at a factor of patch × merge), 16,384 tokens; or the video of the most frames of that image
    (each frame resized alone, padded to the temporal patch, a pair's tokens an image's) whose tokens fit the context
    (less one image where the release subtracts it and the image is on), at most 16 (14 from v0.11.0: `_get_max_video_frames`,
    `get_num_frames_with_most_features`): from 3 frames (32,768 tokens) it has more than the image and is profiled;
    the image on a tie (first in the dict). Pixels: 3 × temporal × patch² values a patch. At v0.9.x the video built
    is the one fitting `max_num_batched_tokens` instead (`DUMMY_AT_BATCH_TOKENS_ERAS`): its rows and pixels."""
    patch, temporal = stated(model, "patch_size", QWEN2_PATCH), stated(model, "temporal_patch_size", TEMPORAL)
    factor = patch * MERGE
    side = math.floor(math.sqrt(QWEN2_MAX_PIXELS) / factor) * factor  # smart_resize of the 9,999,999² square
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


def _qwen25_vl_item(inputs: CalibrationInputs, model: ModelSpec, on: tuple[str, ...]) -> DummyItem:
    """Qwen2.5-VL's item of the most tokens at v0.13.0 – v0.20.x (encoder_forward.py): the image or the video of the
    largest image's frames; outputs `out_hidden_size` wide, pixels 3 × temporal × patch² values a patch."""
    dummy = qwen25_dummy(model, inputs.context_length, on)
    patch, temporal = stated(model, "patch_size", QWEN2_PATCH), stated(model, "temporal_patch_size", TEMPORAL)
    return DummyItem(dummy.modality, dummy.tokens, dummy.tokens, dummy.patches * 3 * temporal * patch**2,
                     stated(model, "out_hidden_size", model.hidden_size), dummy.shape)  # fmt: skip


def _mistral3_item(model: ModelSpec) -> DummyItem:
    """Mistral-Small-3.x's image: `vision_config.image_size` square (1,540), `patch_size` × the merge 2
    (Mistral3Config.spatial_merge_size, not read: assumed) a token (pixtral.py `get_patch_size`, v0.19.0:961-964),
    rows of ncols tokens and a break (mistral3.py:295-301): 55 × 55 = 3,025 embeddings in 3,080 tokens."""
    side, step = stated(model, "image_size", 1540), stated(model, "patch_size", 14) * PIXTRAL_MERGE
    grid = ceil_div(side, step)
    return DummyItem("image", grid * (grid + 1), grid * grid, 3 * side * side, model.hidden_size,
                     f"{side:,} × {side:,} px: {grid * grid:,} embeddings in {grid * (grid + 1):,} tokens")  # fmt: skip


def _gemma3_item(model: ModelSpec) -> DummyItem:
    """Gemma-3's image: `vision_config.image_size` square (896), 256 embeddings in 260 tokens (`GEMMA3_CLASSES`)."""
    side = stated(model, "image_size", 896)
    return DummyItem("image", GEMMA3_EMBEDS + GEMMA3_WRAPPING, GEMMA3_EMBEDS, 3 * side * side, model.hidden_size,
                     f"{side:,} × {side:,} px: {GEMMA3_EMBEDS} embeddings in {GEMMA3_EMBEDS + GEMMA3_WRAPPING} tokens")  # fmt: skip


def counted_family(
    model: ModelSpec, version: ResolvedVersion, flags: Mapping[str, object], context_length: int
) -> str | None:
    """The family (`COUNTED_FAMILIES`) whose encoder profile kvtop counts for this launch; None where it is not
    counted: another family, a release whose `profile_run` kvtop did not read, a flag that changes the dummy and is
    not read (`UNREAD_FLAGS`), a `--limit-mm-per-prompt` at a release whose reading was not read
    (`mm_limits.LimitsReading.unread`). Raises only InputError, where the release lacks `--limit-mm-per-prompt` or would
    not take its value (`mm_limits.read_limits`), never a not-modelled refusal."""
    if model.tower is None or KEPT_ERAS.at(version) is None:
        return None
    reading = read_limits(flags, version)
    if any(flags.get(name) not in (None, False) for name in UNREAD_FLAGS) or reading.unread:
        return None
    if reading.limits is not None and reading.limits.sized:
        return None
    family = family_of(model)
    if family == QWEN3_VL:
        return family if QWEN3_VL_ERAS.at(version) else None
    if family == QWEN2_VL and QWEN2_VL_ERAS.at(version):
        return QWEN2_VL
    if family == QWEN2_VL:  # Qwen2.5-VL at v0.13.0 – v0.20.x, its tower's forward read
        return QWEN2_VL if forward_counted(model, version) else None
    return family if family is not None and LATER_FAMILIES_ERAS.at(version) else None


def release_not_read(model: ModelSpec, version: ResolvedVersion) -> str | None:
    """Where a Qwen2-VL / Qwen2.5-VL plan is not counted because kvtop did not read the release's dummy or tower:
    the era's words (`QWEN2_VL_ERAS`, and `encoder_forward.QWEN25_VL_FORWARD_ERAS` for Qwen2.5-VL); else None."""
    if family_of(model) != QWEN2_VL or QWEN2_VL_ERAS.at(version) is not None or forward_counted(model, version):
        return None
    era = era_for(QWEN2_VL_ERAS, version)
    return f"Qwen2-VL / Qwen2.5-VL's dummy and tower at vLLM {version.label} not read ({era.source})"


def family_of(model: ModelSpec) -> str | None:
    """The counted family (`COUNTED_FAMILIES`) of a model by its classes, whatever the release (its vision tower's
    config class, else its architecture); None for another family. `counted_family` adds the releases read."""
    tower = model.tower.config_class if model.tower is not None else None
    if tower in QWEN3_VL_TOWERS:
        return QWEN3_VL
    if tower in QWEN2_VL_TOWERS:
        return QWEN2_VL
    if model.architecture in MISTRAL3_CLASSES:
        return MISTRAL3
    if model.architecture in GEMMA3_CLASSES:
        return GEMMA3
    return None


def refuse_unmodelled_limits(inputs: CalibrationInputs) -> None:
    """A multimodal launch whose `--limit-mm-per-prompt` turns every modality off (text-only, the tower dropped:
    mm_limits.py) is not modelled: decided where kvtop knows the family's modalities and reads the flag at the
    release (`refuse_text_only`, `read_limits`); elsewhere the encoder term names it as not modelled."""
    model = inputs.model
    if model is not None and model.multimodal:
        family = family_of(model)
        refuse_text_only(read_limits(inputs.settings.flags, inputs.version).limits,
                         FAMILY_MODALITIES[family] if family is not None else None)


def encoder_profile(inputs: CalibrationInputs) -> EncoderProfile | None:
    """The encoder profile's batch and what it keeps through the text run (module docstring); None where not
    counted (`counted_family`)."""
    model = inputs.model
    flags, context = inputs.settings.flags, inputs.context_length
    family = counted_family(model, inputs.version, flags, context) if model is not None else None
    kept_as = KEPT_ERAS.at(inputs.version)
    if model is None or family is None or kept_as is None or engine_era(inputs) == "v0":
        return None
    limits = read_limits(flags, inputs.version).limits or MMLimits({}, sized=False)
    refuse_text_only(limits, FAMILY_MODALITIES[family])
    if family == QWEN3_VL:
        item = _qwen3_vl_item(inputs, model, limits.on(FAMILY_MODALITIES[family]))
    elif family == QWEN2_VL and QWEN2_VL_ERAS.at(inputs.version):  # v0.9.x – v0.12.x's dummy
        item = _qwen2_vl_item(model, inputs, limits.on(FAMILY_MODALITIES[family]))
    elif family == QWEN2_VL:  # Qwen2.5-VL from v0.13.0, its dummy read with its tower (`counted_family`)
        item = _qwen25_vl_item(inputs, model, limits.on(FAMILY_MODALITIES[family]))
    elif family == MISTRAL3:
        item = _mistral3_item(model)
    else:
        item = _gemma3_item(model)
    tokens, seqs, _ = batch_limits(inputs)
    budget = max(tokens, item.counted_tokens)
    # the items a prompt holds (MultiModalBudget.get_max_items, v1/worker/utils.py:104-109 at v0.11.0); without
    # chunked prefill the requests are capped at tokens ÷ the item's tokens (:114-118), which never binds below
    # `by_budget` (the budget being max(tokens, the item's tokens)): not applied
    per_prompt = max(1, min(limits.count(item.modality), inputs.context_length // item.counted_tokens))
    rounding_up = ITEMS_ROUNDED_UP_ERAS.at(inputs.version)
    by_budget = ceil_div(budget, item.counted_tokens) if rounding_up else budget // item.counted_tokens
    items = max(1, min(by_budget, seqs * per_prompt))
    rows = {"budget": max(budget, item.embed_rows), "item": max(item.counted_tokens, item.embed_rows)}.get(
        kept_as, item.embed_rows
    )
    outputs = items * rows * item.width * model.dtype_bytes
    pixels = items * item.pixel_values * model.dtype_bytes
    returned = returned_held_bytes(inputs.version, items, rows, item, model.dtype_bytes)
    held = f", the returned {items} × {item.embed_rows:,} × {item.width:,} beside their copies" if returned else ""
    kept = outputs + pixels + returned
    words = (
        f"vLLM {inputs.version.label}'s encoder profile keeps {items} {item.modality} item{'s' if items > 1 else ''} "
        f"({item.shape}; a budget of {budget:,}) through the text run: outputs {items} × {rows:,} × {item.width:,}"
        f"{held} and pixels {items} × {item.pixel_values:,}, {model.dtype_bytes} B each ({kept / GIB:.2f} GiB; "
        "the processor's published sizes, assumed)"
    )
    if not forward_counted(model, inputs.version):
        return EncoderProfile(item.modality, item.counted_tokens, items, budget, kept, words)
    tower_tp, rank_items = inputs.layout.tp, items
    if TOWER_SPLIT.for_launch(inputs.settings.flags, inputs.version.text).builds_whole(model.architecture):
        # `--mm-encoder-tp-mode data`: run_dp_sharded_mrope_vision_model (multimodal/utils.py:537 at v0.10.2,
        # models/vision.py:235-340 at v0.11.0, :322 at v0.13.0) hands each rank the images get_load_balance_assignment
        # gives it (largest first to the least loaded: equal items round-robin, rank 0 the most) and runs the whole
        # tower (TP-1 widths) over them, after a torch.cat copy of their pixels
        tower_tp, rank_items = 1, ceil_div(items, inputs.layout.tp)
        pixels += rank_items * item.pixel_values * model.dtype_bytes
    patches = rank_items * item.embed_rows * stated(model, "spatial_merge_size", MERGE) ** 2
    forward = tower_forward_bytes(model, patches, tower_tp, inputs.version) + pixels
    return EncoderProfile(item.modality, item.counted_tokens, items, budget, kept, words, forward,
                          tower_forward_words(model, patches, tower_tp, pixels, inputs.version))  # fmt: skip


def returned_held_bytes(version: ResolvedVersion, items: int, rows: int, item: DummyItem, dtype_bytes: int) -> int:
    """The encoder's returned outputs still held beside their expanded copies (`EXPANDED`): every item's rows, the
    outputs being views of one tensor, where the expansion ran (the kept rows more than the returned); else 0."""
    if KEPT_ERAS.at(version) not in EXPANDED or rows <= item.embed_rows:
        return 0
    return items * item.embed_rows * item.width * dtype_bytes
