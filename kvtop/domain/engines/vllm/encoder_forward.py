"""Qwen2.5-VL's dummy item and its vision tower's own forward in vLLM's encoder profile (v0.13.0 – v0.20.x), read in
the PyPI wheels vllm-0.13.0-cp38-abi3-manylinux_2_31_x86_64.whl and vllm-0.20.1-1-cp38-abi3-manylinux_2_35_x86_64.whl.

`profile_run` runs `embed_multimodal` on the dummy batch before the text model's run (v0.13.0
v1/worker/gpu_model_runner.py:4424-4487; v0.20.1 :5816-5860), so the tower's forward is a peak of its own: the
profile's torch peak is the larger of it and the text run with what the encoder profile keeps (encoder_profile.py).

The dummy (models/qwen2_vl.py, the same at v0.13.0 and v0.20.1): the image with the most features factors the
processor's max_pixels ÷ (patch × merge)² tokens into the squarest pair (`get_image_size_with_most_features`,
v0.13.0 :923-958, v0.20.1 :914-965): 12,845,056 ÷ 28² = 16,384 = 128 × 128, a 3,584² image, 16,384 tokens. The video
is that image's frames, the most whose tokens fit `max_model_len` (`_get_max_video_frames`), at most
`_MAX_FRAMES_PER_VIDEO` 14 (:115 at both), each frame padded to the temporal patch 2 (`_get_vision_info`, v0.20.1
:868-870, v0.13.0 :881-883): 32,768 of context gives 4 frames, 2 × 16,384 = 32,768 tokens, 131,072 patches. The modality with the most
tokens is profiled, the image on a tie (first in the dict).

The tower's forward (models/qwen2_5_vl.py, read at v0.13.0 and v0.20.1): each block runs attention on norm1(x), then
`norm2(x, residual=x_attn)` (RMSNorm's fused add, in place: v0.20.1 :480, v0.13.0 :477) and the MLP, whose
`gate_up` (2 × intermediate ÷ TP wide) is still held while `down_proj` writes its output (`forward`, v0.20.1
:302-306, v0.13.0 :296-300; `get_act_and_mul_fn`, :625): the block's peak is the patches × (3 × hidden +
3 × intermediate ÷ TP) in the model dtype (x, residual, the down output; gate_up and its activation). Attention's
copies (qkv and the rotated q, k: about 9 × hidden) stay below it at Qwen2.5-VL's widths (1,280 and 3,420). The
dummy's pixels (patches × 3 × 2 × 14² values, model dtype) are held throughout. Not counted: the rotary tables
(patches × head_dim ÷ 2 float32 values, tens of MiB) and the allocator's rounding. Qwen2-VL's tower (fc1, QuickGELU,
fc2) is not read at these releases: not counted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.model import ModelSpec
from kvtop.domain.wording import GIB

QWEN25_VL_TOWERS = frozenset({"Qwen2_5_VLVisionConfig"})
# releases whose Qwen2.5-VL dummy and tower forward were read
QWEN25_VL_FORWARD_ERAS: Eras[bool] = Eras((
    Era("", False, "not read before v0.13.0"),
    Era("0.13.0", True, "v0.13.0 and v0.20.1 models/qwen2_vl.py (the dummy), qwen2_5_vl.py (the tower's block), "
                        "v1/worker/gpu_model_runner.py profile_run"),
    Era("0.21.0", False, "not read after v0.20.x"),
))  # fmt: skip
MAX_FRAMES_PER_VIDEO = 14  # qwen2_vl.py:115 at v0.13.0 and v0.20.1
# the Qwen2-VL / Qwen2.5-VL processor's published sizes (preprocessor_config.json: encoder_profile.py says where read;
# min_pixels 3,136 never binds the largest image), its one home: encoder_profile.py imports them
QWEN2_PATCH, QWEN2_MAX_PIXELS = 14, 12_845_056
MERGE, TEMPORAL = 2, 2
BLOCK_WIDTHS, MLP_WIDTHS = 3, 3  # the block's peak: 3 × hidden + 3 × intermediate ÷ TP (module docstring)
TOWER_HIDDEN, TOWER_INTERMEDIATE = 1280, 3420  # Qwen2.5-VL's tower widths where vision_config states none (docstring)


@dataclass(frozen=True)
class Qwen25Dummy:
    """The dummy item profiled: its modality, tokens, patches and, in words, its shape."""

    modality: str
    tokens: int
    patches: int
    shape: str


def stated(model: ModelSpec, key: str, default: int) -> int:
    """`vision_config[key]` where the config states it, else the family's default."""
    value = model.vision.field(key) if model.vision is not None else None
    return value if value is not None else default


def _image_tokens(model: ModelSpec) -> tuple[int, str]:
    """The largest image's tokens and size: max_pixels ÷ (patch × merge)² factored into the squarest pair (the
    200:1 aspect bound never binds at the published sizes)."""
    unit = stated(model, "patch_size", QWEN2_PATCH) * stated(model, "spatial_merge_size", MERGE)
    tokens = QWEN2_MAX_PIXELS // unit**2
    height = next(d for d in range(math.isqrt(tokens), 0, -1) if tokens % d == 0)
    return tokens, f"{unit * tokens // height:,} × {unit * height:,} px"


def _video_tokens(frames: int, image_tokens: int, temporal: int) -> int:
    """A video of `frames` largest images: frames padded to the temporal patch, a pair's tokens an image's."""
    return max((frames + frames % temporal) // temporal, 1) * image_tokens


def qwen25_dummy(model: ModelSpec, context_length: int, on: tuple[str, ...]) -> Qwen25Dummy:
    """The item of the most tokens among the modalities `on` (module docstring)."""
    merge, temporal = stated(model, "spatial_merge_size", MERGE), stated(model, "temporal_patch_size", TEMPORAL)
    image, size = _image_tokens(model)
    frames = 1
    while frames < MAX_FRAMES_PER_VIDEO and _video_tokens(frames + 1, image, temporal) <= context_length:
        frames += 1
    video = _video_tokens(frames, image, temporal)
    if "video" in on and ("image" not in on or video > image):
        return Qwen25Dummy("video", video, video * merge**2, f"{frames} frames of {size}: {video:,} tokens")
    return Qwen25Dummy("image", image, image * merge**2, f"{size}: {image:,} tokens")


def _block_widths(model: ModelSpec, tp: int) -> tuple[int, int]:
    """The tower block's hidden width and its MLP's intermediate width on one TP rank (÷ TP), as the config states
    them or the family's defaults."""
    return stated(model, "hidden_size", TOWER_HIDDEN), stated(model, "intermediate_size", TOWER_INTERMEDIATE) // tp


def tower_forward_bytes(model: ModelSpec, patches: int, tp: int) -> int:
    """The tower's block peak over `patches` (module docstring), in the model dtype."""
    hidden, intermediate = _block_widths(model, tp)
    return patches * (BLOCK_WIDTHS * hidden + MLP_WIDTHS * intermediate) * model.dtype_bytes


def tower_forward_words(model: ModelSpec, patches: int, tp: int, pixels: int, version: ResolvedVersion) -> str:
    """The forward's peak in words, with its figures."""
    total = tower_forward_bytes(model, patches, tp) + pixels
    hidden, intermediate = _block_widths(model, tp)
    return (f"vLLM {version.label}'s encoder profile runs the vision tower over {patches:,} patches first: a block's "
            f"x, residual and MLP ({BLOCK_WIDTHS} × {hidden:,} + {MLP_WIDTHS} × {intermediate:,} wide) and the pixels, "
            f"{total / GIB:.2f} GiB "
            "(encoder_forward.py)")  # fmt: skip


def forward_counted(model: ModelSpec, version: ResolvedVersion) -> bool:
    """Whether kvtop counts the tower's forward: Qwen2.5-VL at the releases read (`QWEN25_VL_FORWARD_ERAS`)."""
    return model.tower is not None and model.tower.config_class in QWEN25_VL_TOWERS and QWEN25_VL_FORWARD_ERAS.at(version)
