"""MiMo-V2.5's towers (held-out wave 5, `mimo_v2` with a vision_config: vLLM 0.33.0 serves it as
MiMoV2OmniForCausalLM), against vLLM 0.33.0's meta build of the config in the registry sweep
(tests/data/engine_diff/registry/vllm-0.33.0.json, XiaomiMiMo--MiMo-V2.5): `visual` 1,457,188,864 B at TP 1 and
730,705,920 B at TP 2, `audio_encoder` 833,419,264 B at both (no audio_tokenizer folder beside the config)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtop.domain.architectures.towers_mimo import AUDIO_TOKENIZER_NOT_MODELLED
from kvtop.domain.errors import InputError
from kvtop.domain.model_config import model_from_config

WAVE5 = Path(__file__).resolve().parents[1] / "data" / "configs" / "heldout" / "wave5"
BF16 = 2


def config(name: str = "XiaomiMiMo--MiMo-V2.5") -> dict:
    return dict(json.loads((WAVE5 / f"{name}.json").read_text()))


def test_mimo_v25_towers_as_vllm_builds_them() -> None:
    """By hand from mimo_v2_omni.py / mimo_audio.py (Mimo_VLVisionConfig's qk_channels = kv_channels = 64 default):
    ViT width 1,280, 28 blocks, 32 heads, 8 KV heads, MLP 4,608: patch Conv3d [1,280, 3, 2, 16, 16]; per block two
    RMSNorms, qkv [3,072, 1,280] + bias (32 × 64 + 2 × 8 × 64 rows), proj [1,280, 2,048] + bias, gate_up
    [9,216, 1,280] + bias, down [1,280, 4,608] + bias; sinks [32] on the 24 blocks outside fullatt_block_indexes;
    merger RMSNorm [1,280], [5,120, 5,120] and [4,096, 5,120]. Audio: Qwen2Model (vocab 151,936 × 1,024, 6 layers of
    q/k/v [1,024, 1,024] + bias, o [1,024, 1,024], MLP 3 × [4,096, 1,024], two norms; final norm), 20 speech
    embeddings [1,280, 1,024], projection [16,384, 4,096] and [4,096, 16,384]."""
    w, m = 1280, 4608
    split = 28 * (w * 3072 + 3072 + 2048 * w + 2 * (w * m + m) + m * w) + 5120 * 5120 + 4096 * 5120
    whole = 3 * 2 * 16 * 16 * w + 28 * 4 * w + 24 * 32 + w
    audio = 151936 * 1024 + 6 * (3 * (1024 * 1024 + 1024) + 1024 * 1024 + 3 * 1024 * 4096 + 2 * 1024) + 1024
    audio += 20 * 1280 * 1024 + 2 * 4096 * 16384
    assert (whole + split) * BF16 == 1_457_188_864 and (whole + split // 2) * BF16 == 730_705_920
    assert audio * BF16 == 833_419_264
    tower = model_from_config(config(), source="mimo-v2.5").tower
    assert tower is not None
    assert tower.params_per_rank(1) * BF16 == 1_457_188_864 + 833_419_264
    assert tower.params_per_rank(2) * BF16 == 730_705_920 + 833_419_264


def test_the_audio_tokenizer_is_named_not_modelled_and_a_text_only_config_has_no_tower() -> None:
    m = model_from_config(config(), source="mimo-v2.5")
    assert m.not_modelled == (AUDIO_TOKENIZER_NOT_MODELLED,)  # the tower's notes replace "vision/audio not modelled"
    pro = model_from_config(config("XiaomiMiMo--MiMo-V2.5-Pro"), source="mimo-v2.5-pro")
    assert pro.tower is None and pro.not_modelled == ()


def test_a_vision_config_without_audio_builds_no_audio_encoder() -> None:
    # MiMoV2OmniForCausalLM: audio_encoder None where the config has no audio_config
    data = {key: value for key, value in config().items() if key != "audio_config"}
    tower = model_from_config(data, source="mimo-v2.5").tower
    assert tower is not None and tower.params_per_rank(1) * BF16 == 1_457_188_864


def test_a_speech_vocab_list_shorter_than_the_channels_is_refused() -> None:
    data = config()
    data["audio_config"] = {**data["audio_config"], "speech_vocab_size": "1025-1025"}
    with pytest.raises(InputError, match="speech_vocab_size"):
        model_from_config(data, source="mimo-v2.5")
