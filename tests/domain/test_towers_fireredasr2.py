"""FireRedASR2's Conformer encoder and adapter (kvtop.domain.architectures.towers_fireredasr2) against vLLM's build of
the reconstructed FireRedASR2-LLM config (tests/data/configs/recon, SOURCES.md there), kept as its registry rows
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

NAME = "recon--FireRedTeam--FireRedASR2-LLM"
CONFIG = DATA / "configs" / "recon" / f"{NAME}.json"
BF16 = 2
ENCODER = 1_421_087_936
ADAPTER = 44_054_528
LANGUAGE = {1: 15_231_233_024, 2: 7_615_820_800}


def test_the_engines_bytes_are_the_modules_arithmetic() -> None:
    """vLLM 0.33.0 conformer_encoder.py at idim 80, 16 blocks, 20 heads, d 1280, kernel 33 (all ReplicatedLinear or
    torch modules: whole): Conv2dSubsampling 1 → 32 and 32 → 32 (3 × 3, biased), `out` 32 · 19 · d + d (80 mel bins
    halved twice: 19); a block's two feed-forwards (LayerNorm 2d, d → 4d and 4d → d biased), attention (w_qs, w_ks,
    w_vs, fc, linear_pos d² each, three LayerNorms 6d, pos_bias_u / _v 2d), convolution (LayerNorm 2d,
    pointwise_conv1 d · 4d, depthwise 2d · 33, a LayerNorm 4d, pointwise_conv2 2d · d), a final LayerNorm 2d.
    fireredasr2.py FireRedASR2Adapter: 2 · d → 3584 and 3584 → 3584, biased."""
    d = 1280
    stem = 32 * 9 + 32 + 32 * 32 * 9 + 32 + 32 * 19 * d + d
    feed_forward = 2 * d + d * 4 * d + 4 * d + 4 * d * d + d
    block = 2 * feed_forward + (5 * d * d + 6 * d + 2 * d) + (2 * d + 4 * d * d + 2 * d * 33 + 4 * d + 2 * d * d) + 2 * d
    assert BF16 * (stem + 16 * block) == ENCODER
    t = 3584
    assert BF16 * (2 * d * t + t + t * t + t) == ADAPTER


@pytest.mark.parametrize("tp", [1, 2])
def test_bytes_equal_vllms_meta_build(tp: int) -> None:
    row = row_of("vllm", "0.33.0", NAME, tp)
    parts = row["stages"][0]["param_bytes"]
    assert (parts["model.encoder"], parts["model.encoder_projector"]) == (ENCODER, ADAPTER)
    assert parts["model.decoder"] == LANGUAGE[tp]
    model = model_from_config(json.loads(CONFIG.read_text()), source=NAME)
    book = weights_book(model, ParallelLayout(tp=tp), range(0, 28), first_stage=True, last_stage=True,
                        tower_split=VLLM_SPLIT)  # fmt: skip
    (tower,) = [r for r in book.rows if r.component == "audio"]
    assert int(tower.bytes) == ENCODER + ADAPTER
    assert int(sum(r.bytes for r in book.rows if r.component != "audio")) == LANGUAGE[tp]
    assert not model.not_modelled


def test_the_class_has_an_entry_and_its_tower() -> None:
    assert verdict("FireRedASR2ForConditionalGeneration")[0] == "entry"
    assert tower_verdict("FireRedASR2ForConditionalGeneration")[0] == "tower"
