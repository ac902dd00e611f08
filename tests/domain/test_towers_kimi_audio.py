"""Kimi-Audio's Whisper encoder and VQ adaptor (kvtop.domain.architectures.towers_kimi_audio) against vLLM's build of
the reconstructed Kimi-Audio-7B-Instruct config with openai/whisper-large-v3's config in its whisper-large-v3 subfolder
(tests/data/configs/recon and families, sources in the SOURCES.md there), kept as its registry rows
(tests/data/engine_diff/registry/vllm-0.33.0.json). SGLang 0.5.23 registers no such class.
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

NAME = "recon--moonshotai--Kimi-Audio-7B-Instruct"
CONFIG = DATA / "configs" / "recon" / f"{NAME}.json"
BF16 = 2
ENCODER = {1: 1_274_019_840, 2: 644_587_520}
PROJECTOR = 62_418_944
LANGUAGE = {1: 15_466_114_048, 2: 7_733_261_312}


def test_the_engines_bytes_are_the_modules_arithmetic() -> None:
    """vLLM 0.33.0 whisper.py WhisperEncoder over whisper-large-v3 (d 1280, 32 layers, FFN 5120, 128 mel bins, 1500
    positions): conv1 128 · d · 3 + d, conv2 d² · 3 + d, embed_positions 1500 · d; a layer's qkv_proj 3d² + 3d
    (QKVParallelLinear bias=True: a K bias too), out_proj d² + d, two LayerNorms 4d, fc1 d · 5120 + 5120, fc2
    5120 · d + d; the final LayerNorm 2d. TP 2 halves qkv (weight and bias), out_proj's and fc2's weights and fc1.
    kimi_audio.py KimiAudioMultiModalProjector: nn.Linear 5120 → 3584 and 3584 → 3584, biased, LayerNorm(3584): whole.
    Qwen2ForCausalLM over config.json: embedding and head 168,448 × 3584 each (168,448 = 2632 × 64: no padding), 28
    layers of qkv (3584 + 2 · 4 · 128 wide, biased), o_proj, gate_up and down (18,944), two RMSNorms; the final norm."""
    d, f = 1280, 5120
    whole = 128 * d * 3 + d + d * d * 3 + d + 1500 * d + 32 * (d + 4 * d + d) + 2 * d
    split = 32 * (3 * d * d + 3 * d + d * d + d * f + f + f * d)
    assert BF16 * (whole + split) == ENCODER[1]
    assert BF16 * (whole + split // 2) == ENCODER[2]
    t = 3584
    assert BF16 * (5120 * t + t + t * t + t + 2 * t) == PROJECTOR
    qkv = t + 2 * 4 * 128
    layer = t * qkv + qkv + t * t + t * 2 * 18944 + 18944 * t + 2 * t
    assert BF16 * (2 * 168448 * t + 28 * layer + t) == LANGUAGE[1]


@pytest.mark.parametrize("tp", [1, 2])
def test_bytes_equal_vllms_meta_build(tp: int) -> None:
    row = row_of("vllm", "0.33.0", NAME, tp)
    parts = row["stages"][0]["param_bytes"]
    assert (parts["audio_tower"], parts["multi_modal_projector"]) == (ENCODER[tp], PROJECTOR)
    assert parts["language_model"] == LANGUAGE[tp]
    model = model_from_config(json.loads(CONFIG.read_text()), source=NAME)
    book = weights_book(model, ParallelLayout(tp=tp), range(0, 28), first_stage=True, last_stage=True,
                        tower_split=VLLM_SPLIT)  # fmt: skip
    (tower,) = [r for r in book.rows if r.component == "audio"]
    assert int(tower.bytes) == ENCODER[tp] + PROJECTOR
    assert int(sum(r.bytes for r in book.rows if r.component != "audio")) == LANGUAGE[tp]


def test_the_assumed_whisper_sizes_are_said() -> None:
    model = model_from_config(json.loads(CONFIG.read_text()), source=NAME)
    assert model.tower is not None and "whisper-large-v3/config.json" in model.tower.label
    assert "assumed" in model.tower.label


def test_the_class_has_an_entry_and_its_tower() -> None:
    assert verdict("MoonshotKimiaForCausalLM")[0] == "entry"
    assert tower_verdict("MoonshotKimiaForCausalLM")[0] == "tower"
