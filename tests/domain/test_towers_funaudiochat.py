"""Fun-Audio-Chat's continuous and discrete audio encoders (kvtop.domain.architectures.towers_funaudiochat) against
vLLM's build of the class-defaults reconstruction (tests/data/configs/recon, SOURCES.md there), kept as its registry
rows (tests/data/engine_diff/registry/vllm-0.33.0.json). SGLang 0.5.23 registers no such class.
"""

from __future__ import annotations

import json

import pytest

from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.architectures.coverage import verdict
from kvtop.domain.architectures.towers_coverage import tower_verdict
from kvtop.domain.engines.vllm.architectures import TOWER_SPLIT as VLLM_SPLIT
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.data_paths import DATA

NAME = "FunAudioLLM--Fun-Audio-Chat-class.RECONSTRUCTED"
CONFIG = DATA / "configs" / "recon" / f"{NAME}.json"
BF16 = 2
CONTINUOUS = {1: 1_279_376_384, 2: 1_069_538_304}
DISCRETE = 98_438_144


def test_the_engines_bytes_are_the_modules_arithmetic() -> None:
    """vLLM 0.33.0 funaudiochat.py over FunAudioChatAudioEncoderConfig's defaults (d 1280, 32 layers, 20 heads, FFN
    5120, 128 mel bins, output_dim 3584) and codebook_size 6565: conv1 128 · d · 3 + d, conv2 d² · 3 + d; per layer
    qkv_proj 3d² + 3d (QKVParallelLinear bias=True: a K bias too) and out_proj's weight d², split over TP; out_proj's
    bias d, two LayerNorms 4d, fc1 d · 5120 + 5120 and fc2 5120 · d + d (nn.Linear), whole; ln_post 2d, proj d · 3584
    + 3584, audio_bos_eos_token 2 · 3584, whole. Discrete: embed_tokens 6565 · 3584, two 3584² linears, whole."""
    d, f, out = 1280, 5120, 3584
    split = 32 * (3 * d * d + 3 * d + d * d)
    whole = 128 * d * 3 + d + d * d * 3 + d + 32 * (d + 4 * d + d * f + f + f * d + d) + 2 * d + d * out + out + 2 * out
    assert BF16 * (whole + split) == CONTINUOUS[1]
    assert BF16 * (whole + split // 2) == CONTINUOUS[2]
    assert BF16 * (6565 * out + 2 * out * out) == DISCRETE


@pytest.mark.parametrize("tp", [1, 2])
def test_tower_bytes_equal_vllms_meta_build(tp: int) -> None:
    row = row_of("vllm", "0.33.0", NAME, tp)
    parts = row["stages"][0]["param_bytes"]
    assert (parts["continuous_audio_tower"], parts["audio_tower"]) == (CONTINUOUS[tp], DISCRETE)
    model = model_from_config(json.loads(CONFIG.read_text()), source=NAME)
    book = weights_book(model, ParallelLayout(tp=tp), range(0, model.num_layers), first_stage=True, last_stage=True,
                        tower_split=VLLM_SPLIT)  # fmt: skip
    (tower,) = [r for r in book.rows if r.component == "audio"]
    assert int(tower.bytes) == CONTINUOUS[tp] + DISCRETE
    assert int(sum(r.bytes for r in book.rows if r.component != "audio")) == parts["language_model"]
    assert not model.not_modelled


def test_the_class_is_a_wrapper_with_its_tower() -> None:
    assert verdict("FunAudioChatForConditionalGeneration")[0] == "wrapper"
    assert tower_verdict("FunAudioChatForConditionalGeneration")[0] == "tower"
