"""MOSS-Transcribe-Diarize's Whisper encoder and VQ adaptor (kvtop.domain.architectures.towers_moss) against vLLM's
build of the reconstructed config (tests/data/configs/recon, sources in SOURCES.md there), kept as its registry rows
(tests/data/engine_diff/registry/vllm-0.33.0.json): whisper_encoder 614,481,920 B at TP 1 and 312,320,000 B at TP 2,
vq_adaptor 10,493,952 B at both, language_model 1,192,099,840 / 596,115,456 B. SGLang registers no such class.
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
from kvtop.domain.tower_spec import TOWER_KINDS
from kvtop.domain.weights import weights_book
from tests.data_paths import DATA

NAME = "recon--OpenMOSS-Team--MOSS-Transcribe-Diarize"
CONFIG = DATA / "configs" / "recon" / f"{NAME}.json"
BF16 = 2
ENCODER = {1: 614_481_920, 2: 312_320_000}
ADAPTOR = 10_493_952


def test_the_engines_bytes_are_the_modules_arithmetic() -> None:
    """Whisper-medium (d 1024, 24 layers, ffn 4096, 80 mel bins, 1,500 positions): conv1 80·1024·3 + 1024, conv2
    1024²·3 + 1024, the position table 1500 × 1024; a layer's qkv 3d² + 3d (vLLM's K bias included), out_proj d² + d,
    two LayerNorms 4d, fc1 d·4096 + 4096, fc2 4096·d + d; the final LayerNorm 2d. TP 2 halves qkv (weight and bias),
    out_proj's and fc2's weights and fc1. The adaptor: 4096 → 1024 and 1024 → 1024 biased, a LayerNorm of 1024."""
    d, f = 1024, 4096
    layer_split = 3 * d * d + 3 * d + d * d + d * f + f + f * d
    layer_whole = d + 4 * d + d  # out_proj's bias, two LayerNorms, fc2's bias
    whole = 80 * d * 3 + d + d * d * 3 + d + 1500 * d + 24 * layer_whole + 2 * d
    assert BF16 * (whole + 24 * layer_split) == ENCODER[1]
    assert BF16 * (whole + 24 * layer_split // 2) == ENCODER[2]
    assert BF16 * (4096 * d + d + d * d + d + 2 * d) == ADAPTOR


@pytest.mark.parametrize("tp", [1, 2])
def test_tower_bytes_equal_vllms_meta_build(tp: int) -> None:
    row = row_of("vllm", "0.33.0", NAME, tp)
    parts = row["stages"][0]["param_bytes"]
    assert (parts["whisper_encoder"], parts["vq_adaptor"]) == (ENCODER[tp], ADAPTOR)
    model = model_from_config(json.loads(CONFIG.read_text()), source=NAME)
    book = weights_book(model, ParallelLayout(tp=tp), range(0, 28), first_stage=True, last_stage=True,
                        tower_split=VLLM_SPLIT)  # fmt: skip
    (tower,) = [r for r in book.rows if r.component in TOWER_KINDS]
    assert int(tower.bytes) == ENCODER[tp] + ADAPTOR
    assert not any("audio" in note for note in model.not_modelled)


def test_the_class_is_a_wrapper_with_its_tower() -> None:
    assert verdict("MossTranscribeDiarizeForConditionalGeneration")[0] == "wrapper"
    assert tower_verdict("MossTranscribeDiarizeForConditionalGeneration")[0] == "tower"


AUDIO = "recon--OpenMOSS-Team--MOSS-Audio-4B-Instruct"
AUDIO_ENCODER = {1: 1_287_248_640, 2: 657_857_280}
AUDIO_ADAPTERS = {
    1: 83_886_080 + 251_658_240,
    2: 41_943_040 + 125_829_120,
}  # audio_adapter + 3 deepstack mergers


def test_moss_audio_bytes_are_the_modules_arithmetic() -> None:
    """vLLM moss_audio.py at the MOSS-Audio-4B config (d 1280, 32 layers, ffn 5120, stem 480, 128 mel bins, text
    2560, adapter 8192): three convs 480·9 + 480 + 2·(480²·9 + 480), stem_proj 480·16·1280 + 1280; a layer's q, k, v,
    out_proj 4d² + 2d (q and v biased) and fc1 d·5120 + 5120, fc2 5120·d split, out_proj's and fc2's biases and two
    LayerNorms 6d whole; the final LayerNorm 2d. Four GatedMLPs (adapter, three deepstack mergers) of
    1280 × 2·8192 and 8192 × 2560, unbiased, split."""
    d, f = 1280, 5120
    split = 32 * (4 * d * d + 2 * d + d * f + f + f * d)
    whole = 480 * 9 + 480 + 2 * (480 * 480 * 9 + 480) + 480 * 16 * d + d + 32 * 6 * d + 2 * d
    assert (BF16 * (whole + split), BF16 * (whole + split // 2)) == (AUDIO_ENCODER[1], AUDIO_ENCODER[2])
    gated = 1280 * 2 * 8192 + 8192 * 2560
    assert (BF16 * 4 * gated, BF16 * 4 * gated // 2) == (AUDIO_ADAPTERS[1], AUDIO_ADAPTERS[2])


@pytest.mark.parametrize("tp", [1, 2])
def test_moss_audio_bytes_equal_vllms_meta_build(tp: int) -> None:
    row = row_of("vllm", "0.33.0", AUDIO, tp)
    parts = row["stages"][0]["param_bytes"]
    assert parts["audio_encoder"] == AUDIO_ENCODER[tp]
    assert parts["audio_adapter"] + parts["deepstack_audio_merger_list"] == AUDIO_ADAPTERS[tp]
    config = json.loads((DATA / "configs" / "recon" / f"{AUDIO}.json").read_text())
    model = model_from_config(config, source=AUDIO)
    book = weights_book(model, ParallelLayout(tp=tp), range(0, 36), first_stage=True, last_stage=True,
                        tower_split=VLLM_SPLIT)  # fmt: skip
    (tower,) = [r for r in book.rows if r.component in TOWER_KINDS]
    assert int(tower.bytes) == AUDIO_ENCODER[tp] + AUDIO_ADAPTERS[tp]
    assert verdict("MossAudioModel")[0] == "wrapper" and tower_verdict("MossAudioModel")[0] == "tower"
