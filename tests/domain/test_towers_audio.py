"""Audio encoders as tower data (kvtop.domain.architectures.towers_audio): Qwen2-Audio's and AudioFlamingo3's
Whisper encoder and projector, counted in the weights book's tower row.

Configs: the default configs of transformers' Qwen2AudioConfig and AudioFlamingo3Config (bf16), under
tests/data/engine_diff/registry/configs (SOURCES.md there). Oracle: the engines' meta builds of those configs,
kept as the registry rows (tests/data/engine_diff/registry/vllm-0.33.0.json, sglang-0.5.23.json; `param_bytes` by
top-level child):
  Qwen2-Audio, vLLM 0.33.0 and SGLang 0.5.23, TP 1 and 2 alike: audio_tower 1,273,937,920 B,
    multi_modal_projector 10,493,952 B (whole on every rank);
  AudioFlamingo3, vLLM 0.33.0, TP 1 and 2 alike: audio_tower 1,273,937,920 B, multi_modal_projector 44,056,576 B.
By hand from Whisper-large's sizes (d_model 1280, 32 layers, ffn 5120, 128 mel bins, 1500 positions), bf16:
  conv1 128 × 1280 × 3 + 1280, conv2 1280 × 1280 × 3 + 1280 = 5,409,280; positions 1500 × 1280 = 1,920,000;
  a layer: q, k, v, out 4 × 1280² + 3 × 1280 biases (k none), two LayerNorms 4 × 1280, fc1 1280 × 5120 + 5120,
  fc2 5120 × 1280 + 1280 = 19,676,160, × 32 = 629,637,120; the final LayerNorm 2,560:
  636,968,960 parameters = 1,273,937,920 B.
  Qwen2-Audio's projector 1280 × 4096 + 4096 = 5,246,976 = 10,493,952 B; AudioFlamingo3's 1280 × 4096 + 4096 × 4096
  + 2 × 4096 (projector_bias) = 22,028,288 = 44,056,576 B.
Before these kinds the classes were "not modelled: a speech or omni model".
"""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from kvtop.domain.architectures.coverage import verdict
from kvtop.domain.engines.sglang.architectures import TOWER_SPLIT as SGLANG_SPLIT
from kvtop.domain.engines.vllm.architectures import TOWER_SPLIT as VLLM_SPLIT
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.domain.tower_spec import TOWER_KINDS, TowerSpec
from kvtop.domain.weights import weights_book
from tests.data_paths import DATA

CONFIGS = DATA / "engine_diff" / "registry" / "configs"
ENCODER_BYTES = 1_273_937_920
ENGINE_TOWER_BYTES = {
    "Qwen2AudioForConditionalGeneration": ENCODER_BYTES + 10_493_952,
    "AudioFlamingo3ForConditionalGeneration": ENCODER_BYTES + 44_056_576,
}


def _config(name: str) -> dict:  # type: ignore[type-arg]
    return json.loads((CONFIGS / f"{name}.json").read_text())


def _tower_bytes(config: dict, tp: int) -> int:  # type: ignore[type-arg]
    model = model_from_config(config)
    book = weights_book(model, ParallelLayout(tp=tp), range(0, 1), first_stage=True, last_stage=False)
    (row,) = [row for row in book.rows if row.component in TOWER_KINDS]
    return int(row.bytes)


@pytest.mark.parametrize("name", sorted(ENGINE_TOWER_BYTES))
@pytest.mark.parametrize("tp", [1, 2])
def test_tower_bytes_equal_the_engines_meta_build(name: str, tp: int) -> None:
    model = model_from_config(_config(name))
    assert _tower_bytes(_config(name), tp) == ENGINE_TOWER_BYTES[name]
    assert model.tower is not None
    for split in (VLLM_SPLIT, SGLANG_SPLIT):
        assert 2 * model.tower.params_per_rank(tp, split) == ENGINE_TOWER_BYTES[name]
    assert not any("audio" in note for note in model.not_modelled)
    assert verdict(name)[0] == "wrapper"


def test_a_stated_field_sizes_the_encoder() -> None:
    """Two fewer encoder layers (`encoder_layers`, Qwen2AudioEncoderConfig's name): 2 × 19,676,160 × 2 B less."""
    config = _config("Qwen2AudioForConditionalGeneration")
    config["audio_config"] = {**config["audio_config"], "encoder_layers": 30}
    assert (
        _tower_bytes(config, 1)
        == ENGINE_TOWER_BYTES["Qwen2AudioForConditionalGeneration"] - 2 * 19_676_160 * 2
    )


def test_audioflamingo3_without_projector_bias() -> None:
    """projector_bias False drops linear_1's and linear_2's biases: 2 × 4,096 × 2 B."""
    config = {**_config("AudioFlamingo3ForConditionalGeneration"), "projector_bias": False}
    assert (
        _tower_bytes(config, 1) == ENGINE_TOWER_BYTES["AudioFlamingo3ForConditionalGeneration"] - 2 * 4096 * 2
    )


# Qwen2.5-Omni: vLLM 0.33.0's meta build of the Qwen2_5OmniModel / Qwen2_5OmniForConditionalGeneration defaults
# (the thinker only): audio_tower 1,279,294,464 B and visual 6,166,050,304 B at TP 1; visual 3,087,705,856 B at TP 2
# (the audio encoder whole). The audio encoder by hand: the Whisper encoder above less its position table (a
# sinusoid buffer, 1500 × 1280), plus audio_bos_eos_token 2 × 3584 and proj 1280 × 3584 + 3584 (output_dim 3584):
# 636,968,960 − 1,920,000 + 7,168 + 4,591,104 = 639,647,232 = 1,279,294,464 B.
OMNI_TOWER_BYTES = {1: 1_279_294_464 + 6_166_050_304, 2: 1_279_294_464 + 3_087_705_856}


@pytest.mark.parametrize("name", ["Qwen2_5OmniModel", "Qwen2_5OmniForConditionalGeneration"])
@pytest.mark.parametrize("tp", [1, 2])
def test_qwen2_5_omni_thinker_towers(name: str, tp: int) -> None:
    model = model_from_config(_config(name))
    assert _tower_bytes(_config(name), tp) == OMNI_TOWER_BYTES[tp]
    assert (
        model.architecture == name and model.hidden_size == 3584
    )  # the thinker's text_config, not the talker's
    assert not any("audio" in note or "vision tower" in note for note in model.not_modelled)


def test_qwen2_5_omni_head_tied_by_the_text_config() -> None:
    """The thinker's own tie_word_embeddings (False) is not what vLLM 0.33.0 reads: Qwen2_5OmniConfig states none,
    so the text_config's True holds (the meta build's language_model: 14,141,238,272 B at TP 1, no lm_head;
    an untied head would add 152,064 × 3,584 × 2 B = 1,089,994,752 B)."""
    model = model_from_config(_config("Qwen2_5OmniModel"))
    assert model.tie_word_embeddings and model.outer_tie_word_embeddings is None


# Qwen3-Omni-MoE: vLLM 0.33.0's meta build of Qwen3OmniMoeConfig's defaults with the published vision image_size 768,
# apply_vit_abs_pos_embed and text tie_word_embeddings false (published_fields._qwen3_omni_published), the thinker
# only: audio_tower 1,299,789,568 B / 670,357,248 B and visual 1,133,898,208 B / 571,604,848 B at TP 1 / 2. SGLang
# 0.5.23's (qwen3_omni_moe.py, under `thinker`): the same audio_tower, visual 1,133,898,208 / 568,950,640 B (its
# Qwen3-VL split, engines/sglang TOWER_SPLIT); both judged equal in the registry rows.
# The audio encoder by hand (d_model 1280, 32 layers, ffn 5120, 128 mel bins, downsample 480, output_dim 3584):
#   conv2d1 480 × 9 + 480, conv2d2 and conv2d3 480² × 9 + 480 each, conv_out 480 × 16 × 1280 (128 bins halved
#   thrice: 16) = 13,983,360; per layer split qkv 3 × 1280² + 3 × 1280, out 1280², fc1 1280 × 5120 + 5120,
#   fc2 5120 × 1280 = 19,669,760 (× 32 = 629,432,320), whole out's and fc2's biases and two LayerNorms 7,680
#   (× 32 = 245,760); ln_post 2,560, proj1 1280² + 1280, proj2 1280 × 3584 + 3584: whole 20,462,464.
#   TP 1: (20,462,464 + 629,432,320) × 2 B = 1,299,789,568; TP 2 (20 heads divide): (20,462,464 + 314,716,160) × 2 B.
QWEN3_OMNI_TOWER_BYTES = {1: 1_299_789_568 + 1_133_898_208, 2: 670_357_248 + 571_604_848}


SGLANG_QWEN3_OMNI_TOWER_BYTES = {1: 1_299_789_568 + 1_133_898_208, 2: 670_357_248 + 568_950_640}


@pytest.mark.parametrize("tp", [1, 2])
def test_qwen3_omni_thinker_towers(tp: int) -> None:
    model = model_from_config(_config("Qwen3OmniMoeForConditionalGeneration"))
    assert _tower_bytes(_config("Qwen3OmniMoeForConditionalGeneration"), tp) == QWEN3_OMNI_TOWER_BYTES[tp]
    assert model.tower is not None and model.tower.heads == 20
    assert 2 * model.tower.params_per_rank(tp, SGLANG_SPLIT) == SGLANG_QWEN3_OMNI_TOWER_BYTES[tp]
    assert not any("audio" in note or "vision tower" in note for note in model.not_modelled)


def test_qwen3_omni_audio_whole_where_heads_do_not_divide() -> None:
    """vLLM's disable_tp: at TP 8 (20 heads) the audio layers' 629,432,320 split parameters stay whole on every
    rank, at TP 4 they split with the vision transformer's."""
    tower = model_from_config(_config("Qwen3OmniMoeForConditionalGeneration")).tower
    assert tower is not None and tower.head_split_params == 629_432_320
    whole = tower.params - tower.tp_split_params - tower.head_split_params
    assert tower.params_per_rank(8, VLLM_SPLIT) == whole + 629_432_320 + tower.tp_split_params / 8
    assert tower.params_per_rank(4, VLLM_SPLIT) == whole + (629_432_320 + tower.tp_split_params) / 4


def test_qwen3_omni_without_image_size_keeps_the_notes() -> None:
    """transformers' Qwen3OmniMoeVisionEncoderConfig has no image_size, by which vLLM sizes the position table
    (without it vLLM cannot build the class): kvtop names the towers not modelled rather than guess."""
    config = _config("Qwen3OmniMoeForConditionalGeneration")
    thinker = config["thinker_config"]
    vision = {k: v for k, v in thinker["vision_config"].items() if k != "image_size"}
    model = model_from_config({**config, "thinker_config": {**thinker, "vision_config": vision}})
    assert model.tower is None
    assert any("audio" in note for note in model.not_modelled)


# Qwen3-ASR: vLLM 0.33.0's meta build of its own Qwen3ASRConfig's defaults (class_configs.json; the thinker_config
# form both engines read): audio_tower 1,299,789,568 B / 670,357,248 B at TP 1 / 2, the Qwen3-Omni audio encoder
# above at the same sizes (output_dim 3584), no vision tower; SGLang 0.5.23 the same (both judged equal).
ASR_TOWER_BYTES = {1: 1_299_789_568, 2: 670_357_248}


@pytest.mark.parametrize("tp", [1, 2])
def test_qwen3_asr_audio_encoder(tp: int) -> None:
    model = model_from_config(_config("Qwen3ASRForConditionalGeneration"))
    assert _tower_bytes(_config("Qwen3ASRForConditionalGeneration"), tp) == ASR_TOWER_BYTES[tp]
    assert model.tower is not None
    assert 2 * model.tower.params_per_rank(tp, SGLANG_SPLIT) == ASR_TOWER_BYTES[tp]
    assert model.not_modelled == () and verdict("Qwen3ASRForConditionalGeneration")[0] == "wrapper"


# Granite-Speech (and -Plus, the same modules): vLLM 0.33.0's meta build of GraniteSpeechConfig's defaults: encoder
# 549,616,212 B / 381,676,074 B at TP 1 / 2, projector 216,579,584 B (whole). The encoder by hand (hidden 1024,
# ff 4096, 8 × 128 heads, conv 2048, kernel 15, max_pos_emb 512, 10 layers, input 160, output 42):
#   split: two feed-forwards a layer, up_proj 1024 × 4096 + 4096 and down_proj 4096 × 1024 (8,392,704 each),
#   × 2 × 10 = 167,854,080, out 1024 × 42 + 42 and out_mid 42 × 1024: 167,940,138;
#   whole a layer: two ff LayerNorms and down_proj biases 2 × 3,072, attention 2,048 + 1024 × 1024 + 1024 × 2048
#   + 1024 × 1024 + 1,024 + 1025 × 128 = 4,328,576, convolution 2,048 + 2 × 2048 × 1024 + 4,096 + 2048 × 15 + 4,096
#   + 1024 × 2048 + 1,024 = 6,333,440, post_norm 2,048: 10,670,208, × 10; input_linear 160 × 1024 + 1024, out_mid's
#   bias 1,024: 106,867,968. TP 1: 274,808,106 × 2 B; TP 2: (106,867,968 + 83,970,069) × 2 B = 381,676,074.
GRANITE_TOWER_BYTES = {1: 549_616_212 + 216_579_584, 2: 381_676_074 + 216_579_584}


@pytest.mark.parametrize(
    "name", ["GraniteSpeechForConditionalGeneration", "GraniteSpeechPlusForConditionalGeneration"]
)
@pytest.mark.parametrize("tp", [1, 2])
def test_granite_speech_encoder_and_projector(name: str, tp: int) -> None:
    model = model_from_config(_config(name))
    assert _tower_bytes(_config(name), tp) == GRANITE_TOWER_BYTES[tp]
    assert model.tower is not None and model.tower.tp_split_params == 167_940_138
    assert model.multimodal and model.not_modelled == ()


def test_granite_speech_head_tied_by_the_top_config() -> None:
    """vLLM 0.33.0 with_hf_config copies GraniteSpeechConfig's tie_word_embeddings (True) over its text_config's
    (False): the meta build's language_model holds no lm_head (13,214,687,232 B at TP 1; 32,000 × 4,096 × 2 B more
    untied)."""
    model = model_from_config(_config("GraniteSpeechForConditionalGeneration"))
    assert model.outer_tie_word_embeddings is True and not model.tie_word_embeddings


def test_a_top_level_tie_is_the_one_the_thinker_is_read_with() -> None:
    """nesting.served_config: a Qwen2.5-Omni config.json stating tie_word_embeddings at the top (vLLM 0.33.0
    with_hf_config copies that into the text config) is read with it, not with the thinker's own."""
    config = {**_config("Qwen2_5OmniModel"), "tie_word_embeddings": False}
    assert model_from_config(config).outer_tie_word_embeddings is False


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("CohereAsrForConditionalGeneration", "cross-attention KV"),
    ],
)
def test_speech_classes_left_say_what_stops_them(name: str, words: str) -> None:
    kind, why = verdict(name)
    assert kind == "not_modelled" and words in why


# The weights row's note names what the engines build there (vLLM 0.33.0's meta builds, the registry rows'
# `param_bytes` children): Qwen2-Audio `audio_tower` + `multi_modal_projector` (no vision module); GLM-ASR and
# Granite-Speech an audio encoder and projector; Qwen2.5-Omni's thinker `audio_tower` and `visual`; Step3-VL
# `vision_model` alone. Before: every one read "the vision tower and its projector", and every row was keyed
# `vision` (#27): the row is keyed by the kind the description says, audio / vision / both.
@pytest.mark.parametrize(
    ("name", "kind", "words"),
    [
        ("Qwen2AudioForConditionalGeneration", "audio", "Qwen2AudioEncoderConfig: the audio encoder and its projector"),
        ("GlmAsrForConditionalGeneration", "audio", "GlmAsrEncoderConfig: the audio encoder and its projector"),
        ("GraniteSpeechForConditionalGeneration", "audio",
         "GraniteSpeechEncoderConfig: the audio encoder and its projector"),
        ("Qwen2_5OmniModel", "vision_audio", "the vision tower, the audio encoder and their projectors"),
        ("Step3VLForConditionalGeneration", "vision", "Step3VisionEncoderConfig: the vision tower and its projector"),
    ],
)
def test_the_tower_row_names_an_audio_encoder(name: str, kind: str, words: str) -> None:
    book = weights_book(model_from_config(_config(name)), ParallelLayout(tp=1), range(0, 1), first_stage=True,
                        last_stage=False)  # fmt: skip
    (row,) = [row for row in book.rows if row.component in TOWER_KINDS]
    assert row.component == kind and words in row.note


def test_a_tower_row_kind_outside_the_three_is_refused() -> None:
    """The row's kind is a typed value (`TowerKind`), not any string: a misspelt one would make a weights row no view
    and no engine-diff sum (benchmarks/engine_diff/kvtop_side.py) reads."""
    assert TOWER_KINDS == ("vision", "audio", "vision_audio")
    with pytest.raises(ValidationError):
        TowerSpec(params=1, tp_split_params=0, config_class="X", source="test", kind="speech")  # type: ignore[arg-type]


@pytest.mark.parametrize("tp", [1, 2])
def test_qwen2_audio_without_audio_config_builds_the_default_encoder(tp: int) -> None:
    """transformers 5.20.2 Qwen2AudioConfig builds audio_config from sub_configs_defaults where the config has none
    (d_model 1280, 32 layers, ffn 5120, 128 mel bins, 1500 positions: Whisper-large's, as the registry default
    states them), so the engines build the same encoder: the tower bytes of the meta build above (before: no tower
    row, 1,284,431,872 B left out under a note naming a vision tower)."""
    data = _config("Qwen2AudioForConditionalGeneration")
    del data["audio_config"]
    assert _tower_bytes(data, tp) == ENGINE_TOWER_BYTES["Qwen2AudioForConditionalGeneration"]
    assert not any("vision tower" in note for note in model_from_config(data).not_modelled)
