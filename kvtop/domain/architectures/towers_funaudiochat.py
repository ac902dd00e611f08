"""Fun-Audio-Chat's continuous and discrete audio encoders (FunAudioChatForConditionalGeneration, outer model_type
`funaudiochat`), counted as vLLM 0.33.0 models/funaudiochat.py builds them from `audio_config` (vLLM's
transformers_utils/configs/funaudiochat.py FunAudioChatAudioEncoderConfig: its class defaults where absent). SGLang
0.5.23 registers no such class.

- `continuous_audio_tower` FunAudioChatAudioEncoder: conv1 num_mel_bins → d_model and conv2 d_model → d_model,
  kernel 3, nn.Conv1d biased; a sinusoid position buffer (no parameter); `encoder_layers` layers of qkv_proj
  (QKVParallelLinear, bias=True: a K bias the checkpoint lacks, zeroed at build) and out_proj (RowParallelLinear,
  biased), split over TP (QKVParallelLinear divides the heads, asserting); self_attn_layer_norm and final_layer_norm;
  fc1 d_model → encoder_ffn_dim and fc2 back, nn.Linear biased: whole; then ln_post, `proj` (nn.Linear d_model →
  output_dim, biased) and `audio_bos_eos_token` (nn.Embedding 2 × output_dim): whole. The AvgPool1d holds none.
- `audio_tower` FunAudioChatDiscreteEncoder: embed_tokens (nn.Embedding codebook_size × output_dim),
  output_matching and continual_output_matching (nn.Linear output_dim², no bias): whole. vLLM reads
  `int(config.codebook_size)`: a config without it does not build (FunAudioChatAudioEncoderConfig's default None).
The checkpoint's audio_invert_tower (the speech decoder) is not built. The language model is Qwen3ForCausalLM over
`text_config` whatever its model_type (funaudiochat.py `architectures=["Qwen3ForCausalLM"]`; nesting.FIXED_TEXT).
"""

from __future__ import annotations

from kvtop.domain.architectures.towers_audio import WhisperEncoderFields
from kvtop.domain.architectures.towers_fields import Tower
from kvtop.domain.config_types import ConfigSection, Dim, Heads, Hidden
from kvtop.domain.tower_spec import TowerSpec

CONFIG_CLASS = "FunAudioChatAudioEncoderConfig"
SOURCE = "vLLM 0.33.0 models/funaudiochat.py, transformers_utils/configs/funaudiochat.py"
OUTER_TYPE = "funaudiochat"
ENCODER = "FunAudioChatAudioEncoder"  # the block class vLLM's TowerSplit.blocks names (attention always split)
WHISPER_LARGE = {"d_model": 1280, "encoder_layers": 32, "encoder_ffn_dim": 5120, "num_mel_bins": 128,
                 "max_source_positions": 1500}  # fmt: skip


class FunAudioChatAudioFields(ConfigSection):
    """FunAudioChatAudioEncoderConfig's fields beyond the Whisper sizes (its class defaults; codebook_size has
    none the engine builds: required)."""

    encoder_attention_heads: Heads = 20
    output_dim: Hidden = 3584
    codebook_size: Dim


def funaudiochat(sizes: WhisperEncoderFields, audio: FunAudioChatAudioFields) -> TowerSpec:
    """Both encoders as vLLM builds them (module docstring): the attention split over TP, the rest whole."""
    d, ffn, layers, out = sizes.d_model, sizes.encoder_ffn_dim, sizes.encoder_layers, audio.output_dim
    blocks = layers * (3 * d * d + 2 * d + d * d)  # qkv with q's and v's biases, out_proj's weight
    whole = sizes.num_mel_bins * d * 3 + d + d * d * 3 + d  # conv1, conv2
    whole += layers * (d + 2 * 2 * d + d * ffn + ffn + ffn * d + d)  # out_proj's bias, two LayerNorms, fc1, fc2
    whole += 2 * d + d * out + out + 2 * out  # ln_post, proj, audio_bos_eos_token
    whole += audio.codebook_size * out + 2 * out * out  # embed_tokens, output_matching, continual_output_matching
    return TowerSpec(params=whole + blocks, tp_split_params=0, config_class=CONFIG_CLASS, source=SOURCE,
                     head_split_params=blocks, heads=audio.encoder_attention_heads, block_class=ENCODER,
                     k_bias_params=layers * d)  # fmt: skip


# audio_config absent: FunAudioChatConfig builds the class defaults, whose codebook_size None vLLM cannot build
TOWER = Tower(CONFIG_CLASS, SOURCE, WHISPER_LARGE, kind="funaudiochat", section="audio_config", audio_counted=True)
