"""Qwen2.5-VL's vision tower forward in vLLM's encoder profile (kvtop/domain/engines/vllm/encoder_forward.py), read in
the v0.13.0 and v0.20.1 wheels.

Expected figures are vLLM's code's arithmetic by hand, never the function's output: the largest image is
12,845,056 ÷ 28² = 16,384 tokens (128 × 128, 3,584 px a side; qwen2_vl.py `get_image_size_with_most_features`); a video
of n frames is ceil(n ÷ 2) × 16,384 tokens (frames padded to the temporal patch 2), the most frames fitting
max_model_len, at most 14 (`_MAX_FRAMES_PER_VIDEO`); 4 patches a token; a patch 3 × 2 × 14² = 1,176 pixel values; the
tower's block peak patches × (3 × 1,280 + 3 × 3,420 ÷ TP) × 2 B (qwen2_5_vl.py block and MLP forward).
"""

from __future__ import annotations

from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.calibration import FITS
from kvtop.domain.engines.vllm.calibration_activation import activation_estimate
from kvtop.domain.engines.vllm.encoder_profile import encoder_profile, release_not_read
from tests.data_paths import CONFIGS
from tests.engines.vllm.encoder_inputs import encoder_inputs

QWEN25_VL_7B = CONFIGS / "heldout" / "Qwen--Qwen2.5-VL-7B-Instruct.json"  # vision 1,280 / 3,420, out 3,584



def test_the_video_of_four_frames_at_32k_and_its_tower_forward_at_v0_20_1() -> None:
    """32,768 of context: 4 frames (5 would pad to 6, 3 × 16,384 = 49,152 > 32,768), 32,768 tokens against the image's
    16,384, so the video; budget max(8,192, 32,768) gives 1 item; 131,072 patches through the tower. The syseeker
    start's log (vLLM 0.20.1): "a budget of 32768 tokens, and profiled with 1 video items"."""
    profile = encoder_profile(encoder_inputs(QWEN25_VL_7B, "0.20.1", 32768, "--max-num-batched-tokens", "8192"))
    assert profile is not None
    assert (profile.modality, profile.item_tokens, profile.items, profile.budget) == ("video", 32768, 1, 32768)
    patches = 32768 * 4
    pixels = patches * 1176 * 2
    assert profile.kept_bytes == 32768 * 3584 * 2 + pixels
    assert profile.forward_bytes == patches * (3 * 1280 + 3 * 3420) * 2 + pixels  # 3.73 GiB


def test_the_forward_is_the_peak_where_it_exceeds_the_text_run() -> None:
    """The activation is the larger of the text run with what is kept and the tower's forward (3.73 GiB here, far
    above a 7B text model's fit at 8,192 tokens and 0.51 GiB kept)."""
    inputs = encoder_inputs(QWEN25_VL_7B, "0.20.1", 32768, "--max-num-batched-tokens", "8192")
    assert activation_estimate(inputs, FITS).bytes == 131072 * (3 * 1280 + 3 * 3420) * 2 + 131072 * 1176 * 2


def test_a_short_context_profiles_the_image_and_the_frames_cap_at_14() -> None:
    """At 8,192 one frame (padded to a pair) is 16,384 tokens, a tie with the image, which is first: the image,
    65,536 patches. At 262,144 frames stop at 14: 7 pairs, 114,688 tokens, 458,752 patches."""
    short = encoder_profile(encoder_inputs(QWEN25_VL_7B, "0.13.0", 8192))
    assert short is not None and (short.modality, short.item_tokens, short.items) == ("image", 16384, 1)
    assert short.forward_bytes == 65536 * (3 * 1280 + 3 * 3420) * 2 + 65536 * 1176 * 2
    long = encoder_profile(encoder_inputs(QWEN25_VL_7B, "0.20.1", 262144, "--max-num-batched-tokens", "8192"))
    assert long is not None and (long.modality, long.item_tokens) == ("video", 114688)
    assert long.forward_bytes == 458752 * (3 * 1280 + 3 * 3420) * 2 + 458752 * 1176 * 2


def test_tensor_parallel_splits_the_mlp_only() -> None:
    """MergedColumnParallelLinear splits gate_up (3,420 ÷ 2 = 1,710 a rank); x, residual and the down output stay
    1,280 wide."""
    profile = encoder_profile(encoder_inputs(QWEN25_VL_7B, "0.20.1", 32768, "--max-num-batched-tokens", "8192", tp=2))
    assert profile is not None
    assert profile.forward_bytes == 131072 * (3 * 1280 + 3 * 1710) * 2 + 131072 * 1176 * 2


def test_the_data_parallel_encoder_runs_whole_over_the_ranks_share_of_items() -> None:
    """`--mm-encoder-tp-mode data` (v0.11.0 models/vision.py run_dp_sharded_mrope_vision_model :235-340,
    get_load_balance_assignment): each rank runs the whole tower (the MLP 3,420 wide, not 1,710) over the items it is
    handed, largest first to the least loaded rank; the one video goes to rank 0, whose pixels torch.cat copies
    beside the batch's."""
    flags = ("--max-num-batched-tokens", "8192", "--mm-encoder-tp-mode", "data")
    profile = encoder_profile(encoder_inputs(QWEN25_VL_7B, "0.20.1", 32768, *flags, tp=2))
    assert profile is not None and profile.items == 1
    assert profile.forward_bytes == 131072 * (3 * 1280 + 3 * 3420) * 2 + 2 * 131072 * 1176 * 2
    # v0.13.0 at 8,192 with a 65,536 budget: 4 images of 16,384 tokens, 2 a rank (65,536 patches each)
    flags = ("--max-num-batched-tokens", "65536", "--mm-encoder-tp-mode", "data")
    four = encoder_profile(encoder_inputs(QWEN25_VL_7B, "0.13.0", 8192, *flags, tp=2))
    assert four is not None and (four.modality, four.items) == ("image", 4)
    assert four.forward_bytes == 131072 * (3 * 1280 + 3 * 3420) * 2 + (4 + 2) * 65536 * 1176 * 2


def test_releases_not_read_stay_not_counted() -> None:
    """From v0.21.0 the tower was not read: no profile counted, and a plan names the release not read; none where
    read (v0.10.0 – v0.12.x read in session 59)."""
    assert encoder_profile(encoder_inputs(QWEN25_VL_7B, "0.21.0", 32768)) is None
    model = encoder_inputs(QWEN25_VL_7B, "0.21.0", 32768).model
    assert model is not None
    said = release_not_read(model, ResolvedVersion(text="0.21.0"))
    assert said is not None and "0.21.0 not read" in said
    for version in ("0.10.0", "0.10.2", "0.11.0", "0.11.2", "0.12.0", "0.13.0"):
        assert release_not_read(model, ResolvedVersion(text=version)) is None


def test_v0_10_0_is_v0_9_x_with_the_budget_floored() -> None:
    """v0.10.0 (read in its wheel): qwen2_vl.py's dummy as v0.9.2's (frames fit the context less one image: at
    49,152, 32,768 left, 4 frames, 32,768 tokens), `profile_run` floors budget ÷ the item's tokens
    (gpu_model_runner.py:2361) and keeps the outputs as returned; the tower's attention is v0.9.x's split form
    (TP 1: 9 × 2 B + 2 × 4 B per patch per hidden unit)."""
    profile = encoder_profile(encoder_inputs(QWEN25_VL_7B, "0.10.0", 49152, "--max-num-batched-tokens", "8192"))
    assert profile is not None
    assert (profile.modality, profile.item_tokens, profile.items, profile.budget) == ("video", 32768, 1, 32768)
    patches = 32768 * 4
    assert profile.kept_bytes == 32768 * 3584 * 2 + patches * 1176 * 2
    assert profile.forward_bytes == patches * 1280 * (9 * 2 + 2 * 4) + patches * 1176 * 2


def test_v0_11_0_rotates_q_and_k_concatenated_through_float32() -> None:
    """v0.11.0 qwen2_5_vl.py:335-417: beside x and the normed input (2 × 1,280), the qkv (3 × 1,280), the
    contiguous q, k, v (3 × 1,280), q and k concatenated (2 × 1,280) and the rotated bf16 result (2 × 1,280), two
    float32 copies of the concatenation (2 × 2 × 1,280 × 4 B): 1,280 × (12 × 2 + 16) = 1,280 × 40 B per patch, above
    the MLP's (3 × 1,280 + 3 × 3,420) × 2 B. The dummy: frames fit the whole context, at most 14 (qwen2_vl.py:82):
    262,144 gives 7 pairs, 114,688 tokens (v0.10.2's 16 frames gave 131,072)."""
    short = encoder_profile(encoder_inputs(QWEN25_VL_7B, "0.11.0", 8192))
    assert short is not None and (short.modality, short.item_tokens, short.items) == ("image", 16384, 1)
    assert short.forward_bytes == 65536 * 1280 * 40 + 65536 * 1176 * 2  # 3.27 GiB
    assert 65536 * 1280 * 40 > 65536 * (3 * 1280 + 3 * 3420) * 2
    long = encoder_profile(encoder_inputs(QWEN25_VL_7B, "0.11.0", 262144, "--max-num-batched-tokens", "8192"))
    assert long is not None and (long.modality, long.item_tokens, long.items) == ("video", 114688, 1)
    assert long.forward_bytes == 458752 * 1280 * 40 + 458752 * 1176 * 2


def test_v0_11_0_at_tp_2_rotates_the_rank_heads_after_the_gather() -> None:
    """TP 2: the rotary step beside x and the normed input (2 × 1,280 × 2 B) holds the rank's qkv, q, k, v copies,
    concatenation and result (10 × 640 × 2 B) and two float32 copies (2 × 2 × 640 × 4 B): 22 B per patch per
    hidden unit, above the all-gather's (2 + 1.5 + 6) × 2 = 19 B and the MLP's (3 × 1,280 + 3 × 1,710) × 2 B."""
    profile = encoder_profile(encoder_inputs(QWEN25_VL_7B, "0.11.0", 8192, tp=2))
    assert profile is not None
    assert profile.forward_bytes == 65536 * 1280 * 22 + 65536 * 1176 * 2


def test_v0_11_1_and_v0_11_2_rotate_a_view_of_the_qkv() -> None:
    """v0.11.1 – v0.11.2 qwen2_5_vl.py:362-440: no contiguous copies (the rearranged qk of a batch of one is a view):
    x, normed, qkv and the bf16 result (7 × 1,280 × 2 B) beside two float32 copies (4 × 1,280 × 4 B): 30 B per patch
    per hidden unit at TP 1; at TP 2, (2 + 2.5) × 2 + 8 = 17 B, above the MLP's 14 B (3 × 1,280 + 3 × 1,710) × 2 ÷
    1,280."""
    for version in ("0.11.1", "0.11.2"):
        profile = encoder_profile(encoder_inputs(QWEN25_VL_7B, version, 8192))
        assert profile is not None and profile.forward_bytes == 65536 * 1280 * 30 + 65536 * 1176 * 2
    tp2 = encoder_profile(encoder_inputs(QWEN25_VL_7B, "0.11.2", 8192, tp=2))
    assert tp2 is not None and tp2.forward_bytes == 65536 * 1280 * 17 + 65536 * 1176 * 2


def test_v0_12_0_rotates_in_the_model_dtype_so_the_mlp_is_the_peak() -> None:
    """v0.12.0 qwen2_vl.py:280-287: no float32 copy; the attention's 2 + 5 = 7 widths stay below the MLP's 11: the
    block's peak patches × (3 × 1,280 + 3 × 3,420) × 2 B, as from v0.13.0. The outputs expanded to the item's rows
    (32,768 here, as returned: nothing beside)."""
    profile = encoder_profile(encoder_inputs(QWEN25_VL_7B, "0.12.0", 32768, "--max-num-batched-tokens", "8192"))
    assert profile is not None and (profile.modality, profile.item_tokens, profile.items) == ("video", 32768, 1)
    assert profile.forward_bytes == 131072 * (3 * 1280 + 3 * 3420) * 2 + 131072 * 1176 * 2
    assert profile.kept_bytes == 32768 * 3584 * 2 + 131072 * 1176 * 2


def test_v0_9_x_rotates_q_and_k_through_float32_copies() -> None:
    """v0.9.0 – v0.10.0 and v0.10.1 – v0.10.2 (read in each wheel): at TP 1 the attention's rotary step is the block's peak: x, the normed
    input, qkv (3 × 1,280) and the contiguous q, k, v (3 × 1,280) in bf16, with `t.float()` and the rotary's float32
    output (2 × 1,280 × 4 B) beside the bf16 result (1,280): 65,536 × 1,280 × (9 × 2 + 2 × 4) B = 2.03 GiB, above
    the MLP's 65,536 × (3 × 1,280 + 3 × 3,420) × 2 B = 1.72 GiB. The KServe start on an L4 at v0.9.0.1 (search-index
    id 70974742012): 'Encoder cache will be initialized with a budget of 16384 tokens, and profiled with 1 image
    items of the maximum feature size'."""
    for version in ("0.9.0.1", "0.10.1", "0.10.2"):  # v0.10.1 – v0.10.2: the same attention and rotary (session 58)
        profile = encoder_profile(encoder_inputs(QWEN25_VL_7B, version, 2048))
        assert profile is not None and (profile.modality, profile.item_tokens, profile.items, profile.budget) == (
            "image", 16384, 1, 16384)
        assert profile.forward_bytes == 65536 * 1280 * (9 * 2 + 2 * 4) + 65536 * 1176 * 2


def test_v0_9_x_at_tp_2_gathers_the_qkv() -> None:
    """At TP 2 v0.9.x all-gathers the rank's qkv (3 × 640) into 2 zero-filled parts and their 3 × 1,280
    concatenation: beside x and the normed input, (2 × 1,280 + 1,920 + 2 × 3,840) × 2 B = 19 B per patch per hidden
    unit. Then q, k, v are copied per rank (3 × 640), the views and so the concatenation dropped (qwen2_5_vl.py
    :282-355, v0.10.0 wheel), and one is rotated (640 bf16, 2 × 640 float32): (2 × 1,280 + 1,920 + 1,920 + 640) × 2 B
    + 2 × 640 × 4 B = 15 B; the MLP's (3 × 1,280 + 3 × 1,710) × 2 B = 14 B. The gather is the peak."""
    profile = encoder_profile(encoder_inputs(QWEN25_VL_7B, "0.9.2", 2048, tp=2))
    assert profile is not None
    assert profile.forward_bytes == 65536 * 1280 * 19 + 65536 * 1176 * 2
    assert 65536 * 1280 * 19 > 65536 * (3 * 1280 + 3 * 1710) * 2


def test_the_kserve_l4_start_lands_near_its_log() -> None:
    """Fully planned but the L4's total (22.07 GiB calibrated) and the logged weights: the log's 1.81 GiB of KV
    (33,824 tokens); the text model's activation with the kept encoder cache alone left 0.5 GiB more."""
    from kvtop.domain.calibration.estimate import planned_capacity
    from kvtop.domain.engines.base import MeasuredInputs
    from kvtop.domain.gpus import gpu_total_bytes
    from kvtop.domain.launch import parse_flags
    from kvtop.sources.hub import load_config_file

    settings = parse_flags("vllm", ["--engine-version", "0.9.0.1", "--max-model-len", "2048"])
    plan = planned_capacity(load_config_file(QWEN25_VL_7B), settings, gpu_total_bytes=gpu_total_bytes("L4"),
                            gpu_name="L4", measured=MeasuredInputs(weights_bytes=round(15.6271 * 2**30)))  # fmt: skip
    assert abs(plan.ledger.token_capacity / 33_824 - 1) < 0.05
