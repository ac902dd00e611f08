"""google/gemma-4-E2B's weights as vLLM and SGLang build them: the KV-shared layers' double-wide MLP
(`use_double_wide_mlp`) and the audio encoder an `audio_config` adds (session 67, helper G2, #27).

Oracles, none of them kvtop's: the engines' arithmetic (vLLM gemma4.py Gemma4DecoderLayer, v0.30.0 :609-621,
`layer_intermediate_size = config.intermediate_size * (2 if use_double_wide_mlp else 1)` for layer ≥ 35 − 20; SGLang
gemma4_causal.py 0.5.23 :586-590 alike); the E2B checkpoint's safetensors total, 10,246,621,918 B, and its QAT
twin's header, 0.614 GB of audio tensors kept in BF16 (tests/data/calibration/SOURCES.md, session 67 helper G);
the xbill9 starts' 'Model loading took 9.75 GiB' (L4, v0.30.0) and '9.8 GiB' (T4, v0.28.0 / v0.29.0).
The config: blazejewicz/gemma-4-e2b-japanese-teacher's verbatim config.json (a fine-tune, E2B's geometry)."""

from __future__ import annotations

import json

from kvtop.domain.architectures.towers_gemma4_audio import Gemma4AudioFields, audio_params
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.tower_spec import TOWER_KINDS
from kvtop.domain.weights import weights_book
from kvtop.domain.wording import GIB
from tests.data_paths import DATA

CONFIG = DATA / "calibration" / "configs" / "blazejewicz--gemma-4-e2b-japanese-teacher.json"
HIDDEN, WIDTH, LAYERS, SHARED = 1536, 6144, 35, 20
CHECKPOINT_BYTES = 10_246_621_918
AUDIO_BF16_BYTES = 0.614e9  # the QAT header's BF16 audio tensors, to 3 figures
LOGGED_WEIGHTS_GIB = (9.75, 9.8)


def _model() -> ModelSpec:
    return model_from_config(json.loads(CONFIG.read_text()), source="gemma-4-E2B")


def test_the_kv_shared_layers_mlp_is_twice_as_wide() -> None:
    model = _model()
    assert model.layer_intermediate == (WIDTH,) * (LAYERS - SHARED) + (2 * WIDTH,) * SHARED
    book = weights_book(model, ParallelLayout(tp=1), range(LAYERS), first_stage=True, last_stage=True)
    (mlp,) = [row for row in book.rows if row.component == "mlp"]
    assert mlp.params == 3 * HIDDEN * WIDTH * LAYERS + 3 * HIDDEN * WIDTH * SHARED  # gate, up, down; 20 doubled


def test_the_audio_encoder_is_booked_at_its_bf16_size() -> None:
    model = _model()
    assert not any("audio" in note for note in model.not_modelled)
    params, _ = audio_params(Gemma4AudioFields(), HIDDEN)  # the class defaults are E2B's audio_config
    assert abs(2 * params - AUDIO_BF16_BYTES) < 0.0005e9
    book = weights_book(model, ParallelLayout(tp=1), range(LAYERS), first_stage=True, last_stage=True)
    (tower,) = [row for row in book.rows if row.component in TOWER_KINDS]
    assert tower.component == "vision_audio"


def test_the_book_lands_on_the_checkpoint_and_the_logs() -> None:
    book = weights_book(_model(), ParallelLayout(tp=1), range(LAYERS), first_stage=True, last_stage=True)
    params_bytes = sum(int(row.bytes) for row in book.rows)
    assert abs(params_bytes / CHECKPOINT_BYTES - 1) < 0.005  # before: 8,461,765,120 B, −17.4 %
    for logged in LOGGED_WEIGHTS_GIB:  # the loader's figure holds the rope cache too (201,326,592 B, not booked here)
        assert abs((params_bytes + 201_326_592) / (logged * GIB) - 1) < 0.015
