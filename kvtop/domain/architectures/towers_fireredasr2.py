"""FireRedASR2's Conformer encoder and adapter (FireRedASR2ForConditionalGeneration), counted as vLLM 0.33.0
models/fireredasr2.py and conformer_encoder.py build them from `audio_encoder_conf` (ConformerEncoder's keyword
arguments: idim, n_layers_enc, n_head, d_model, kernel_size 33, pe_maxlen 5000) and `encoder_downsample_rate`; every
linear a ReplicatedLinear or a plain torch module: whole on every rank. SGLang 0.5.23 registers no such class.

- `input_preprocessor` Conv2dSubsampling(idim, d_model, 32 channels): Conv2d(1, 32, 3, 2) and Conv2d(32, 32, 3, 2),
  biased; `out` (32 × ((idim − 1) ÷ 2 − 1) ÷ 2 → d_model, biased);
- `positional_encoding` RelPositionalEncoding: a buffer (no parameter);
- `n_layers_enc` RelPosEmbConformerBlocks of width d: two ConformerFeedForwards (a LayerNorm, d → 4d and 4d → d,
  biased); RelPosMultiHeadAttention (w_qs, w_ks, w_vs, fc and linear_pos d → d unbiased, three LayerNorms on q, k,
  v, pos_bias_u and pos_bias_v of n_head × d ÷ n_head each); ConformerConvolution (a LayerNorm, pointwise_conv1
  d → 4d, depthwise_conv of 2d channels × kernel_size, pointwise_conv2 2d → d, unbiased; `batch_norm` a LayerNorm of
  2d); a final LayerNorm;
- `encoder_projector` FireRedASR2Adapter: linear1 (d × encoder_downsample_rate → hidden_size) and linear2 (hidden →
  hidden), biased.
The language model is Qwen2ForCausalLM over config.json itself (table_dense_more `fireredasr2`).
"""

from __future__ import annotations

from kvtop.domain.architectures.towers_fields import Tower
from kvtop.domain.config_types import ConfigSection, Dim, Heads, Hidden, Layers
from kvtop.domain.tower_spec import TowerSpec

CONFIG_CLASS = "ConformerEncoder (audio_encoder_conf)"
SOURCE = "vLLM 0.33.0 models/fireredasr2.py (FireRedASR2Encoder, FireRedASR2Adapter), models/conformer_encoder.py"
CHANNELS = 32  # Conv2dSubsampling's out_channels (its default; fireredasr2.py passes none)


class ConformerConf(ConfigSection):
    """`audio_encoder_conf`: ConformerEncoder's arguments (kernel_size and pe_maxlen: its defaults where absent)."""

    idim: Dim
    n_layers_enc: Layers
    n_head: Heads
    d_model: Hidden
    kernel_size: Dim = 33


class FireRedOuterFields(ConfigSection):
    """The config's `encoder_downsample_rate` (fireredasr2.py reads it; FireRedASR2Adapter's default 2)."""

    encoder_downsample_rate: Dim = 2


def fireredasr2(conf: ConformerConf, outer: FireRedOuterFields, text_hidden: int) -> TowerSpec:
    """The encoder and adapter as vLLM builds them (module docstring): whole on every rank."""
    d = conf.d_model
    bins = ((conf.idim - 1) // 2 - 1) // 2  # the mel axis after two stride-2 3 × 3 convs
    stem = CHANNELS * 9 + CHANNELS + CHANNELS * CHANNELS * 9 + CHANNELS + CHANNELS * bins * d + d
    feed_forward = 2 * d + d * 4 * d + 4 * d + 4 * d * d + d
    attention = 5 * d * d + 3 * 2 * d + 2 * d  # w_qs, w_ks, w_vs, fc, linear_pos; three LayerNorms; pos_bias_u, _v
    convolution = 2 * d + d * 4 * d + 2 * d * conf.kernel_size + 2 * 2 * d + 2 * d * d
    block = 2 * feed_forward + attention + convolution + 2 * d
    adapter = d * outer.encoder_downsample_rate * text_hidden + text_hidden + text_hidden * text_hidden + text_hidden
    whole = stem + conf.n_layers_enc * block + adapter
    return TowerSpec(params=whole, tp_split_params=0, config_class=CONFIG_CLASS, source=SOURCE)


# vLLM reads hf_config.audio_encoder_conf unguarded: a config without it does not build (no default)
TOWER = Tower(CONFIG_CLASS, SOURCE, kind="fireredasr2", section="audio_encoder_conf", audio_counted=True)
