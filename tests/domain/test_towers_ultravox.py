"""Ultravox's Whisper encoder and projector (kvtop.domain.architectures.towers_ultravox) and its language model named
by checkpoint id (named_text) against vLLM 0.33.0's meta build of the reconstructed ultravox-v0_5-llama-3_2-1b
config (tests/data/configs/recon, sources in SOURCES.md there), kept as its registry rows
(tests/data/engine_diff/registry/vllm-0.33.0.json).
"""

from __future__ import annotations

import json

import pytest

from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.architectures.coverage import verdict
from kvtop.domain.architectures.towers_coverage import tower_verdict
from kvtop.domain.engines.vllm.architectures import TOWER_SPLIT
from kvtop.domain.errors import UnsupportedModelError
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from kvtop.sources.hub import named_text_configs
from tests.data_paths import DATA

NAME = "recon--fixie-ai--ultravox-v0_5-llama-3_2-1b"
CONFIG = DATA / "configs" / "recon" / f"{NAME}.json"
BF16 = 2
ENCODER = {1: 1_274_019_840, 2: 644_587_520}
PROJECTOR = 92_299_264
LANGUAGE = {1: 2_471_628_800, 2: 1_235_881_984}


def test_the_engines_bytes_are_the_modules_arithmetic() -> None:
    """vLLM 0.33.0 ultravox.py: UltravoxWhisperEncoder is whisper.py's WhisperEncoder over audio_config (d 1280, 32
    layers, FFN 5120, 128 mel bins, 1500 positions). Whole: conv1 128 · 3 · d + d, conv2 d · 3 · d + d,
    embed_positions 1500 · d, per layer two LayerNorms 4d and the Row biases 2d, layer_norm 2d. Split: QKVParallelLinear
    3d² + 3d (a K bias), out_proj d², fc1 d · 5120 + 5120, fc2 5120 · d. UltravoxFeedForwardProjector (stack_factor 8,
    hidden_size 4096, swiglu halving it, projector_ln_mid): ln_pre 8d, linear_1 8d · 4096, linear_2 2048 · 2048 (the
    text width), ln_mid 2048; ReplicatedLinear, unbiased: whole. Llama-3.2-1B-Instruct (the text_model_id): 16
    layers of q 2048², k and v 2048 · 512 each, o 2048², gate/up/down 3 · 2048 · 8192, two RMSNorms; the final
    norm; a tied 128256 · 2048 embedding (split over TP), the norms whole."""
    d, f, t = 1280, 5120, 2048
    whole = (128 * 3 * d + d) + (d * 3 * d + d) + 1500 * d + 32 * (4 * d + 2 * d) + 2 * d
    split = 32 * (3 * d * d + 3 * d + d * d + d * f + f + f * d)
    assert BF16 * (whole + split) == ENCODER[1]
    assert BF16 * (whole + split // 2) == ENCODER[2]
    assert BF16 * (8 * d + 8 * d * 4096 + 2048 * t + 2048) == PROJECTOR
    layers = 16 * (t * t + 2 * t * 512 + t * t + 3 * t * 8192)
    norms = 16 * 2 * t + t
    assert BF16 * (layers + 128256 * t + norms) == LANGUAGE[1]
    assert BF16 * ((layers + 128256 * t) // 2 + norms) == LANGUAGE[2]


@pytest.mark.parametrize("tp", [1, 2])
def test_bytes_equal_vllms_meta_build(tp: int) -> None:
    row = row_of("vllm", "0.33.0", NAME, tp)
    parts = row["stages"][0]["param_bytes"]
    assert (parts["audio_tower"], parts["multi_modal_projector"]) == (ENCODER[tp], PROJECTOR)
    assert parts["language_model"] == LANGUAGE[tp]
    model = model_from_config(json.loads(CONFIG.read_text()), source=NAME, named_configs=named_text_configs())
    book = weights_book(model, ParallelLayout(tp=tp), range(0, 16), first_stage=True, last_stage=True,
                        tower_split=TOWER_SPLIT)  # fmt: skip
    (tower,) = [r for r in book.rows if r.component == "audio"]
    assert int(tower.bytes) == ENCODER[tp] + PROJECTOR
    assert sum(int(r.bytes) for r in book.rows if r.component != "audio") == LANGUAGE[tp]
    assert not model.not_modelled


def test_the_plan_says_where_the_language_model_came_from() -> None:
    model = model_from_config(json.loads(CONFIG.read_text()), source=NAME, named_configs=named_text_configs())
    (words,) = model.read_from  # a note in plan and explain (render_ledger, explain)
    assert "meta-llama/Llama-3.2-1B-Instruct's published config (text_model_id" in words


def test_a_checkpoint_kvtop_holds_no_copy_of_is_refused_by_its_field() -> None:
    config = {**json.loads(CONFIG.read_text()), "text_model_id": "meta-llama/Llama-3.1-70B-Instruct"}
    with pytest.raises(UnsupportedModelError, match="fetches from the Hub") as refused:
        model_from_config(config, source=NAME, named_configs=named_text_configs())
    assert refused.value.field == "text_model_id"


def test_a_transformer_projector_is_refused_by_its_field() -> None:
    config = {**json.loads(CONFIG.read_text()), "num_projector_layers": 2}
    with pytest.raises(UnsupportedModelError, match="UltravoxTransformerProjector") as refused:
        model_from_config(config, source=NAME, named_configs=named_text_configs())
    assert refused.value.field == "num_projector_layers"


def test_the_class_is_a_wrapper_with_its_tower() -> None:
    assert verdict("UltravoxModel")[0] == "wrapper"
    assert tower_verdict("UltravoxModel")[0] == "tower"


def test_the_named_checkpoints_config_is_package_data_one_copy_with_its_source() -> None:
    # examples/models/named/ holds meta-llama/Llama-3.2-1B-Instruct's published config.json, the same file as
    # tests/data/configs/families/ (its source in SOURCES.md there: the benchmark's quoted LLAMA_3_2_1B_CFG,
    # hidden 2,048, 16 layers, 8 KV heads, vocab 128,256)
    published = json.loads((DATA / "configs" / "families" / "meta-llama--Llama-3.2-1B-Instruct.json").read_text())
    assert dict(named_text_configs()) == {"meta-llama/Llama-3.2-1B-Instruct": published}
    # the domain holds none: without the copies handed in, the id is refused by its field
    with pytest.raises(UnsupportedModelError, match="known: none") as refused:
        model_from_config(json.loads(CONFIG.read_text()), source=NAME)
    assert refused.value.field == "text_model_id"


def test_a_callers_edit_of_a_named_config_does_not_reach_the_next_caller() -> None:
    # the published config's hidden_size is 2,048 (tests/data/configs/families/SOURCES.md); a caller that edits its
    # copy (a nested dict too) leaves the next caller's read as published
    first = named_text_configs()["meta-llama/Llama-3.2-1B-Instruct"]
    assert isinstance(first, dict) and isinstance(first["rope_scaling"], dict)
    first["hidden_size"] = 1
    first["rope_scaling"]["factor"] = -1.0
    again = named_text_configs()["meta-llama/Llama-3.2-1B-Instruct"]
    assert again["hidden_size"] == 2048 and again["rope_scaling"]["factor"] == 32.0
