"""Voxtral's Whisper encoder and adapter (kvtop.domain.architectures.towers_voxtral) against SGLang 0.5.23's meta
build of the reconstructed Voxtral-Mini-3B-2507 config.json and vLLM 0.33.0's of its params.json (vLLM refuses the
config.json; tests/data/configs/recon, sources in SOURCES.md there), kept as their registry rows
(tests/data/engine_diff/registry/sglang-0.5.23.json, vllm-0.33.0.json).
"""

from __future__ import annotations

import json

import pytest

from benchmarks.engine_diff.registry_sweep import load_rows, row_of
from kvtop.domain.architectures.coverage import verdict
from kvtop.domain.architectures.towers_coverage import tower_verdict
from kvtop.domain.engines.sglang.architectures import TOWER_SPLIT
from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
from kvtop.domain.engines.vllm.architectures import TOWER_SPLIT as VLLM_SPLIT
from kvtop.domain.engines.vllm.config_checks import check_config
from kvtop.domain.errors import InputError
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.mistral_params import model_from_params
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.data_paths import DATA

NAME = "recon--mistralai--Voxtral-Mini-3B-2507"
CONFIG = DATA / "configs" / "recon" / f"{NAME}.json"
BF16 = 2
ENCODER = {1: 1_274_019_840, 2: 644_587_520}
ADAPTER = 50_331_648
LANGUAGE = {1: 8_028_272_640, 2: 4_014_323_712}
PARAMS = "recon--mistralai--Voxtral-Mini-3B-2507-params"
# vLLM's whisper_encoder: the same modules with embed_positions built in float32 (init_in_fp32), 1500 · 1280 · 2 B more
VLLM_ENCODER = {1: 1_277_859_840, 2: 648_427_520}


def test_the_engines_bytes_are_the_modules_arithmetic() -> None:
    """SGLang 0.5.23 voxtral.py: VoxtralWhisperEncoder (d 1280, 32 layers, 20 heads, FFN 5120, 128 mel bins, 1500
    positions). Whole: conv1 128 · 3 · d + d, conv2 d · 3 · d + d (nn.Conv1d), embed_positions 1500 · d, per layer
    two LayerNorms 4d and the Row biases of out_proj and fc2 2d, the final layer_norm 2d. Split over TP
    (VoxtralWhisperAttention's QKVParallelLinear with its default bias, a K bias included; RowParallelLinear out_proj;
    ColumnParallelLinear fc1 with its bias, RowParallelLinear fc2): 3d² + 3d + d² + d · 5120 + 5120 + 5120 · d.
    AudioLanguageAdapter: w_in nn.Linear(d · 4 → 3072) and w_out (3072 → 3072), unbiased, whole (downsample_factor
    5120 ÷ 1280 = 4, voxtral.py's rule for a config.json). LlamaForCausalLM: per layer q 3072 · 4096, k and v
    3072 · 1024 each, o 4096 · 3072, gate/up/down 3 · 3072 · 8192, two RMSNorms; the final norm; embed_tokens and an
    untied lm_head of 131072 · 3072 (split over TP), the norms whole."""
    d, f, t = 1280, 5120, 3072
    whole = (128 * 3 * d + d) + (d * 3 * d + d) + 1500 * d + 32 * (4 * d + 2 * d) + 2 * d
    split = 32 * (3 * d * d + 3 * d + d * d + d * f + f + f * d)
    assert BF16 * (whole + split) == ENCODER[1]
    assert BF16 * (whole + split // 2) == ENCODER[2]
    assert BF16 * (d * 4 * t + t * t) == ADAPTER
    layer = t * 4096 + 2 * t * 1024 + 4096 * t + 3 * t * 8192
    norms = 30 * 2 * t + t
    vocab = 2 * 131072 * t
    assert BF16 * (30 * layer + vocab + norms) == LANGUAGE[1]
    assert BF16 * ((30 * layer + vocab) // 2 + norms) == LANGUAGE[2]


@pytest.mark.parametrize("tp", [1, 2])
def test_bytes_equal_sglangs_meta_build(tp: int) -> None:
    row = row_of("sglang", "0.5.23", NAME, tp)
    parts = row["stages"][0]["param_bytes"]
    assert (parts["audio_tower"], parts["multi_modal_projector"]) == (ENCODER[tp], ADAPTER)
    assert parts["language_model"] == LANGUAGE[tp]
    # layers × K and V × KV heads a rank × head_dim × bf16
    assert row["cell_size"] == 30 * 2 * (8 // tp) * 128 * BF16
    model = model_from_config(json.loads(CONFIG.read_text()), source=NAME)
    book = weights_book(model, ParallelLayout(tp=tp), range(0, 30), first_stage=True, last_stage=True,
                        tower_split=TOWER_SPLIT)  # fmt: skip
    (tower,) = [r for r in book.rows if r.component == "audio"]
    assert int(tower.bytes) == ENCODER[tp] + ADAPTER
    assert sum(int(r.bytes) for r in book.rows if r.component != "audio") == LANGUAGE[tp]
    assert not model.not_modelled


def test_vllm_refuses_a_config_json_of_it() -> None:
    """vLLM 0.33.0 voxtral.py:327 reads audio_config.downsample_factor, which transformers' VoxtralEncoderConfig does
    not define (its registry rows: refused, the engine-failure classifier's reason)."""
    rows = [r for r in load_rows("vllm", "0.33.0") if r["config"] == NAME]
    assert {r["status"] for r in rows} == {"refused"} and "downsample_factor" in rows[0]["message"]
    model = model_from_config(json.loads(CONFIG.read_text()), source=NAME)
    with pytest.raises(InputError, match="downsample_factor"):
        check_config(model, ResolvedVersion(text="0.33.0", source=VersionSource.FLAG))


def test_the_class_is_a_wrapper_with_its_tower() -> None:
    assert verdict("VoxtralForConditionalGeneration")[0] == "wrapper"
    assert tower_verdict("VoxtralForConditionalGeneration")[0] == "tower"


def test_vllms_encoder_holds_its_position_table_in_float32() -> None:
    """vLLM 0.33.0 voxtral.py VoxtralEncoderModel: partial(WhisperEncoder, init_in_fp32=True); whisper.py builds
    embed_positions (1500 × 1280) under set_default_torch_dtype(float32): 4 B a parameter where bf16 holds 2."""
    for tp in (1, 2):
        assert VLLM_ENCODER[tp] - ENCODER[tp] == 1500 * 1280 * (4 - BF16)


@pytest.mark.parametrize("tp", [1, 2])
def test_the_params_json_form_equals_vllms_meta_build(tp: int) -> None:
    row = row_of("vllm", "0.33.0", PARAMS, tp)
    parts = row["stages"][0]["param_bytes"]
    assert (parts["whisper_encoder"], parts["audio_language_adapter"]) == (VLLM_ENCODER[tp], ADAPTER)
    assert parts["language_model"] == LANGUAGE[tp]
    params = json.loads((DATA / "configs" / "recon" / PARAMS / "params.json").read_text())
    model = model_from_params(params, source=PARAMS)
    book = weights_book(model, ParallelLayout(tp=tp), range(0, 30), first_stage=True, last_stage=True,
                        tower_split=VLLM_SPLIT)  # fmt: skip
    (tower,) = [r for r in book.rows if r.component == "audio"]
    assert int(tower.bytes) == VLLM_ENCODER[tp] + ADAPTER
    assert sum(int(r.bytes) for r in book.rows if r.component != "audio") == LANGUAGE[tp]
    assert not model.not_modelled and model.config_format
