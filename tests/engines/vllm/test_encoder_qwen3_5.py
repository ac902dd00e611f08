"""Qwen3.5's encoder profile in vLLM (v0.17.0 on): Qwen3-VL's dummy and vision transformer with no deepstack level
(encoder_profile.py `QWEN3_5_TOWERS`, encoder_dummies.py `deepstack_levels`, encoder_forward_qwen3.py).

Expected figures are vLLM's code's arithmetic by hand over the checkpoints' config.json (Qwen/Qwen3.5-27B's
vision_config: hidden_size 1,152, intermediate_size 4,304, out_hidden_size 5,120, patch 16, merge 2, temporal 2,
deepstack_visual_indexes []) and the LAMBO starts' logs (tests/data/calibration/vllm.jsonl, leadawon-lambo-*), never
the functions' output.
"""

from __future__ import annotations

import pytest

from benchmarks.calibration.corpus import by_id
from kvtop.domain.engines.vllm.encoder_dummies import deepstack_levels
from kvtop.domain.engines.vllm.encoder_profile import encoder_profile
from kvtop.sources.hub import load_config_file
from tests.data_paths import CONFIGS
from tests.engines.vllm.encoder_inputs import encoder_inputs

QWEN3_5_27B = CONFIGS / "heldout" / "Qwen--Qwen3.5-27B.json"
QWEN3_VL_30B = CONFIGS / "heldout" / "Qwen--Qwen3-VL-30B-A3B-Instruct.json"
SEQS1 = "leadawon-lambo-qwen3.5-27b-4xrtx3090-v0190-tp4-eager-len50000-u092-seqs1"
GIB = 1 << 30


def test_deepstack_levels_are_the_configs_list() -> None:
    """Qwen3_VisionTransformer concatenates one output per deepstack_visual_indexes entry to the merger's: Qwen3-VL's
    config states [8, 16, 24] (3), Qwen3.5's [] (0)."""
    assert deepstack_levels(load_config_file(QWEN3_VL_30B)) == 3
    assert deepstack_levels(load_config_file(QWEN3_5_27B)) == 0


def test_qwen3_5_27b_profile_at_v0_19_0_tp4_one_seq() -> None:
    """One image (min(16,384 budget ÷ 16,384, 1 seq) = 1): 4,096² px, 65,536 patches, 16,384 tokens. Kept: outputs
    16,384 × 5,120 (no deepstack) × 2 B = 167,772,160 and pixels 65,536 × 3 × 2 × 16² × 2 B = 201,326,592:
    369,098,752. Forward at TP 4: 65,536 × (5 × 1,152 + 4,304 ÷ 4 + 1,152 pos_embeds) × 2 B = 1,047,003,136, with
    the pixels 1,248,329,728."""
    profile = encoder_profile(encoder_inputs(QWEN3_5_27B, "0.19.0", 50000, "--max-num-seqs", "1",
                                             "--enforce-eager", tp=4))  # fmt: skip
    assert profile is not None
    assert (profile.modality, profile.item_tokens, profile.items) == ("image", 16384, 1)
    assert profile.kept_bytes == 369_098_752
    assert profile.forward_bytes == 1_248_329_728


def test_qwen3_5_tp1_forward_takes_fc1s_step() -> None:
    """At TP 1 no all-reduce: fc1's step (3 × 1,152 + 2 × 4,304 = 12,064 widths) above fc2's (4 × 1,152 + 4,304 =
    8,912); with pos_embeds 65,536 × 13,216 × 2 B = 1,732,247,552, plus the pixels 201,326,592."""
    profile = encoder_profile(encoder_inputs(QWEN3_5_27B, "0.18.0", 8192))
    assert profile is not None and profile.forward_bytes == 1_933_574_144


def test_qwen3_5_not_profiled_before_its_class() -> None:
    """models/qwen3_5.py is first in v0.17.0: no Qwen3.5 encoder profile counted at v0.16.0."""
    assert encoder_profile(encoder_inputs(QWEN3_5_27B, "0.16.0", 8192)) is None


@pytest.mark.parametrize("rid", [SEQS1])
def test_one_seq_lambo_start_leaves_the_towers_peak(rid: str) -> None:
    """The LAMBO start at one sequence (v0.19.0, TP 4, eager, 0.92): 7.56 GiB of KV logged, 123,088 tokens; at 256
    seqs the same host logs 7.47 GiB (session 67 E3: vLLM's non-KV peak about 1.0 GiB at one sequence, where the
    text run's is under 0.1 GiB). The tower's forward (1.16 GiB with its pixels) is that peak: within 0.2 GiB."""
    record = by_id()[rid]
    profile = encoder_profile(record.inputs())
    assert profile is not None and record.tokens == 123_088
    assert abs(profile.forward_bytes / GIB - 1.0) < 0.2
