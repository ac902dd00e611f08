"""Qwen2.5-VL's dummy item and its vision tower's own forward in vLLM's encoder profile (v0.9.0 – v0.20.x; the dummy
before v0.13.0 is encoder_dummies.py's `qwen2_vl_item`), read from v0.13.0 in the PyPI wheels
vllm-0.13.0-cp38-abi3-manylinux_2_31_x86_64.whl and vllm-0.20.1-1-cp38-abi3-manylinux_2_35_x86_64.whl; before, in the
wheels named below.

`profile_run` runs `embed_multimodal` on the dummy batch before the text model's run (v0.13.0
v1/worker/gpu_model_runner.py:4424-4487; v0.20.1 :5816-5860), so the tower's forward is a peak of its own: the
profile's torch peak is the larger of it and the text run with what the encoder profile keeps (encoder_profile.py).

The dummy (models/qwen2_vl.py, the same at v0.13.0 and v0.20.1): the image with the most features factors the
processor's max_pixels ÷ (patch × merge)² tokens into the squarest pair (`get_image_size_with_most_features`,
v0.13.0 :923-958, v0.20.1 :914-965): 12,845,056 ÷ 28² = 16,384 = 128 × 128, a 3,584² image, 16,384 tokens. The video
is that image's frames, the most whose tokens fit `max_model_len` (`_get_max_video_frames`), at most
`_MAX_FRAMES_PER_VIDEO` 14 (:115 at both), each frame padded to the temporal patch 2 (`_get_vision_info`, v0.20.1
:868-870, v0.13.0 :881-883): 32,768 of context gives 4 frames, 2 × 16,384 = 32,768 tokens, 131,072 patches. The modality with the most
tokens is profiled; on a tie the image before v0.17.0 (first in the dict), the video from it (`mm_tie.py`).

The tower's forward (models/qwen2_5_vl.py, read at v0.13.0 and v0.20.1): each block runs attention on norm1(x), then
`norm2(x, residual=x_attn)` (RMSNorm's fused add, in place: v0.20.1 :480, v0.13.0 :477) and the MLP, whose
`gate_up` (2 × intermediate ÷ TP wide) is still held while `down_proj` writes its output (`forward`, v0.20.1
:302-306, v0.13.0 :296-300; `get_act_and_mul_fn`, :625): the block's peak is the patches × (3 × hidden +
3 × intermediate ÷ TP) in the model dtype (x, residual, the down output; gate_up and its activation). Attention's
copies (qkv and the rotated q, k: about 9 × hidden) stay below it at Qwen2.5-VL's widths (1,280 and 3,420). The
dummy's pixels (patches × 3 × 2 × 14² values, model dtype) are held throughout. Not counted: the rotary tables
(patches × head_dim ÷ 2 float32 values, tens of MiB) and the allocator's rounding. Qwen2-VL's tower (fc1, QuickGELU,
fc2) is not read at these releases: not counted.

v0.9.0 – v0.10.0 (session 58, read in the wheels of v0.9.0, v0.9.0.1, v0.9.1, v0.9.2 and v0.10.0: the tower's
attention, MLP, block and `apply_rotary_pos_emb_vision` the same in each): `profile_run` runs
`get_multimodal_embeddings` on the dummy batch before `_dummy_run` (v0.9.0.1 v1/worker/gpu_model_runner.py:1886-1897),
so the tower's forward is a peak of its own there too. Its MLP has separate `gate_proj` and `up_proj` (qwen2_5_vl.py:
163-195 at v0.9.0.1): `x_gate`, its activation (rebound), `x_up` and their product are held while `down_proj` writes
(3 × intermediate ÷ TP), beside x, the normed input and the output: the same 3 × hidden + 3 × intermediate ÷ TP. Its
attention (:282-355) holds x and the normed input, the qkv output (3 × hidden) and contiguous copies of q, k and v
(3 × hidden), and rotates q, then k, through `apply_rotary_pos_emb_vision` (qwen2_vl.py:231-240: a float32 copy
`t.float()`, vllm_flash_attn's rotary writing a new float32 output, `.type_as(t)` a model-dtype one): at TP 1,
patches × hidden × (9 × dtype + 2 × 4) bytes, 13 widths in a 16-bit model, above the MLP's 11.0 at Qwen2.5-VL's widths.
At TP t > 1 `split_qkv` (:258-280) all-gathers the rank's qkv (3 ÷ t widths) into t zero-filled tensors and
concatenates them (`all_gather_interleave`, :198-214: 3 + 3 widths at once), then q, k, v are views of the
concatenation, copied contiguous per rank (3 ÷ t; the views, the concatenation's last references, are dropped by the
unpacking generator, so it is freed before the rotary: read again in the v0.10.0 wheel, session 59) and rotated on
the rank's heads (1 ÷ t, and 2 ÷ t float32): the peak is the larger of the gather (x, normed, 3 ÷ t + 6) and the
rotary step (x, normed, 3 ÷ t + 3 ÷ t + 1 ÷ t, beside the float32 pair): the gather at TP 2. v0.10.1 – v0.10.2
(read in the wheels of v0.10.1, v0.10.1.1 and v0.10.2) merge the MLP's gate and up (`gate_up_proj`, qwen2_5_vl.py `Qwen2_5_VisionMLP.forward`): `gate_up` (2 × intermediate ÷ TP) stays bound while
its activation (1 ×) and `down_proj` run, the same 3 × intermediate ÷ TP; the attention and its rotary are v0.9.x's, so
the split form holds.

v0.11.0 – v0.12.0 (session 59, read in the wheels of v0.11.0, v0.11.1, v0.11.2 and v0.12.0; the MLP and block as
v0.10.2's, `gate_up_proj` with act_and_mul, RMSNorm's fused add): v0.11.0 (`CONCAT`, qwen2_5_vl.py:335-417) keeps
`split_qkv` and the contiguous q, k, v copies (3 ÷ t), then concatenates q and k (`torch.cat`, 2 ÷ t, :354) and
rotates them at once through `apply_rotary_pos_emb_vision` (qwen2_vl.py:275-284: `t.float()` and the rotary's
float32 output, 2 ÷ t each, beside the model-dtype result, 2 ÷ t): beside x, the normed input and the qkv (3 ÷ t),
2 + 10 ÷ t model-dtype widths and 2 × 2 ÷ t float32 ones, 20 widths at TP 1 in a 16-bit model; at TP > 1 the
all-gather as v0.9.x's. v0.11.1 – v0.11.2 (`QK_VIEW`, :362-440) drop `split_qkv` (no all-gather: the rank's qkv holds
its own heads) and rotate q and k from a view of the qkv (`einops.rearrange` of a batch of one merges a size-1 axis:
torch reshape returns a view, no copy) through the same float32 pair (qwen2_vl.py:313-319): 2 + 5 ÷ t model-dtype
widths and 2 × 2 ÷ t float32, 15 at TP 1. v0.12.0 (:358-430) rotates in the model dtype (qwen2_vl.py:280-287,
vllm_flash_attn ops/triton/rotary.py:188 `empty_like`, `.type_as` a no-op): 2 + 5 ÷ t widths, below the MLP's
peak as from v0.13.0 (`FUSED`). Not counted: the blocks' torch.compile (`compile_mm_encoder`, off by default:
config/compilation.py:324 at v0.11.1; a launch that turns it on is the eager figure, assumed), an attention backend
that materialises the scores (SDPA's math path: kvtop assumes FlashAttention or a memory-efficient kernel).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from kvtop.domain.architectures.config_dtype import FLOAT32_BYTES
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.engines.vllm.mm_tie import profiled_modality
from kvtop.domain.model import ModelSpec
from kvtop.domain.wording import gib

QWEN25_VL_TOWERS = frozenset({"Qwen2_5_VLVisionConfig"})
# the tower's forward as each read release runs it: "split" (separate gate and up, q, k, v copied and rotated through
# float32), "fused" (gate_up and act_and_mul); None where not read
# "concat" (v0.11.0: q and k copied, concatenated and rotated through float32), "qk_view" (v0.11.1 – v0.11.x: q and k
# rotated through float32 from a view of the qkv)
SPLIT, FUSED, CONCAT, QK_VIEW = "split", "fused", "concat", "qk_view"
QWEN25_VL_FORWARD_ERAS: Eras[str | None] = Eras((
    Era("", None, "not read before v0.9.0"),
    Era("0.9.0", SPLIT, "v0.9.0, v0.9.0.1, v0.9.1, v0.9.2 and v0.10.0 models/qwen2_5_vl.py (MLP :163-195, attention "
                        ":282-355 at v0.9.0.1), qwen2_vl.py apply_rotary_pos_emb_vision, gpu_model_runner.py profile_run"),
    Era("0.10.1", SPLIT, "v0.10.1, v0.10.1.1 and v0.10.2 models/qwen2_5_vl.py: the attention, split_qkv, "
                         "all_gather_interleave and qwen2_vl.py apply_rotary_pos_emb_vision as v0.9.x's; the MLP's "
                         "merged gate_up_proj held with its activation while down_proj writes (3 × intermediate ÷ TP, "
                         "as before)"),
    Era("0.11.0", CONCAT, "v0.11.0 models/qwen2_5_vl.py Qwen2_5_VisionAttention.forward :335-417 (split_qkv :311-333, "
                          "q and k concatenated :354-356), qwen2_vl.py apply_rotary_pos_emb_vision :275-284"),
    Era("0.11.1", QK_VIEW, "v0.11.1 and v0.11.2 models/qwen2_5_vl.py Qwen2_5_VisionAttention.forward :362-440 (qk "
                           "rearranged :384-387), qwen2_vl.py apply_rotary_pos_emb_vision :313-319 (t.float())"),
    Era("0.12.0", FUSED, "v0.12.0 models/qwen2_5_vl.py Qwen2_5_VisionAttention.forward :358-430, qwen2_vl.py "
                         "apply_rotary_pos_emb_vision :280-287 (the model dtype): the MLP the block's peak"),
    Era("0.13.0", FUSED, "v0.13.0 and v0.20.1 models/qwen2_vl.py (the dummy), qwen2_5_vl.py (the tower's block), "
                         "v1/worker/gpu_model_runner.py profile_run"),
    Era("0.21.0", None, "not read after v0.20.x"),
))  # fmt: skip
# the split form's attention, in model-dtype widths of hidden (÷ TP where per rank): x and the normed input (2, whole),
# the qkv (3 ÷ TP; at TP > 1, while gathering, the t gathered parts and their concatenation, 3 + 3, freed once q, k, v
# are copied), the contiguous q, k, v (3 ÷ TP) and the rotated one's model-dtype output (1 ÷ TP), beside two float32
# copies of it (`t.float()` and the rotary's output, 2 ÷ TP)
BLOCK_INPUTS, QKV, SPLIT_ROTARY_FLOAT32 = 2, 3, 2
QK_ROTATED = 2  # v0.11.x rotates q and k together: 2 ÷ TP widths each copy
MAX_FRAMES_PER_VIDEO = 14  # qwen2_vl.py:115 at v0.13.0 and v0.20.1
# the Qwen2-VL / Qwen2.5-VL processor's published sizes (preprocessor_config.json: encoder_profile.py says where read;
# min_pixels 3,136 never binds the largest image), its one home: encoder_profile.py imports them; the checkpoint's own
# max_pixels where its preprocessor_config.json was read (`qwen2_max_pixels`)
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


def qwen2_max_pixels(model: ModelSpec) -> int:
    """The image processor's max_pixels vLLM's Qwen2-VL / Qwen2.5-VL dummy reads: the checkpoint's own where its
    preprocessor_config.json was read (`ModelSpec.image_pixels`: `size["longest_edge"]`, `max_pixels` where stated),
    else the published 12,845,056 (assumed). The image processor is the checkpoint's: `_get_vision_info` smart-resizes
    with `image_processor.max_pixels` (models/qwen2_vl.py, v0.9.2 :909-976, v0.11.0 :956-963) and from v0.13.0
    `get_image_size_with_most_features` reads `image_processor.size["longest_edge"]`."""
    return model.image_pixels[1] if model.image_pixels is not None else QWEN2_MAX_PIXELS


def _image_tokens(model: ModelSpec) -> tuple[int, str]:
    """The largest image's tokens and size: max_pixels (`qwen2_max_pixels`) ÷ (patch × merge)² factored into the
    squarest pair (the 200:1 aspect bound never binds at the published sizes)."""
    unit = stated(model, "patch_size", QWEN2_PATCH) * stated(model, "spatial_merge_size", MERGE)
    tokens = qwen2_max_pixels(model) // unit**2
    height = next(d for d in range(math.isqrt(tokens), 0, -1) if tokens % d == 0)
    return tokens, f"{unit * tokens // height:,} × {unit * height:,} px"


def _video_tokens(frames: int, image_tokens: int, temporal: int) -> int:
    """A video of `frames` largest images: frames padded to the temporal patch, a pair's tokens an image's."""
    return max((frames + frames % temporal) // temporal, 1) * image_tokens


def qwen25_dummy(model: ModelSpec, context_length: int, on: tuple[str, ...], version: ResolvedVersion) -> Qwen25Dummy:
    """The item of the most tokens among the modalities `on` (module docstring), a tie broken as `version` breaks it
    (`mm_tie.profiled_modality`: the video from v0.17.0, where frames up to 2 give the image's tokens)."""
    merge, temporal = stated(model, "spatial_merge_size", MERGE), stated(model, "temporal_patch_size", TEMPORAL)
    image, size = _image_tokens(model)
    frames = 1
    while frames < MAX_FRAMES_PER_VIDEO and _video_tokens(frames + 1, image, temporal) <= context_length:
        frames += 1
    video = _video_tokens(frames, image, temporal)
    offered = {name: count for name, count in (("image", image), ("video", video)) if name in on}
    if offered and profiled_modality(offered, version) == "video":
        return Qwen25Dummy("video", video, video * merge**2, f"{frames} frames of {size}: {video:,} tokens")
    return Qwen25Dummy("image", image, image * merge**2, f"{size}: {image:,} tokens")


def _block_widths(model: ModelSpec, tp: int) -> tuple[int, int]:
    """The tower block's hidden width and its MLP's intermediate width on one TP rank (÷ TP), as the config states
    them or the family's defaults."""
    return stated(model, "hidden_size", TOWER_HIDDEN), stated(model, "intermediate_size", TOWER_INTERMEDIATE) // tp


def _mlp_bytes(model: ModelSpec, patches: int, tp: int) -> int:
    """A block's MLP peak over `patches`: x, residual and the down output beside the MLP's three intermediates."""
    hidden, intermediate = _block_widths(model, tp)
    return patches * (BLOCK_WIDTHS * hidden + MLP_WIDTHS * intermediate) * model.dtype_bytes


def _split_attention_bytes(model: ModelSpec, patches: int, tp: int) -> int:
    """The split form's attention peak (module docstring): at TP 1, 9 model-dtype widths of hidden and 2 float32; at
    TP > 1 the larger of the qkv's all-gather and the rotary step."""
    hidden, dtype = stated(model, "hidden_size", TOWER_HIDDEN), model.dtype_bytes
    held = BLOCK_INPUTS + QKV / tp + QKV / tp  # before the rotary: inputs, qkv, the copies (the concatenation freed)
    rotary = patches * hidden * (dtype * (held + 1 / tp) + SPLIT_ROTARY_FLOAT32 * FLOAT32_BYTES / tp)
    gather = patches * hidden * dtype * (BLOCK_INPUTS + QKV / tp + 2 * QKV) if tp > 1 else 0
    return round(max(rotary, gather))


def _float32_rotary_attention_bytes(model: ModelSpec, patches: int, tp: int, form: str) -> int:
    """v0.11.x's attention peak (module docstring): q and k rotated together through two float32 copies (2 ÷ TP
    each) beside x, the normed input, the qkv and the rotated result; v0.11.0 (`CONCAT`) holds the contiguous q, k, v
    and their concatenation too, and at TP > 1 all-gathers the qkv as v0.9.x does."""
    hidden, dtype = stated(model, "hidden_size", TOWER_HIDDEN), model.dtype_bytes
    copies = QKV / tp + QK_ROTATED / tp if form == CONCAT else 0  # the contiguous q, k, v and q, k concatenated
    held = BLOCK_INPUTS + QKV / tp + copies + QK_ROTATED / tp
    rotary = patches * hidden * (dtype * held + SPLIT_ROTARY_FLOAT32 * FLOAT32_BYTES * QK_ROTATED / tp)
    gather = patches * hidden * dtype * (BLOCK_INPUTS + QKV / tp + 2 * QKV) if form == CONCAT and tp > 1 else 0
    return round(max(rotary, gather))


def _attention_bytes(model: ModelSpec, patches: int, tp: int, form: str | None) -> int:
    """The attention's peak in the forms where it can pass the MLP's (split, concat, qk_view); 0 in the fused one."""
    if form == SPLIT:
        return _split_attention_bytes(model, patches, tp)
    if form in (CONCAT, QK_VIEW):
        return _float32_rotary_attention_bytes(model, patches, tp, form)
    return 0


def tower_forward_bytes(model: ModelSpec, patches: int, tp: int, version: ResolvedVersion) -> int:
    """The tower's block peak over `patches` (module docstring): the MLP's, or the attention's rotary step (or
    all-gather) where larger."""
    form = QWEN25_VL_FORWARD_ERAS.at(version)
    return max(_mlp_bytes(model, patches, tp), _attention_bytes(model, patches, tp, form))


def tower_forward_words(model: ModelSpec, patches: int, tp: int, pixels: int, version: ResolvedVersion) -> str:
    """The forward's peak in words, with its figures."""
    total = tower_forward_bytes(model, patches, tp, version) + pixels
    hidden, intermediate = _block_widths(model, tp)
    if total - pixels > _mlp_bytes(model, patches, tp):
        form = QWEN25_VL_FORWARD_ERAS.at(version)
        gathered = " (all-gathered at TP > 1)" if tp > 1 and form in (SPLIT, CONCAT) else ""
        copies = " and q, k, v copies" if form in (SPLIT, CONCAT) else ""
        part = (f"attention: x, the normed input, the qkv{gathered}{copies} of {hidden:,} ÷ TP {tp}, rotated "
                "through float32")
    else:
        part = f"x, residual and MLP ({BLOCK_WIDTHS} × {hidden:,} + {MLP_WIDTHS} × {intermediate:,} wide)"
    return (f"vLLM {version.label}'s encoder profile runs the vision tower over {patches:,} patches first: a block's "
            f"{part} and the pixels, {gib(total)} (encoder_forward.py)")  # fmt: skip


def forward_counted(model: ModelSpec, version: ResolvedVersion) -> bool:
    """Whether kvtop counts the tower's forward: Qwen2.5-VL at the releases read (`QWEN25_VL_FORWARD_ERAS`)."""
    return (model.tower is not None and model.tower.config_class in QWEN25_VL_TOWERS
            and QWEN25_VL_FORWARD_ERAS.at(version) is not None)  # fmt: skip
