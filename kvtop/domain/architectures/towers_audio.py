"""Audio encoders as tower data: the Whisper-style encoder (a Conv1d stem, a position table, pre-LayerNorm
encoder layers, a final LayerNorm) that speech models put before their language model, and each family's
projector, counted as the engines build them (towers.py picks the kind; the section is `audio_config`).

The Whisper encoder (transformers models/whisper WhisperEncoder; Qwen2-Audio's Qwen2AudioEncoder is the same
modules plus a parameter-free AvgPool1d): conv1 num_mel_bins → d_model and conv2 d_model → d_model, kernel 3,
biased; embed_positions, max_source_positions × d_model (an nn.Embedding: a parameter though frozen);
`encoder_layers` layers of self_attn (q, v and out_proj biased, k not), self_attn_layer_norm, fc1 d_model →
encoder_ffn_dim and fc2 back, biased, final_layer_norm; then layer_norm. Built from transformers' classes
(nn.Linear) it is whole on every rank.

Qwen2-Audio (`qwen2_audio`): vLLM 0.33.0 qwen2_audio.py and SGLang 0.5.23 qwen2_audio.py both build
transformers' Qwen2AudioEncoder from `audio_config` and Qwen2AudioMultiModalProjector (one nn.Linear d_model →
the language model's width, biased): all whole. Its language model is Qwen2ForCausalLM over `text_config`.

AudioFlamingo3 (`audioflamingo3`): vLLM 0.33.0 audioflamingo3.py builds AudioFlamingo3Encoder (a subclass of
transformers' Qwen2AudioEncoder: the same parameters, its own AvgPool1d) over `audio_config` and
AudioFlamingo3MultiModalProjector: linear_1 audio width → text width and linear_2 text → text, nn.Linear biased by
the outer `projector_bias` (AudioFlamingo3Config's default True): all whole; the language model Qwen2ForCausalLM.

Qwen2.5-Omni (`qwen2_5_omni`): vLLM 0.33.0 registers Qwen2_5OmniModel and Qwen2_5OmniForConditionalGeneration as
Qwen2_5OmniThinkerForConditionalGeneration (qwen2_5_omni_thinker.py), which builds the thinker only, from
`thinker_config` (no talker, no token2wav: nesting.SERVED_SECTION): transformers' Qwen2_5OmniAudioEncoder (the
Whisper encoder with a sinusoid position buffer instead of a table, `audio_bos_eos_token` 2 × output_dim, ln_post
and `proj` d_model → output_dim, biased: whole), the Qwen2.5-VL vision transformer over `vision_config` (the
`qwen` tower kind, split as Qwen2.5-VL's) and Qwen2ForCausalLM over `text_config`.

Qwen3-Omni-MoE (`qwen3_omni`): vLLM 0.33.0 registers Qwen3OmniMoeForConditionalGeneration as
Qwen3OmniMoeThinkerForConditionalGeneration (qwen3_omni_moe_thinker.py: the thinker only, from `thinker_config`).
Its Qwen3OmniMoeAudioEncoder: three Conv2d 3 × 3 (1 → downsample_hidden_size, then → itself, biased), conv_out
(ReplicatedLinear downsample_hidden_size × the mel bins thrice halved → d_model, no bias), a sinusoid position buffer,
`encoder_layers` layers of qkv_proj (QKVParallelLinear, biased) and out_proj (Row, biased), two LayerNorms, fc1
(Column) and fc2 (Row), biased, then ln_post and proj1 (d_model → d_model) and proj2 (→ output_dim), ReplicatedLinear
biased. The layers' attention and MLP split over TP where encoder_attention_heads divides by it, else stay whole
(`disable_tp`): TowerSpec.head_split_params with `heads`. Its vision transformer (Qwen3Omni_VisionTransformer) is
Qwen3-VL's (the `qwen` kind with deepstack mergers) with a (image_size ÷ patch_size)² position table.

Qwen3-ASR (`qwen3_asr`): vLLM 0.33.0 and SGLang 0.5.23 qwen3_asr.py build, from `thinker_config`, the same
Qwen3OmniMoeAudioEncoder over its `audio_config` and Qwen3ForCausalLM over its `text_config`; no vision tower.

Granite-Speech (`granite_speech`; -Plus the same parameters): vLLM 0.33.0 granite_speech.py builds, from
`encoder_config`, GraniteSpeechCTCEncoder: input_linear (input_dim → hidden_dim, biased), `num_layers` Conformer
blocks (two feed-forwards of a LayerNorm, up_proj Column hidden → hidden × feedforward_mult and down_proj Row back,
biased; an attention of a LayerNorm, to_q and to_kv unbiased, to_out biased, a (2 × max_pos_emb + 1) × dim_head
relative-position table; a convolution module of a LayerNorm, a 1 × 1 up_conv to 2 × hidden × expansion, a
depthwise conv (kernel conv_kernel_size, no bias), a BatchNorm (weight, bias), a 1 × 1 down_conv; a post
LayerNorm), out (Column hidden → output_dim) and out_mid (Row back), biased; and GraniteSpeechEncoderProjector
from `projector_config`: `query` (window_size ÷ downsample_rate rows), vLLM blip2.py's Blip2QFormerModel
(towers_blip.qformer_params, its encoder_hidden_size the cross-attention's input) and `linear` (→ text, biased).
Column/Row layers split over TP (a row-parallel bias whole); the rest whole.

GLM-ASR (`glm_asr`; transformers models/glmasr GlmAsrEncoder over `audio_config`, GlmAsrEncoderConfig's defaults
where absent): conv1 num_mel_bins → hidden and conv2 hidden → hidden, kernel 3, biased; `num_hidden_layers` layers of
q_proj (biased), k_proj (unbiased), v_proj (biased; k and v num_key_value_heads × head_dim wide), o_proj (biased),
two LayerNorms, fc1 hidden → intermediate_size and fc2 back, biased; a final LayerNorm; rotary positions (no
parameter). GlmAsrMultiModalProjector: linear_1 intermediate_size → 2 × text width, linear_2 → text width, biased.
The language model LlamaForCausalLM over `text_config`. The engines build it apart (TowerSplit.blocks, by
`GlmAsrEncoder`): vLLM 0.33.0 glmasr.py its own layers, QKVParallelLinear with bias=True for q, k and v (a K bias
the checkpoint lacks: TowerSpec.k_bias_params), RowParallelLinear o_proj, Column/Row fc1 / fc2 and a Column/Row
projector, all split over TP; SGLang 0.5.23 glmasr.py transformers' own classes (nn.Linear): all whole, no K bias.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from pydantic import AliasChoices, Field

from kvtop.domain.architectures.towers_blip import qformer_params
from kvtop.domain.config_schema import validated
from kvtop.domain.config_types import ConfigSection, Dim, Flag, Heads, Hidden, Intermediate, Layers
from kvtop.domain.tower_spec import TowerSpec

# the Tower kinds towers.py reads here
KINDS = frozenset(
    {"qwen2_audio", "audioflamingo3", "qwen2_5_omni", "qwen3_omni", "qwen3_asr", "granite_speech", "glm_asr"}
)


class AudioEncoderFields(ConfigSection):
    """An `audio_config`'s encoder sizes under either family's names (WhisperConfig / Qwen2AudioEncoderConfig:
    d_model, encoder_layers, encoder_ffn_dim; Voxtral's, GLM-ASR's and AudioFlamingo3's encoder configs:
    hidden_size, num_hidden_layers, intermediate_size); absent: the Tower's class defaults."""

    d_model: Hidden | None = Field(default=None, validation_alias=AliasChoices("d_model", "hidden_size"))
    encoder_layers: Layers | None = Field(
        default=None, validation_alias=AliasChoices("encoder_layers", "num_hidden_layers")
    )
    encoder_ffn_dim: Intermediate | None = Field(
        default=None, validation_alias=AliasChoices("encoder_ffn_dim", "intermediate_size")
    )
    num_mel_bins: Dim | None = None
    max_source_positions: Dim | None = None


class WhisperEncoderFields(ConfigSection):
    """WhisperConfig's encoder fields (transformers models/whisper: its class defaults where absent)."""

    d_model: Hidden = 384
    encoder_layers: Layers = 4
    encoder_ffn_dim: Intermediate = 1536
    num_mel_bins: Dim = 80
    max_source_positions: Dim = 1500


def audio_sizes(section: dict[str, Any], defaults: Mapping[str, Any], where: str) -> WhisperEncoderFields:
    """The encoder's sizes: the section's (either family's names), the class defaults where it leaves one out."""
    stated = validated(AudioEncoderFields, section, source=where, prefix="audio_config.")
    given = {key: value for key, value in stated.model_dump().items() if value is not None}
    return WhisperEncoderFields(**{**defaults, **given})


def whisper_encoder(sizes: WhisperEncoderFields) -> int:
    """The parameters of transformers' WhisperEncoder (and Qwen2AudioEncoder) at these sizes (module docstring)."""
    d, ffn = sizes.d_model, sizes.encoder_ffn_dim
    convs = sizes.num_mel_bins * d * 3 + d + d * d * 3 + d
    layer = (
        4 * d * d + 3 * d + 2 * 2 * d + d * ffn + ffn + ffn * d + d
    )  # q, k, v, out (3 biases), 2 LN, fc1, fc2
    return convs + sizes.max_source_positions * d + sizes.encoder_layers * layer + 2 * d


class AudioFlamingo3OuterFields(ConfigSection):
    """AudioFlamingo3Config's `projector_bias` (transformers models/audioflamingo3: its class default True)."""

    projector_bias: Flag = True


def audioflamingo3(
    sizes: WhisperEncoderFields,
    outer: AudioFlamingo3OuterFields,
    text_hidden: int,
    config_class: str,
    source: str,
) -> TowerSpec:
    """AudioFlamingo3's audio_tower and multi_modal_projector (two linears, biased by projector_bias): whole."""
    bias = 2 * text_hidden if outer.projector_bias else 0
    whole = whisper_encoder(sizes) + sizes.d_model * text_hidden + text_hidden * text_hidden + bias
    return TowerSpec(params=whole, tp_split_params=0, config_class=config_class, source=source)


def qwen2_5_omni_audio(sizes: WhisperEncoderFields, output_dim: int) -> int:
    """Qwen2_5OmniAudioEncoder's parameters: the Whisper encoder less its position table (a buffer), with the
    bos/eos embedding (2 × output_dim) and `proj` (d_model → output_dim, biased)."""
    return (
        whisper_encoder(sizes)
        - sizes.max_source_positions * sizes.d_model
        + 2 * output_dim
        + (sizes.d_model * output_dim + output_dim)
    )


class OmniAudioFields(ConfigSection):
    """Qwen2_5OmniAudioEncoderConfig's `output_dim` (its class default 3584)."""

    output_dim: Hidden = 3584


class Qwen3OmniAudioFields(ConfigSection):
    """Qwen3OmniMoeAudioEncoderConfig's fields beyond the Whisper sizes (transformers models/qwen3_omni_moe: its
    class defaults where absent)."""

    downsample_hidden_size: Hidden = 480
    output_dim: Hidden = 3584
    encoder_attention_heads: Heads = 20


class AudioBlocks(NamedTuple):
    """An audio encoder's parameters as the towers hold them: whole on every rank, the blocks each engine divides its
    own way (TowerSplit.blocks, by `block_class`), and of those the MLPs'."""

    whole: int
    blocks: int
    mlp: int


QWEN3_OMNI_AUDIO = "Qwen3OmniMoeAudioEncoder"


def qwen3_omni_audio(sizes: WhisperEncoderFields, extra: Qwen3OmniAudioFields) -> AudioBlocks:
    """Qwen3OmniMoeAudioEncoder: whole, the blocks (qkv with its bias, out_proj's weight, fc1 with its bias, fc2's
    weight) and of them the MLPs' (vLLM 0.33.0 and SGLang 0.5.23 divide them differently: tower_blocks)."""
    d, ffn, stem = sizes.d_model, sizes.encoder_ffn_dim, extra.downsample_hidden_size
    mels = (((sizes.num_mel_bins + 1) // 2 + 1) // 2 + 1) // 2  # the mel axis after three stride-2 convs
    convs = stem * 9 + stem + 2 * (stem * stem * 9 + stem) + stem * mels * d
    mlp = sizes.encoder_layers * (d * ffn + ffn + ffn * d)
    blocks = sizes.encoder_layers * (3 * d * d + 3 * d + d * d) + mlp
    whole = convs + sizes.encoder_layers * (d + d + 2 * 2 * d)  # out_proj's and fc2's biases, two LayerNorms
    whole += 2 * d + d * d + d + d * extra.output_dim + extra.output_dim  # ln_post, proj1, proj2
    return AudioBlocks(whole, blocks, mlp)


class GlmAsrEncoderFields(ConfigSection):
    """GlmAsrEncoderConfig's fields (transformers models/glmasr: its class defaults where absent)."""

    hidden_size: Hidden = 1280
    intermediate_size: Intermediate = 5120
    num_hidden_layers: Layers = 32
    num_attention_heads: Heads = 20
    num_key_value_heads: Heads | None = None  # None: num_attention_heads (GlmAsrEncoderConfig.__post_init__)
    num_mel_bins: Dim = 128


GLM_ASR_ENCODER = "GlmAsrEncoder"


def glm_asr(encoder: GlmAsrEncoderFields, text_hidden: int, config_class: str, source: str) -> TowerSpec:
    """GLM-ASR's encoder and projector as the checkpoint holds them (module docstring): the blocks each engine
    divides its own way, the projector split (Column/Row) or whole (TowerSplit.projector_whole)."""
    h, ffn, layers = encoder.hidden_size, encoder.intermediate_size, encoder.num_hidden_layers
    kv = (encoder.num_key_value_heads or encoder.num_attention_heads) * (h // encoder.num_attention_heads)
    mlp = layers * (h * ffn + ffn + ffn * h)  # fc1 with its bias, fc2's weight
    blocks = layers * (h * h + h + h * kv + h * kv + kv + h * h) + mlp  # q (biased), k, v (biased), o's weight
    whole = encoder.num_mel_bins * h * 3 + h + h * h * 3 + h  # conv1, conv2
    whole += layers * (2 * 2 * h + h + h) + 2 * h  # two LayerNorms, o_proj's and fc2's biases; the final LayerNorm
    projector = ffn * 2 * text_hidden + 2 * text_hidden + 2 * text_hidden * text_hidden  # linear_1, linear_2's weight
    whole += text_hidden  # linear_2's bias (row-parallel: whole)
    return TowerSpec(params=whole + blocks + projector, tp_split_params=projector, projector_params=projector,
                     config_class=config_class, source=source, head_split_params=blocks, head_split_mlp_params=mlp,
                     heads=encoder.num_attention_heads, block_mlp_width=ffn, block_class=GLM_ASR_ENCODER,
                     k_bias_params=layers * kv)  # fmt: skip


class GraniteSpeechEncoderFields(ConfigSection):
    """GraniteSpeechEncoderConfig's fields (transformers models/granite_speech: its class defaults where absent)."""

    input_dim: Dim = 160
    num_layers: Layers = 10
    hidden_dim: Hidden = 1024
    feedforward_mult: Dim = 4
    num_heads: Heads = 8
    dim_head: Dim = 128
    output_dim: Dim = 42
    max_pos_emb: Dim = 512
    conv_kernel_size: Dim = 15
    conv_expansion_factor: Dim = 2


class GraniteSpeechProjectorFields(ConfigSection):
    """The `projector_config` (a Blip2QFormerConfig: its class defaults where absent) the Q-Former reads."""

    hidden_size: Hidden = 768
    intermediate_size: Intermediate = 3072
    num_hidden_layers: Layers = 12
    cross_attention_frequency: Dim = 2
    encoder_hidden_size: Hidden = 1408


class GraniteSpeechOuterFields(ConfigSection):
    """GraniteSpeechConfig's window fields (its class defaults where absent): the projector's query rows."""

    downsample_rate: Dim = 5
    window_size: Dim = 15


def granite_speech(
    encoder: GraniteSpeechEncoderFields,
    projector: GraniteSpeechProjectorFields,
    outer: GraniteSpeechOuterFields,
    text_hidden: int,
    config_class: str,
    source: str,
) -> TowerSpec:
    """Granite-Speech's encoder and projector as vLLM 0.33.0 builds them (module docstring)."""
    h, ff, inner = (
        encoder.hidden_dim,
        encoder.hidden_dim * encoder.feedforward_mult,
        encoder.num_heads * encoder.dim_head,
    )
    conv = h * encoder.conv_expansion_factor
    ff_split = h * ff + ff + ff * h  # up_proj (Column, its bias) and down_proj's weight (Row)
    ff_whole = 2 * h + h  # pre_norm and down_proj's bias
    attention = (
        2 * h + h * inner + h * 2 * inner + inner * h + h + (2 * encoder.max_pos_emb + 1) * encoder.dim_head
    )
    conv_module = 2 * h + 2 * conv * h + 2 * conv + conv * encoder.conv_kernel_size + 2 * conv + h * conv + h
    split = (
        encoder.num_layers * 2 * ff_split
        + h * encoder.output_dim
        + encoder.output_dim
        + encoder.output_dim * h
    )
    whole = (
        encoder.input_dim * h + h + encoder.num_layers * (2 * ff_whole + attention + conv_module + 2 * h) + h
    )
    q_width = projector.hidden_size
    queries = outer.window_size // outer.downsample_rate
    whole += queries * q_width + qformer_params(
        q_width,
        projector.encoder_hidden_size,
        projector.intermediate_size,
        projector.num_hidden_layers,
        projector.cross_attention_frequency,
    )
    whole += q_width * text_hidden + text_hidden
    return TowerSpec(params=whole + split, tp_split_params=split, config_class=config_class, source=source)


def qwen2_audio(sizes: WhisperEncoderFields, text_hidden: int, config_class: str, source: str) -> TowerSpec:
    """Qwen2-Audio's audio_tower and multi_modal_projector (d_model → text width, biased): whole on every rank."""
    whole = whisper_encoder(sizes) + sizes.d_model * text_hidden + text_hidden
    return TowerSpec(params=whole, tp_split_params=0, config_class=config_class, source=source)
