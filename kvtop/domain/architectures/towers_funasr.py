"""Fun-ASR's SANM audio encoder and adaptor (FunASRForConditionalGeneration), counted as vLLM 0.33.0 models/funasr.py
builds them. SGLang 0.5.23 registers no such class.

The config is a Qwen3Config (FunASRProcessingInfo reads it as one) with an `audio_encoder_conf` dict:
FunASREncoder builds `audio_encoder` SenseVoiceEncoderSmall(input_size=560, **audio_encoder_conf) (output_size 256,
attention_heads 4, linear_units 2048, num_blocks 6, tp_blocks 0, kernel_size 11: its defaults where absent):
- `encoders0` (one layer from 560 wide), `encoders` (num_blocks − 1) and `tp_encoders` (tp_blocks) EncoderLayerSANMs:
  MultiHeadedAttentionSANM's linear_q_k_v (in → 3 × output_size) and out_proj, ReplicatedLinear biased, and its
  fsmn_block (a depthwise Conv1d of output_size × kernel_size, unbiased): whole; PositionwiseFeedForward w_1
  (ColumnParallelLinear output_size → linear_units) and w_2 (RowParallelLinear back), biased: split over TP, w_2's
  bias whole; norm1 (of the layer's input width) and norm2, LayerNorms: whole;
- after_norm and tp_norm LayerNorms; the sinusoid position encoder holds no parameter;
and `audio_adaptor` Transformer with constants (funasr.py passes them, not the config): linear1 ColumnParallelLinear
512 → 2048 and linear2 RowParallelLinear 2048 → 1024, biased; two EncoderLayers of width 1024 (qkv a
QKVParallelLinear of 8 heads, out_proj Row, biased; PositionwiseFeedForward 1024 → 256 → 1024; two LayerNorms).
Split over TP: Column layers with their biases and Row weights; whole: Row biases, norms and the replicated SANM
attention. The language model is Qwen3Model over the config itself and a top-level ParallelLMHead (table_dense:
the qwen3 entry; this tower by class, towers_catalog.TOWERS_BY_CLASS).
"""

from __future__ import annotations

from kvtop.domain.architectures.towers_fields import Tower
from kvtop.domain.config_types import ConfigSection, Dim, Heads, Hidden, Intermediate, LayerCount, Layers
from kvtop.domain.tower_spec import TowerSpec

CONFIG_CLASS = "SenseVoiceEncoderSmall (audio_encoder_conf)"
SOURCE = "vLLM 0.33.0 models/funasr.py (FunASREncoder: SenseVoiceEncoderSmall, Transformer)"
INPUT_SIZE = 560  # FunASREncoder's input_size (80 mel bins × 7 stacked frames)
ADAPTOR_IN, ADAPTOR_FFN, ADAPTOR_OUT, ADAPTOR_LAYERS = 512, 2048, 1024, 2  # funasr.py's constants


class SenseVoiceConf(ConfigSection):
    """`audio_encoder_conf`: SenseVoiceEncoderSmall's sizing arguments (its defaults where absent)."""

    output_size: Hidden = 256
    attention_heads: Heads = 4
    linear_units: Intermediate = 2048
    num_blocks: Layers = 6
    tp_blocks: LayerCount = 0
    kernel_size: Dim = 11


def _linear(fan_in: int, fan_out: int) -> int:
    return fan_in * fan_out + fan_out


def funasr(conf: SenseVoiceConf) -> TowerSpec:
    """The SANM encoder and the adaptor as vLLM builds them (module docstring)."""
    out, units = conf.output_size, conf.linear_units

    def sanm(in_size: int) -> tuple[int, int]:  # (whole, split) of one EncoderLayerSANM
        whole = _linear(in_size, 3 * out) + _linear(out, out) + out * conf.kernel_size + out + 2 * in_size + 2 * out
        return whole, _linear(out, units) + units * out

    first, rest = sanm(INPUT_SIZE), sanm(out)
    layers = conf.num_blocks - 1 + conf.tp_blocks
    whole = first[0] + layers * rest[0] + 2 * 2 * out  # after_norm, tp_norm
    split = first[1] + layers * rest[1]
    a, f = ADAPTOR_OUT, ADAPTOR_OUT // 4
    split += _linear(ADAPTOR_IN, ADAPTOR_FFN) + ADAPTOR_FFN * a  # linear1, linear2's weight
    whole += a  # linear2's bias
    block_split = _linear(a, 3 * a) + a * a + _linear(a, f) + f * a  # qkv, out_proj's weight, w_1, w_2's weight
    block_whole = a + 2 * 2 * a + a  # out_proj's bias, norm1, norm2, w_2's bias
    split += ADAPTOR_LAYERS * block_split
    whole += ADAPTOR_LAYERS * block_whole
    return TowerSpec(params=whole + split, tp_split_params=split, config_class=CONFIG_CLASS, source=SOURCE)


# vLLM reads hf_config.audio_encoder_conf unguarded: a config without it does not build (no default)
TOWER = Tower(CONFIG_CLASS, SOURCE, kind="funasr", section="audio_encoder_conf", audio_counted=True)
