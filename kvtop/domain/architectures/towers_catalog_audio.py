"""The speech towers with no family module of their own, as data: one `Tower` per audio-only family (an audio
encoder and its projector read from the config's `audio_config`, Granite-Speech's `encoder_config`; no vision
transformer), and `WHISPER_LARGE`, the Whisper-large sizes their config classes default to. Split from
towers_catalog.py (which keeps the vision towers, the omni towers that hold both, and the by-type tables naming
all of them) so each module stays readable; towers_audio.py and towers_moss.py read them.
"""

from __future__ import annotations

from collections.abc import Mapping

from kvtop.domain.architectures import towers_moss
from kvtop.domain.architectures.towers_fields import Tower

# --- Audio encoders (towers_audio: the `audio_config` section; audio_counted: no audio note) ---
WHISPER_LARGE: Mapping[str, int] = {"d_model": 1280, "encoder_layers": 32, "encoder_ffn_dim": 5120,
                                   "num_mel_bins": 128, "max_source_positions": 1500}  # fmt: skip
# Qwen2-Audio: transformers' Qwen2AudioEncoder (a Whisper encoder) and Qwen2AudioMultiModalProjector, built whole
# by vLLM 0.33.0 and SGLang 0.5.23 qwen2_audio.py; Qwen2AudioEncoderConfig's class defaults where a field is absent,
# and where the section is: transformers 5.20.2 Qwen2AudioConfig.sub_configs_defaults builds it with Whisper-large's
# sizes (d_model 1280, 32 layers, ffn 5120, 128 mel bins, 1500 positions)
QWEN2_AUDIO = Tower(
    "Qwen2AudioEncoderConfig", "transformers models/qwen2_audio; vLLM 0.33.0 / SGLang 0.5.23 qwen2_audio.py",
    WHISPER_LARGE, kind="qwen2_audio", section="audio_config", audio_counted=True,
    absent_default={},
)  # fmt: skip
# AudioFlamingo3: vLLM 0.33.0 audioflamingo3.py (AudioFlamingo3Encoder, a Qwen2AudioEncoder, and a two-linear
# projector, whole); AudioFlamingo3EncoderConfig's class defaults (Whisper-large's sizes) where a field is absent
AUDIOFLAMINGO3 = Tower(
    "AudioFlamingo3EncoderConfig", "transformers models/audioflamingo3; vLLM 0.33.0 audioflamingo3.py",
    WHISPER_LARGE, kind="audioflamingo3", section="audio_config", audio_counted=True, absent_default={},
)  # fmt: skip
# Qwen3-ASR's thinker: the same audio encoder alone (vLLM 0.33.0 / SGLang 0.5.23 qwen3_asr.py; vLLM's
# Qwen3ASRConfig's audio defaults are Whisper-large's sizes)
QWEN3_ASR = Tower(
    "Qwen3ASRAudioEncoderConfig", "vLLM 0.33.0 configs/qwen3_asr.py, qwen3_asr.py; SGLang 0.5.23 qwen3_asr.py",
    WHISPER_LARGE, kind="qwen3_asr", section="audio_config", audio_counted=True, absent_default={},
)  # fmt: skip
# Granite-Speech (and -Plus): vLLM 0.33.0 granite_speech.py's Conformer CTC encoder and Q-Former projector
GRANITE_SPEECH = Tower(
    "GraniteSpeechEncoderConfig", "transformers models/granite_speech; vLLM 0.33.0 granite_speech.py, blip2.py",
    kind="granite_speech", section="encoder_config", audio_counted=True, absent_default={},
)  # fmt: skip
# GLM-ASR: GlmAsrEncoder and GlmAsrMultiModalProjector (towers_audio.glm_asr), built its own way by each engine
GLM_ASR = Tower(
    "GlmAsrEncoderConfig", "transformers models/glmasr; vLLM 0.33.0 glmasr.py; SGLang 0.5.23 glmasr.py",
    kind="glm_asr", section="audio_config", audio_counted=True, absent_default={},
)  # fmt: skip
# MOSS-Transcribe-Diarize (towers_moss): WhisperConfig's class defaults where audio_config leaves a field out; where the
# file has no audio_config, vLLM 0.33.0's MossTranscribeDiarizeConfig fills in Whisper-medium's sizes
MOSS_TD = Tower(
    towers_moss.CONFIG_CLASS, towers_moss.SOURCE, kind="moss_td", section="audio_config", audio_counted=True,
    absent_default={"num_mel_bins": 80, "d_model": 1024, "encoder_layers": 24, "encoder_attention_heads": 16,
                    "encoder_ffn_dim": 4096, "max_source_positions": 1500},
)  # fmt: skip
# MOSS-Audio (towers_moss): vLLM 0.33.0 moss_audio.py MossAudioEncoderConfig's defaults where a field is absent
MOSS_AUDIO = Tower("MossAudioEncoderConfig", towers_moss.SOURCE, kind="moss_audio", section="audio_config",
                   audio_counted=True, absent_default={})  # fmt: skip
