"""Phi-4-multimodal's audio encoder (the `cascades` conformer of `audio_processor.config`) and its two projections,
counted as vLLM 0.33.0 and SGLang 0.5.23 build them: every module a plain torch one, whole on every rank.

vLLM 0.33.0 / SGLang 0.5.23 phi4mm_audio.py `AudioEmbedding(config, **embd_layer.audio_embd_layer)`:
- `encoder`: `ConformerEncoder(**audio_processor.config)` (phi4mm_audio.py, its layers in phi4mm_utils.py):
  - `encoder_embedding` MeanVarianceNormLayer: global_mean and global_invstd of `encoder_embedding_config.input_size`;
  - `embed` NemoConvSubsampling ("dw_striding", `conv_channels` c, log2(time_reduction) halvings of the
    `input_size` mel bins, kernel 3 stride 2): Conv2d(1, c, 3) then, per further halving, a depthwise Conv2d(c, c,
    3, groups=c) and a pointwise Conv2d(c, c, 1), all biased; `out` Linear(c × the bins left, attention_dim);
  - `relative_attention_bias_layer` T5RelativeAttentionLogitBias: nn.Embedding(2 × t5_bias_max_distance (one
    max_distance where symmetric), heads ÷ attention_group_size);
  - `num_blocks` ConformerEncoderLayers of width d (attention_dim), each: two FeedForwards (a LayerNorm, a GLULinear
    d → 2 × linear_units, a Linear linear_units → d); MultiHeadedAttention (linear_q d → d, linear_k and linear_v
    d → d ÷ group, linear_out d ÷ group → d, biased); a ConvModule (a LayerNorm; where ext_pw_out_channel e: a
    Conv1d d → e of ext_pw_kernel_size and the GLU's Conv1d d → 2e with b1, b2 of e (a GLULinear where
    linear_glu_in_convm), ln1 e → d where e ≠ d; else two 3-vectors; a depthwise Conv1d d → d × multiplier of
    kernel_size, a pointwise Conv1d → depthwise_seperable_out_channel s, ln2 s → d where s ≠ d; a BatchNorm1d
    where batch_norm); two LayerNorms;
- `audio_projection` and `audio_projection_for_vision` (projection_cls "mlp"): each Linear(d × downsample_rate →
  the language model's width) then Linear(width → width), biased; "linear": audio_projection only, d → width.
Meta-built (registry sweep, microsoft--Phi-4-multimodal-instruct: 24 blocks of 1024, linear_units 1536, conv 1024,
time_reduction 8): embed_tokens_extend 932,832,832 B at TP 1 and at TP 2.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from kvtop.domain.config_types import ConfigSection, Dim, Flag, Heads, Hidden, Intermediate, Layers

SOURCE = "vLLM 0.33.0 / SGLang 0.5.23 phi4mm_audio.py (AudioEmbedding, ConformerEncoder), phi4mm_utils.py"
KERNEL, STRIDE = 3, 2  # NemoConvSubsampling's dw_striding convolutions


class Phi4MMAudioEmbedFields(ConfigSection):
    """`embd_layer.audio_embd_layer`: AudioEmbedding's keyword arguments (absent: its defaults)."""

    projection_cls: Literal["linear", "mlp"] = "linear"
    downsample_rate: Dim = 1
    use_qformer: Flag = False
    use_conv_downsample: Flag = False


class ConformerFields(ConfigSection):
    """`audio_processor.config`: ConformerEncoder's arguments that size it (absent: its defaults)."""

    input_size: Dim
    attention_dim: Hidden = 256
    attention_heads: Heads = 4
    linear_units: Intermediate = 2048
    num_blocks: Layers = 6
    input_layer: Literal["nemo_conv"] = "nemo_conv"
    time_reduction: Dim = 4
    ext_pw_out_channel: int = Field(default=0, strict=True, ge=0, le=1 << 20)
    ext_pw_kernel_size: Dim = 1
    depthwise_seperable_out_channel: int = Field(default=256, strict=True, ge=0, le=1 << 20)
    depthwise_multiplier: Dim = 1
    kernel_size: Dim = 3
    bias_in_glu: Flag = True
    linear_glu_in_convm: Flag = False
    batch_norm: Flag = False
    attention_group_size: Dim = 1
    nemo_conv_settings: dict[str, Any] = Field(default_factory=dict)
    relative_attention_bias_args: dict[str, Any] = Field(default_factory=dict)
    encoder_embedding_config: dict[str, Any] = Field(default_factory=dict)


def _linear(fan_in: int, fan_out: int, bias: bool = True) -> int:
    return fan_in * fan_out + (fan_out if bias else 0)


def _subsampling(conformer: ConformerFields) -> int | None:
    """NemoConvSubsampling's parameters ("dw_striding"); None for another subsampling or a factor not a power of 2."""
    settings = conformer.nemo_conv_settings
    halvings = conformer.time_reduction.bit_length() - 1
    if settings.get("subsampling", "dw_striding") != "dw_striding" or conformer.time_reduction != 1 << halvings:
        return None
    channels = settings.get("conv_channels", 256)
    if not isinstance(channels, int) or halvings < 1:
        return None
    # calc_length_int: each halving (bins + paddings − kernel) ÷ stride + 1, floored; causal pads 2 + 1, else 1 + 1
    paddings = (KERNEL - 1) + (STRIDE - 1) if settings.get("is_causal", False) else 2 * ((KERNEL - 1) // 2)
    bins = conformer.input_size
    for _ in range(halvings):
        bins = (bins + paddings - KERNEL) // STRIDE + 1
    convs = _linear(KERNEL * KERNEL, channels)  # Conv2d(1, c, 3)
    convs += (halvings - 1) * (_linear(KERNEL * KERNEL, channels) + _linear(channels, channels))  # depthwise, 1×1
    return convs + _linear(channels * bins, conformer.attention_dim)


def _block(conformer: ConformerFields) -> int:
    """One ConformerEncoderLayer's parameters."""
    d, units, glu_bias = conformer.attention_dim, conformer.linear_units, conformer.bias_in_glu
    feed_forward = 2 * d + _linear(d, 2 * units, glu_bias) + _linear(units, d)
    kv = d // conformer.attention_group_size
    attention = _linear(d, d) + 2 * _linear(d, kv) + _linear(kv, d)
    ext, dw = conformer.ext_pw_out_channel, d * conformer.depthwise_multiplier
    conv = 2 * d + (2 * d if conformer.batch_norm else 0)
    if ext:
        conv += _linear(d * conformer.ext_pw_kernel_size, ext)  # ext_pw_conv_1d
        glu = _linear(d, 2 * ext, glu_bias) if conformer.linear_glu_in_convm else _linear(d * conformer.ext_pw_kernel_size, 2 * ext)
        conv += glu + (2 * ext if glu_bias and not conformer.linear_glu_in_convm else 0)  # b1, b2
        conv += _linear(ext, d) if ext != d else 0  # ln1
    else:
        conv += 3 + 3  # pw_conv_simplify_w, pw_conv_simplify_b
    conv += _linear(conformer.kernel_size, dw)  # the depthwise Conv1d: (d × multiplier, 1, kernel) and its bias
    out = conformer.depthwise_seperable_out_channel
    if out:
        conv += _linear(dw, out) + (_linear(out, d) if out != d else 0)  # pw_conv, ln2
    elif conformer.depthwise_multiplier != 1:
        conv += _linear(dw, d)  # ln2
    return 2 * feed_forward + attention + conv + 2 * 2 * d  # layer_norm_att, layer_norm


def phi4mm_audio(conformer: ConformerFields, embed: Phi4MMAudioEmbedFields, text_hidden: int) -> int | None:
    """The audio encoder's and its projections' parameters (whole on every rank); None where the engines build
    more than kvtop counts (a Q-Former or a convolutional downsampler, another subsampling)."""
    subsampling = _subsampling(conformer)
    if subsampling is None or embed.use_qformer or embed.use_conv_downsample:
        return None
    bias_args = conformer.relative_attention_bias_args
    distance = bias_args.get("t5_bias_max_distance", 1000)
    if bias_args.get("type") != "t5" or not isinstance(distance, int):
        return None  # the engines build no other relative bias (NotImplementedError)
    rows = distance if bias_args.get("t5_bias_symmetric", False) else 2 * distance
    mel = conformer.encoder_embedding_config.get("input_size")
    if not isinstance(mel, int):
        return None  # the engines assert an encoder_embedding_config
    heads = conformer.attention_heads // conformer.attention_group_size
    encoder = 2 * mel + subsampling + rows * heads + conformer.num_blocks * _block(conformer)
    d = conformer.attention_dim * embed.downsample_rate
    if embed.projection_cls == "linear":
        return encoder + _linear(conformer.attention_dim, text_hidden)
    return encoder + 2 * (_linear(d, text_hidden) + _linear(text_hidden, text_hidden))
