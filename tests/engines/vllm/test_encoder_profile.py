"""vLLM's encoder profile: what a multimodal model's `profile_run` keeps through the text model's run
(kvtop/domain/engines/vllm/encoder_profile.py, docs/engines/vllm.md §10).

Expected figures are the engine's own log lines and vLLM's code's arithmetic by hand (the docstrings), never the
function's output. The v0.12.0 start: Zzsf11/VideoCuttingAgent `vllm_serve.log` at dbf8adf3 (tests/data/calibration/
vllm.jsonl `videocuttingagent-qwen3-vl-30b-a3b-2xh100-tp2-v0120`): "Encoder cache will be initialized with a budget
of 153600 tokens, and profiled with 1 video items of the maximum feature size", "GPU KV cache size: 813,152 tokens".
"""

from __future__ import annotations

import pytest

from kvtop.domain.calibration.estimate import planned_capacity
from kvtop.domain.calibration.terms import Term
from kvtop.domain.engines.vllm.encoder_dummies import largest_image, video_frames, video_patches
from kvtop.domain.engines.vllm.encoder_profile import encoder_profile
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.sources.hub import load_config_file
from tests.data_paths import CONFIGS
from tests.engines.vllm.encoder_inputs import encoder_inputs

QWEN3_VL_30B = CONFIGS / "heldout" / "Qwen--Qwen3-VL-30B-A3B-Instruct.json"
MISTRAL_SMALL = CONFIGS.parent / "calibration" / "configs" / "mistralai--Mistral-Small-3.1-24B-Instruct-2503.json"
GEMMA3_27B = CONFIGS / "google--gemma-3-27b-it.json"
QWEN25_VL_7B = CONFIGS / "heldout" / "Qwen--Qwen2.5-VL-7B-Instruct.json"
LOGGED_TOKENS = 813_152



def test_qwen3_vl_dummy_video_at_v0_12_0_is_the_logged_budget() -> None:
    """9,999,999² px resized to ≤ 16,777,216 px at a factor of 32: 4,096²; at 65,536 tokens of context the video
    takes the 24,576-frame cap (tokens stay ≤ 12,288 until 32-px frames), resized to ≤ 25,165,824 px together:
    beta = √(24,576 × 4,096² ÷ 25,165,824) = 128, 32 × 32 px frames, 12,288 × 2 × 2 = 49,152 patches, 12,288 tokens,
    × 12.5 = 153,600: the log's budget, one item (153,600 // 153,600)."""
    assert largest_image() == (4096, 4096)
    assert video_frames(65536) == 24576
    assert video_patches(24576) == 49152
    profile = encoder_profile(encoder_inputs(QWEN3_VL_30B, "0.12.0", 65536, "--max-num-seqs", "256", tp=2))
    assert profile is not None
    assert (profile.modality, profile.budget, profile.items) == ("video", 153_600, 1)
    # each output expanded to 153,600 rows of 2,048 × 4 (merger + 3 deepstack levels) bf16, the returned 12,288 rows
    # still named by the expanding loop's variable (gpu_model_runner.py:4343, rebound at :4364), and the pixels:
    # 153,600 × 8,192 × 2 = 2,516,582,400 B; 12,288 × 8,192 × 2 = 201,326,592 B; 49,152 × (3 × 2 × 16²) × 2 =
    # 150,994,944 B
    assert profile.kept_bytes == 2_516_582_400 + 201_326_592 + 150_994_944


def test_qwen3_vl_from_v0_13_0_profiles_the_image() -> None:
    """v0.13.0 drops the × 12.5: the image's (4,096 ÷ 16)² ÷ 4 = 16,384 tokens beat the video's 12,288; budget
    max(8,192, 16,384), one item kept as returned: 16,384 × 8,192 × 2 + 65,536 × 1,536 × 2 B."""
    profile = encoder_profile(encoder_inputs(QWEN3_VL_30B, "0.13.0", 65536, tp=2))
    assert profile is not None
    assert (profile.modality, profile.budget, profile.items) == ("image", 16_384, 1)
    assert profile.kept_bytes == 16_384 * 8_192 * 2 + 65_536 * 1_536 * 2


def test_the_qwen3_vl_start_is_planned_within_its_interval() -> None:
    """The plan of the v0.12.0 start lands within 5 % of the logged 813,152 tokens and its interval holds it (the text
    model's fit alone planned 879,984, +8.2 %, its interval 842,816 – 917,168 missing)."""
    model = load_config_file(QWEN3_VL_30B)
    settings = parse_flags("vllm", ["--engine-version", "0.12.0", "--trust-remote-code", "--max-model-len", "65536",
                                    "--tensor-parallel-size", "2", "--max-num-seqs", "256"])  # fmt: skip
    plan = planned_capacity(model, settings, gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100")
    assert abs(plan.ledger.engine.token_capacity / LOGGED_TOKENS - 1) < 0.05
    assert plan.token_capacity_min <= LOGGED_TOKENS <= plan.token_capacity_max
    activation = plan.estimate.term(Term.ACTIVATION)
    assert activation is not None and activation.source == "assumed"
    assert "encoder profile keeps 1 video item" in activation.basis


def test_mistral_small_keeps_two_images_expanded_to_the_budget_at_v0_11_0() -> None:
    """1,540 px ÷ (14 × 2) = 55 tokens a side: 3,025 embeddings in 55 × 56 = 3,080 tokens (a break a row); the
    8,192-token budget holds 8,192 // 3,080 = 2; v0.11.0 expands each output to the budget's 8,192 rows of 5,120
    (gpu_model_runner.py:3369-3384): 2 × 8,192 × 5,120 × 2 + 2 × 3 × 1,540² × 2 B, and the two returned 3,025-row
    outputs (views of one tensor, pixtral.py:422) the loop's variable still holds (:3377, rebound at :3397): 2 × 3,025
    × 5,120 × 2 B; v0.12.0 to the item's 3,080 rows, the returned ones held too; v0.19.0 keeps the 3,025 rows."""
    old = encoder_profile(encoder_inputs(MISTRAL_SMALL, "0.11.0", 16000))
    new = encoder_profile(encoder_inputs(MISTRAL_SMALL, "0.19.0", 8192))
    assert old is not None and new is not None
    assert (old.budget, old.items) == (8192, 2)
    returned = 2 * 3025 * 5120 * 2
    assert old.kept_bytes == 2 * 8192 * 5120 * 2 + returned + 2 * 3 * 1540**2 * 2
    middle = encoder_profile(encoder_inputs(MISTRAL_SMALL, "0.12.0", 16000))
    assert middle is not None and middle.kept_bytes == 2 * 3080 * 5120 * 2 + returned + 2 * 3 * 1540**2 * 2
    assert new.kept_bytes == 2 * 3025 * 5120 * 2 + 2 * 3 * 1540**2 * 2


def test_gemma3_keeps_31_images() -> None:
    """256 embeddings in 260 tokens an 896-px image: 8,192 // 260 = 31 items, 31 × 256 × 5,376 × 2 + 31 × 3 × 896² ×
    2 B (0.22 GiB) beside the text run: llm-d-planner's v0.19.0 log prints 3.99 GiB against the sampler's 3.72."""
    profile = encoder_profile(encoder_inputs(GEMMA3_27B, "0.19.0", 8192))
    assert profile is not None
    assert (profile.budget, profile.items) == (8192, 31)
    assert profile.kept_bytes == 31 * 256 * 5376 * 2 + 31 * 3 * 896**2 * 2


def test_not_counted_where_the_dummy_is_not_read() -> None:
    """`--mm-processor-kwargs` changes the dummy (not read: the text model's fit, said so; `--limit-mm-per-prompt`:
    test_mm_limits.py); releases before v0.10.2 are not read (but Qwen2-VL / Qwen2.5-VL at v0.9.2); Qwen3-VL has no
    class before v0.11.0."""
    assert encoder_profile(encoder_inputs(QWEN3_VL_30B, "0.12.0", 65536, "--mm-processor-kwargs", '{"fps": 1}')) is None
    assert encoder_profile(encoder_inputs(MISTRAL_SMALL, "0.10.1", 8192)) is None
    assert encoder_profile(encoder_inputs(QWEN3_VL_30B, "0.10.2", 65536)) is None
    assert encoder_profile(encoder_inputs(MISTRAL_SMALL, "0.9.2", 8192)) is None  # its dummy read from v0.10.2 only
    assert encoder_profile(encoder_inputs(QWEN25_VL_7B, "0.21.0", 8192)) is None  # not read after v0.20.x


@pytest.mark.parametrize(("version", "context", "modality", "tokens", "built"), [
    ("0.9.2", 49152, "video", 32_768, 16_384), ("0.9.2", 49151, "image", 16_384, 16_384),
    ("0.10.0", 49152, "video", 32_768, 32_768), ("0.10.1", 32768, "image", 16_384, 16_384),
    ("0.10.2", 32768, "video", 32_768, 32_768), ("0.10.2", 262144, "video", 131_072, 131_072),
    ("0.11.0", 262144, "video", 114_688, 114_688),
])  # fmt: skip
def test_the_v0_9_to_v0_11_dummy_video(version: str, context: int, modality: str, tokens: int, built: int) -> None:
    """qwen2_vl.py `get_num_frames_with_most_features` (v0.9.0.1, v0.9.2, v0.10.0, v0.10.1): the video's frames are the
    most whose tokens fit the context less one largest image (16,384 tokens), at most 16, a temporal pair of frames
    16,384 tokens: at 49,152, 32,768 left: 4 frames, 32,768 tokens, more than the image; at 49,151, 2 frames, a tie,
    the image. v0.10.2 fits the whole context: 32,768 gives 4 frames; 262,144 is capped at 16 frames, 8 × 16,384;
    v0.11.0 at 14 frames (qwen2_vl.py:82), 7 × 16,384. v0.9.x builds the video it profiles at seq_len =
    max_num_batched_tokens (8,192 here, an H100 server's default): one frame, 16,384 tokens (gpu_model_runner.py:2246
    at v0.9.2); v0.10.0 at the counted tokens (:2388). Kept: the built video's outputs (3,584 wide) and pixels
    (tokens × 2² patches × 3 × 2 × 14² values), 2 B each."""
    profile = encoder_profile(encoder_inputs(QWEN25_VL_7B, version, context))
    assert profile is not None and (profile.modality, profile.item_tokens, profile.items) == (modality, tokens, 1)
    assert profile.kept_bytes == built * 3584 * 2 + built * 4 * 3 * 2 * 14 * 14 * 2


def test_v0_9_2_builds_the_video_fitting_the_batch_tokens() -> None:
    """v0.9.2 at 131,072 of context and 65,536 batched tokens: counted, 131,072 − 16,384 fits 7 pairs (14 frames),
    114,688 tokens, the budget max(65,536, 114,688) gives cdiv = 1 item; built at seq_len 65,536 with one video
    (no image less): 8 frames, 4 pairs, 65,536 tokens, 262,144 patches through the tower (split form, TP 1:
    1,280 × (9 × 2 + 2 × 4) B a patch)."""
    profile = encoder_profile(encoder_inputs(QWEN25_VL_7B, "0.9.2", 131072, "--max-num-batched-tokens", "65536"))
    assert profile is not None
    assert (profile.modality, profile.item_tokens, profile.items, profile.budget) == ("video", 114688, 1, 114688)
    assert profile.kept_bytes == 65536 * 3584 * 2 + 65536 * 4 * 1176 * 2
    assert profile.forward_bytes == 262144 * 1280 * 26 + 65536 * 4 * 1176 * 2


def test_qwen2_5_vl_at_v0_9_2_keeps_one_largest_image() -> None:
    """v0.9.2 (models/qwen2_vl.py:909-976): 9,999,999² px resized to ≤ 12,845,056 px at a factor of 14 × 2 = 28:
    √12,845,056 = 3,584 = 128 × 28, so 3,584² px, 256² = 65,536 patches, 16,384 tokens; the budget max(2,048 (an
    L4's `vllm serve` default), 16,384) = 16,384, cdiv(16,384, 16,384) = 1 item (gpu_model_runner.py:2218-2221),
    kept as returned (:2270): 16,384 × 3,584 (out_hidden_size) × 2 B, and the pixels cast to bf16
    (inputs/registry.py:168-171): 65,536 × (3 × 2 × 14²) × 2 B."""
    profile = encoder_profile(encoder_inputs(QWEN25_VL_7B, "0.9.2", 8192, tp=2))
    assert profile is not None
    assert (profile.modality, profile.budget, profile.items) == ("image", 16_384, 1)
    assert profile.kept_bytes == 16_384 * 3_584 * 2 + 65_536 * 1_176 * 2


def test_the_qwen2_5_vl_l4_start_is_planned_within_5_percent() -> None:
    """The OpenShift AI walkthrough's v0.9.2 start on two L4 (tests/data/calibration/vllm.jsonl
    `file71589812318-qwen2.5-vl-7b-tp2-l4-v092`): 'GPU KV cache size: 375,968 tokens'; the text model's fit alone
    planned 397,904 (+5.8 %)."""
    model = load_config_file(QWEN25_VL_7B)
    settings = parse_flags("vllm", ["--engine-version", "0.9.2", "--max-model-len", "8192",
                                    "--tensor-parallel-size", "2"])  # fmt: skip
    plan = planned_capacity(model, settings, gpu_total_bytes=gpu_total_bytes("L4"), gpu_name="L4")
    logged = 375_968
    assert abs(plan.ledger.engine.token_capacity / logged - 1) < 0.05
    assert plan.token_capacity_min <= logged <= plan.token_capacity_max


def test_the_returned_outputs_are_held_only_where_vllm_expands_them() -> None:
    """v0.11.0 – v0.12.x expand each output in a loop whose variable (`for output in dummy_encoder_outputs`) is rebound
    only by `output = self._dummy_sampler_run(...)`, after the peak (v0.11.0 gpu_model_runner.py:3377/:3397, v0.11.2
    :4121/:4142, v0.12.0 :4343/:4364); v0.13.0 keeps the outputs as returned: its caching loop
    (`for i, output in enumerate(dummy_encoder_outputs)`, :4470-4471) keeps its variable too, but that names a view the
    cache already holds, so nothing beside. The
    Qwen3-VL-30B-A3B refusal at v0.11.0 (one A100, 262,144 tokens of context, tests/data/calibration/vllm.jsonl
    `file54765285989-…`): one video of 12,288 rows × 8,192, expanded to the 153,600 budget: the returned
    12,288 × 8,192 × 2 = 201,326,592 B held beside; at v0.13.0 the image, kept as returned, nothing beside."""
    at_v011 = encoder_profile(encoder_inputs(QWEN3_VL_30B, "0.11.0", 262144))
    at_v013 = encoder_profile(encoder_inputs(QWEN3_VL_30B, "0.13.0", 262144))
    assert at_v011 is not None and at_v013 is not None
    assert at_v011.kept_bytes == 153_600 * 8_192 * 2 + 12_288 * 8_192 * 2 + 49_152 * 1_536 * 2
    assert "the returned 1 × 12,288 × 8,192 beside their copies" in at_v011.words
    assert at_v013.kept_bytes == 16_384 * 8_192 * 2 + 65_536 * 1_536 * 2


def test_qwen2_5_vl_at_v0_9_0_1_profiles_the_logged_image() -> None:
    """v0.9.0.1 runs the same profile as v0.9.2 (gpu_model_runner.py:1827-1900: cdiv(budget, the item's tokens) items,
    the outputs kept as returned; qwen2_vl.py:896-1003 the same largest image). Its KServe start on an L4
    (tests/data/calibration/vllm.jsonl `file70974742012-qwen2.5-vl-7b-l4-kserve-v0901`, --max-model-len 2048) logged
    'Encoder cache will be initialized with a budget of 16384 tokens, and profiled with 1 image items of the maximum
    feature size'; before v0.9.0 it is not read."""
    profile = encoder_profile(encoder_inputs(QWEN25_VL_7B, "0.9.0.1", 2048))
    assert profile is not None
    assert (profile.modality, profile.budget, profile.items) == ("image", 16_384, 1)
    assert profile.kept_bytes == 16_384 * 3_584 * 2 + 65_536 * 1_176 * 2
    assert encoder_profile(encoder_inputs(QWEN25_VL_7B, "0.8.5", 2048)) is None
