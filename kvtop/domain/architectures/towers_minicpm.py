"""MiniCPM-V 4.6's and 4.7's vision tower (`vpm`), window-attention merger (`vit_merger`) and projector
(`merger`), counted as vLLM 0.33.0 builds and shards them (towers.py picks this kind by the outer model_type
`minicpmv4_6` or `minicpmv4_7`; the language model is the Qwen3.5 text entry).

vLLM 0.33.0 minicpmv4_6.py `MiniCPMV4_6ForConditionalGeneration.__init__`:
- `vpm`: Idefics2VisionTransformer (idefics2_vision_model.py): a Conv2d patch embedding with bias, a learned
  position table of (image_size ÷ patch_size)² rows (nn.Embedding: whole), `num_hidden_layers` blocks of two
  LayerNorms, qkv_proj (QKVParallelLinear, bias) and out_proj (RowParallelLinear, bias whole), fc1
  (ColumnParallelLinear, bias) and fc2 (RowParallelLinear, bias whole), a post-LayerNorm. 4.6 drops the last
  block where the outer config's `drop_vision_last_layer` is true (`_drop_vision_last_layer`); 4.7's class
  (minicpmv4_7.py) keeps every block whatever the field says.
- `vit_merger` (MiniCPMV4_6ViTWindowAttentionMerger): one more attention (qkv_proj QKVParallelLinear with bias,
  out_proj RowParallelLinear with bias), layer_norm1 over the width, then a pre_norm over 4 × width and two
  nn.Linear with biases, 4 × width → 4 × intermediate → width (whole: the 4 is the fixed 2 × 2 window).
- `merger` (MiniCPMV4_6Merger): built with its defaults, merge_kernel_size (2, 2) and times 1 (the config's
  `merge_kernel_size` and `merger_times` are not passed): one DownsampleMLP, a LayerNorm over 4 × width, nn.Linear
  4 × width → 4 × width and 4 × width → the language model's width, with biases (whole).
Parameter counts checked against the engine's meta build (tests/test_towers_minicpm.py).
SGLang 0.5.23 (minicpmv_vit.py MiniCPMV_ViTWindowAttentionMerger, MiniCPMV_DownsampleMLP) builds the same
parameters but the vit_merger's and the merger's linear_1 / linear_2 as Column/RowParallelLinear: split over TP
(linear_1 with its bias, linear_2's bias whole): `replicated_params`, split where TowerSplit.replicated_linears.

MiniCPM-o 2.6 (`minicpmo`, class MiniCPMO; `minicpm_o` below): vLLM 0.33.0 minicpmo.py MiniCPMO dispatches by
the config's `version` (2.6: MiniCPMO2_6 over minicpmv.py MiniCPMV2_6) and SGLang 0.5.23 minicpmo.py builds the
same parameters (meta-built alike at TP 1 and 2):
- `vpm`: the same Idefics2VisionTransformer over the SiglipVisionConfig section, less its last block where
  `drop_vision_last_layer` (MiniCPMOConfig's default True), split over TP as above;
- `resampler` (minicpmv.py Resampler2_5, resampler.py): num_queries × E learned queries, kv_proj vision width →
  E (ReplicatedLinear, no bias), nn.MultiheadAttention(E) (in_proj 3E × E with bias, out_proj E × E with bias),
  ln_q, ln_kv, ln_post (LayerNorms) and proj E × E, E the language model's width: whole on every rank;
- `apm`: transformers' WhisperEncoder over `audio_config` (WhisperConfig's defaults where absent): conv1
  num_mel_bins → d_model and conv2 d_model → d_model (kernel 3, biased), a max_source_positions × d_model
  position table, encoder_layers blocks (q, v, out_proj biased, k not; two LayerNorms; fc1, fc2 biased), a final
  LayerNorm; and `audio_projection_layer` (two biased nn.Linear, encoder_ffn_dim ÷ 4 → E → E): all whole.
MiniCPM-V 2.6 (`minicpmv` at `version` 2.6, class MiniCPMV; `minicpm_v2_6` below): the same vpm and resampler,
no audio (vLLM 0.33.0 and SGLang 0.5.23 minicpmv.py MiniCPMV2_6, meta-built alike at TP 1 and 2).
The TTS head is not built (vLLM maps `tts` weights to None, SGLang sets init_tts False): nothing to count.
SGLang builds vpm and resampler only where `init_vision` (MiniCPMOConfig's default True), vLLM always: a config
with it False keeps the note (the engines differ). Another `version` (4.5: MiniCPMV4_5's resampler) keeps it too.
"""

from __future__ import annotations

from kvtop.domain.architectures.towers_audio import WhisperEncoderFields, whisper_encoder
from kvtop.domain.config_types import ConfigSection, Dim, Flag, Heads, Hidden, Intermediate, Layers, Name
from kvtop.domain.tower_spec import TowerSpec

WINDOW = 2 * 2  # the vit_merger's fixed 2 × 2 window and the merger's default merge_kernel_size (2, 2)


class MiniCPMVisionFields(ConfigSection):
    """MiniCPMV4_6VisionConfig's fields (transformers models/minicpmv4_6: its class defaults where absent)."""

    hidden_size: Hidden = 768
    intermediate_size: Intermediate = 3072
    num_hidden_layers: Layers = 12
    num_attention_heads: Heads = 12
    num_channels: Dim = 3
    image_size: Dim = 224
    patch_size: Dim = 16


class MiniCPMOuterFields(ConfigSection):
    """The outer MiniCPMV4_6Config field that changes the tower (its class default False)."""

    model_type: Name | None = None
    drop_vision_last_layer: Flag = False


class MiniCPMOOuterFields(ConfigSection):
    """The outer MiniCPMOConfig fields the towers read (openbmb/MiniCPM-o-2_6 configuration_minicpm.py defaults)."""

    query_num: Dim = 64
    drop_vision_last_layer: Flag = True
    init_vision: Flag = True
    version: float | str = "2.6"  # vLLM minicpmo.py MiniCPMO.__new__: absent reads as 2.6


def minicpm_o(
    vision: MiniCPMVisionFields, audio: WhisperEncoderFields, outer: MiniCPMOOuterFields, text_hidden: int,
    config_class: str, source: str,
) -> TowerSpec | None:  # fmt: skip
    """MiniCPM-o 2.6's vpm, resampler, Whisper encoder and audio projection (None: another version, or
    init_vision False, where the engines build apart)."""
    if str(outer.version) != "2.6" or not outer.init_vision:
        return None
    whole, split = _vpm_resampler(vision, outer, text_hidden)
    e = text_hidden
    apm = whisper_encoder(audio)  # transformers' WhisperEncoder (towers_audio)
    projection = audio.encoder_ffn_dim // 4 * e + e + e * e + e
    whole += apm + projection
    return TowerSpec(params=whole + split, tp_split_params=split, config_class=config_class, source=source)


def minicpm_v2_6(
    vision: MiniCPMVisionFields, outer: MiniCPMOOuterFields, text_hidden: int, config_class: str, source: str,
) -> TowerSpec | None:  # fmt: skip
    """MiniCPM-V 2.6's vpm and resampler (MiniCPMV2_6 in both engines' minicpmv.py; None: another version)."""
    if str(outer.version) != "2.6":
        return None
    whole, split = _vpm_resampler(vision, outer, text_hidden)
    return TowerSpec(params=whole + split, tp_split_params=split, config_class=config_class, source=source)


def _vpm_resampler(vision: MiniCPMVisionFields, outer: MiniCPMOOuterFields, text_hidden: int) -> tuple[int, int]:
    """MiniCPMV2_6's vpm and Resampler2_5 parameters: (whole on every rank, split over TP)."""
    width, mlp = vision.hidden_size, vision.intermediate_size
    depth = vision.num_hidden_layers - (1 if outer.drop_vision_last_layer else 0)
    attention_split = 3 * width * width + 3 * width + width * width  # qkv with its bias, out_proj's weight
    block_split = attention_split + width * mlp + mlp + mlp * width  # fc1 with its bias, fc2's weight
    block_whole = 2 * 2 * width + width + width  # two LayerNorms, out_proj's and fc2's biases
    positions = (vision.image_size // vision.patch_size) ** 2
    vpm_whole = vision.num_channels * vision.patch_size**2 * width + width + positions * width + 2 * width
    e = text_hidden
    resampler = outer.query_num * e + width * e + (3 * e * e + 3 * e + e * e + e) + 3 * 2 * e + e * e
    return vpm_whole + depth * block_whole + resampler, depth * block_split


def minicpm_v(
    vision: MiniCPMVisionFields, outer: MiniCPMOuterFields, reads_drop: bool, text_hidden: int,
    config_class: str, source: str,
) -> TowerSpec:  # fmt: skip
    """The vpm, vit_merger and merger parameters; `reads_drop`: the class honours drop_vision_last_layer (4.6)."""
    width, mlp = vision.hidden_size, vision.intermediate_size
    depth = vision.num_hidden_layers - (1 if reads_drop and outer.drop_vision_last_layer else 0)
    attention_split = 3 * width * width + 3 * width + width * width  # qkv with its bias, out_proj's weight
    block_split = attention_split + width * mlp + mlp + mlp * width  # fc1 with its bias, fc2's weight
    block_whole = 2 * 2 * width + width + width  # two LayerNorms, out_proj's and fc2's biases
    positions = (vision.image_size // vision.patch_size) ** 2
    vpm_whole = vision.num_channels * vision.patch_size**2 * width + width + positions * width + 2 * width
    wide, wide_mlp = WINDOW * width, WINDOW * mlp
    vit_merger_whole = width + 2 * width + 2 * wide + wide * wide_mlp + wide_mlp + wide_mlp * width + width
    merger_whole = 2 * wide + wide * wide + wide + wide * text_hidden + text_hidden
    split = depth * block_split + attention_split
    whole = vpm_whole + depth * block_whole + vit_merger_whole + merger_whole
    # the two MLPs vLLM builds nn.Linear (whole) and SGLang Column/RowParallelLinear (linear_2's bias whole in both)
    mlps = wide * wide_mlp + wide_mlp + wide_mlp * width + wide * wide + wide + wide * text_hidden
    return TowerSpec(params=whole + split, tp_split_params=split, config_class=config_class, source=source,
                     replicated_params=mlps)  # fmt: skip
