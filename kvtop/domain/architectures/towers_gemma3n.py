"""Gemma-3n's towers (Gemma3nForConditionalGeneration, outer model_type gemma3n): the MobileNet-v5 vision tower, the
USM (Conformer) audio encoder and the two multimodal embedders, counted as vLLM 0.33.0 gemma3n_mm.py and SGLang
0.5.23 gemma3n_mm.py / gemma3n_audio.py build them.

- `vision_tower`: both engines call `AutoModel.from_config(vision_config)`, transformers' TimmWrapperModel over timm's
  `architecture` (no parameter of its own): nn.Conv2d and norms, whole on every rank. Its size is timm's definition
  of the named architecture, not a config field: `MOBILENET_V5` holds the one a published config names
  (mobilenetv5_300m_enc: conv_stem 1,856, blocks 278,880,000, msfa 15,245,056 parameters; timm 1.0.31
  models/mobilenetv5.py built on the meta device). Another architecture, or `model_args` set: not modelled.
- `audio_tower` (Gemma3nAudioEncoder over `audio_config`, Gemma3nAudioConfig's defaults where absent): a
  sub-sample conv projection (two unbiased Conv2d 3 × 3 of sscp_conv_channel_size, each with a cumulative group
  norm's weight, then input_proj_linear of channels × the mel axis twice strided → hidden, unbiased) and
  conf_num_hidden_layers Conformer blocks: two feed-forwards (RMSNorm, ffw_layer_1 h → 4h, ffw_layer_2 back,
  RMSNorm), an attention (RMSNorm; q, k, v; the relative position's pos_proj h → h; per_dim_scale of head_dim; post
  h → h; RMSNorm), a light conv (RMSNorm, linear_start h → 2h, a depthwise Conv1d of conf_conv_kernel_size, unbiased,
  RMSNorm, linear_end h → h) and a final RMSNorm; every linear unbiased. vLLM builds transformers' class (nn.Linear:
  whole); SGLang its own, every linear Column/Row/QKVParallelLinear (split over TP; QKVParallelLinear divides the
  heads, asserting): `TowerSpec.head_split_params` under each engine's rule for `AUDIO_ENCODER` (TowerSplit.blocks).
- `embed_vision` / `embed_audio` (Gemma3nMultimodalEmbedder): a VocabParallelEmbedding of vocab_size rows (split by
  rows in both engines; 128 rows pad to 128, so they split evenly), hard and soft RMSNorms with weights, and
  embedding_projection (tower width → text width, unbiased): RowParallelLinear in vLLM, ReplicatedLinear in SGLang
  (`TowerSpec.projector_params`, whole where TowerSplit.projector_whole); the post-projection norm has no weight.
The E2B checkpoint (tests/data/configs/google--gemma-3n-E2B.json), the engines' meta build: vision_tower
588,253,824 B, audio_tower 1,362,697,280 B (SGLang at TP 2: 681,647,168 B a rank), embed_vision 8,921,088 B and
embed_audio 6,690,816 B at TP 1 (tests/domain/test_towers_gemma3n.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field

from kvtop.domain.config_schema import validated
from kvtop.domain.config_types import ConfigSection, Dim, Heads, Hidden, Layers, Name
from kvtop.domain.tower_spec import TowerSpec

CONFIG_CLASS = "Gemma3nVisionConfig, Gemma3nAudioConfig"
SOURCE = ("vLLM 0.33.0 models/gemma3n_mm.py; SGLang 0.5.23 models/gemma3n_mm.py, gemma3n_audio.py; transformers "
          "models/gemma3n, timm models/mobilenetv5.py")  # fmt: skip
WORDS = "the MobileNet-v5 vision tower, the USM audio encoder and their embedders"
AUDIO_ENCODER = "Gemma3nAudioEncoder"  # the block class each engine's TowerSplit.blocks names

# timm's architectures by name: their parameters (timm 1.0.31 models/mobilenetv5.py, MobileNetV5Encoder built on the
# meta device through transformers' TimmWrapperModel, as both engines call it)
MOBILENET_V5: Mapping[str, int] = {"mobilenetv5_300m_enc": 294_126_912}


class Gemma3nVisionFields(ConfigSection):
    """Gemma3nVisionConfig's fields the towers read (transformers models/gemma3n: its class defaults)."""

    architecture: Name = "mobilenetv5_300m_enc"
    model_args: dict[str, Any] | None = None
    hidden_size: Hidden = 2048
    vocab_size: Dim = 128


class Gemma3nAudioFields(ConfigSection):
    """Gemma3nAudioConfig's fields the towers read (transformers models/gemma3n: its class defaults)."""

    hidden_size: Hidden = 1536
    vocab_size: Dim = 128
    input_feat_size: Dim = 128
    conf_num_attention_heads: Heads = 8
    conf_num_hidden_layers: Layers = 12
    conf_conv_kernel_size: Dim = 5
    sscp_conv_channel_size: tuple[Dim, Dim] = (128, 32)
    sscp_conv_kernel_size: tuple[tuple[Dim, Dim], tuple[Dim, Dim]] = ((3, 3), (3, 3))
    sscp_conv_stride_size: tuple[tuple[Dim, Dim], tuple[Dim, Dim]] = Field(default=((2, 2), (2, 2)))


def audio_encoder(audio: Gemma3nAudioFields) -> tuple[int, int, int]:
    """(the encoder's parameters, of them the linears SGLang splits, of those the feed-forwards')."""
    h, layers = audio.hidden_size, audio.conf_num_hidden_layers
    head_dim = h // audio.conf_num_attention_heads
    freq, channels_in, stem = audio.input_feat_size, 1, 0
    for out, (kh, kw), (_, sw) in zip(audio.sscp_conv_channel_size, audio.sscp_conv_kernel_size,
                                      audio.sscp_conv_stride_size, strict=True):  # fmt: skip
        stem += channels_in * out * kh * kw + out  # the unbiased conv and its group norm's weight
        freq, channels_in = (freq + 2 - kw) // sw + 1, out  # one frequency bin padded each side
    projection = channels_in * freq * h  # input_proj_linear
    feed_forward = 2 * (4 * h * h + 4 * h * h)  # two of ffw_layer_1 and ffw_layer_2
    linears = (
        feed_forward + 3 * h * h + h * h + h * h + 2 * h * h + h * h
    )  # q, k, v; pos_proj; post; light conv
    norms = 2 * 2 * h + 2 * h + 2 * h + h  # feed-forwards', attention's, light conv's, the block's
    block_whole = norms + head_dim + h * audio.conf_conv_kernel_size  # per_dim_scale, the depthwise conv
    split = layers * linears + projection
    return stem + split + layers * block_whole, split, layers * feed_forward


def gemma3n(outer: Mapping[str, Any], text_hidden: int, source: str) -> TowerSpec | None:
    """Gemma-3n's towers and embedders from `vision_config` and `audio_config`; None for a vision architecture
    outside `MOBILENET_V5` or one reshaped by `model_args` (not modelled)."""
    vision = validated(
        Gemma3nVisionFields, outer.get("vision_config") or {}, source=source, prefix="vision_config."
    )
    audio = validated(
        Gemma3nAudioFields, outer.get("audio_config") or {}, source=source, prefix="audio_config."
    )
    mobilenet = MOBILENET_V5.get(vision.architecture)
    if mobilenet is None or vision.model_args:
        return None
    encoder, encoder_split, encoder_ffn = audio_encoder(audio)
    rows = vision.vocab_size * vision.hidden_size + audio.vocab_size * audio.hidden_size  # the two embeddings
    projectors = (vision.hidden_size + audio.hidden_size) * text_hidden
    norms = 2 * vision.hidden_size + 2 * audio.hidden_size  # hard and soft embedding norms
    return TowerSpec(params=mobilenet + encoder + rows + projectors + norms, tp_split_params=rows + projectors,
                     projector_params=projectors, config_class=CONFIG_CLASS, source=SOURCE,
                     head_split_params=encoder_split, head_split_mlp_params=encoder_ffn,
                     heads=audio.conf_num_attention_heads, block_class=AUDIO_ENCODER, label=WORDS)  # fmt: skip
