"""MiMo-V2.5's vision transformer and audio encoder (a `mimo_v2` config with a `vision_config`), as vLLM 0.33.0
builds them: its MimoV2ModelArchConfigConvertor (transformers_utils/model_arch_config_convertor.py) serves such a
config as MiMoV2OmniForCausalLM (models/mimo_v2_omni.py), which builds `visual` (MiMoVisionTransformer, bf16, no
quantization) and, where the config has an `audio_config`, `audio_encoder` (models/mimo_audio.py MimoAudioEncoder)
beside the MiMo-V2-Flash language model (the mimo_v2_flash entry).

`visual`, from Mimo_VLVisionConfig (transformers_utils/configs/mimo_v2_omni.py: its class defaults where absent; it
reads `in_channels`, not the checkpoint's `in_chans`, and has no `qk_channels`/`kv_channels` in MiMo-V2.5's section,
so both are its default 64): a Conv3d patch embedding (in_channels × temporal_patch × patch² → width, no bias);
`depth` blocks of two RMSNorms, qkv (QKVParallelLinear: num_heads × qk_channels queries, num_key_value_heads ×
qk_channels keys and × kv_channels values, biased), proj (RowParallelLinear num_heads × kv_channels → width,
biased), a gated MLP (MergedColumnParallelLinear gate|up and RowParallelLinear down, biased: Qwen2_5_VisionMLP),
and, where `use_sink` and the block is not in `fullatt_block_indexes`, `sinks` (num_heads, an nn.Parameter: whole);
then the merger: an RMSNorm over width, width × merge² → the same (Column) and → out_hidden_size (Row), no biases in vLLM's
build (SGLang 0.5.12 … 0.5.23 mimo_vl.py builds qwen2_5_vl.py's Qwen2_5_VisionPatchMerger, bias=True: TowerSplit.projector_bias).
Column/Row layers split over TP (`--mm-encoder-tp-mode data` does not apply: the class has no
`supports_encoder_tp_data`), a row-parallel bias, the norms, the patch
embedding and the sinks whole. MiMoVisionAttention divides num_heads and num_key_value_heads by TP with
`dist_utils.divide` (no fallback to a replicated encoder: it asks is_vit_use_data_parallel() without the head
count), so above TP 8 the default 8 KV heads assert ("8 is not divisible by 16"): `TowerSpec.divided_heads`,
which vLLM's rules refuse (engines/vllm/tower_heads.py).

`audio_encoder`, from MimoAudioEncoderConfig (mimo_audio.py: its defaults where absent): transformers' Qwen2Model
over a Qwen2Config of input_local_dim / input_local_layers / input_local_attn_heads (as KV heads too) /
input_local_intermediate_size, so Qwen2Config's vocab_size 151936 embedding table and head_dim width ÷ heads
(input_local_head_dim is not passed), its final norm only where add_post_norm; `audio_channels` speech embeddings
(speech_vocab_size, one figure or one per channel joined by "-", × input_local_dim); the projection (one
nn.Linear input_local_dim × group_size → out_hidden_size, or two through 4 × that width), no biases. All nn
modules: whole on every rank. The audio tokenizer vLLM loads from the checkpoint's `audio_tokenizer/` folder where
it has one is sized by that folder's own config: `AUDIO_TOKENIZER_NOT_MODELLED`.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from kvtop.domain.config_schema import validated
from kvtop.domain.config_types import (
    ConfigSection,
    Dim,
    Flag,
    Heads,
    Hidden,
    Intermediate,
    LayerIndices,
    Layers,
)
from kvtop.domain.errors import InputError
from kvtop.domain.tower_spec import TowerSpec

SOURCE = (
    "vLLM 0.33.0 transformers_utils/configs/mimo_v2_omni.py (Mimo_VLVisionConfig), models/mimo_v2_omni.py "
    "(MiMoVisionTransformer), models/mimo_audio.py (MimoAudioEncoder)"
)
CONFIG_CLASS = "Mimo_VLVisionConfig"
QWEN2_CONFIG_VOCAB = 151936  # transformers 5.20 Qwen2Config's vocab_size default: the audio Qwen2Model's table
AUDIO_TOKENIZER_NOT_MODELLED = (
    "MiMo audio tokenizer (the checkpoint's audio_tokenizer/ folder, which vLLM 0.33.0 mimo_audio.py loads onto "
    "the GPU in bf16 where present): sized by its own config, not in the weights book"
)


class MiMoVisionFields(ConfigSection):
    """Mimo_VLVisionConfig's fields and class defaults (vLLM 0.33.0)."""

    depth: Layers = 28
    hidden_size: Hidden = 1280
    intermediate_size: Intermediate = 4608
    num_heads: Heads = 32
    num_key_value_heads: Heads = 8
    in_channels: Dim = 3
    patch_size: Dim = 16
    spatial_merge_size: Dim = 2
    temporal_patch_size: Dim = 2
    out_hidden_size: Hidden = 2048
    fullatt_block_indexes: LayerIndices = Field(default_factory=lambda: [7, 15, 23, 31])
    qk_channels: Dim = 64
    kv_channels: Dim = 64
    use_sink: Flag = False  # no class default (vLLM reads the attribute); absent, no block holds sinks


class MiMoAudioFields(ConfigSection):
    """MimoAudioEncoderConfig's fields and defaults (vLLM 0.33.0 mimo_audio.py) that size the encoder."""

    speech_vocab_size: str | Dim = "1025-1025-129-129-129-129-129-129"
    group_size: Dim = 4
    audio_channels: Dim = 8
    input_local_layers: Layers = 6
    input_local_dim: Hidden = 1024
    input_local_attn_heads: Heads = 64
    input_local_intermediate_size: Intermediate = 4096
    out_hidden_size: Hidden = 4096
    projection_layers: Dim = 1
    add_post_norm: Flag = False


def mimo_vision(vision: MiMoVisionFields) -> tuple[int, int]:
    """(whole, split over TP) of MiMoVisionTransformer (module docstring)."""
    width, mlp, heads = vision.hidden_size, vision.intermediate_size, vision.num_heads
    qkv = heads * vision.qk_channels + vision.num_key_value_heads * (vision.qk_channels + vision.kv_channels)
    attended = heads * vision.kv_channels  # proj's input
    split = vision.depth * (width * qkv + qkv + attended * width + 2 * (width * mlp + mlp) + mlp * width)
    whole = vision.in_channels * vision.temporal_patch_size * vision.patch_size**2 * width
    whole += vision.depth * (2 * width + width + width)  # two RMSNorms, proj's and down's biases
    full = {index for index in vision.fullatt_block_indexes if index < vision.depth}
    whole += (vision.depth - len(full)) * heads if vision.use_sink else 0
    merged = width * vision.spatial_merge_size**2
    split += merged * merged + merged * vision.out_hidden_size
    return whole + width, split  # the merger's RMSNorm


def _speech_vocabs(audio: MiMoAudioFields, source: str) -> list[int]:
    """MimoAudioEncoder._parse_maybe_list: "a-b-…" one figure per channel, else one figure for every channel."""
    value = audio.speech_vocab_size
    parts = value.split("-") if isinstance(value, str) and "-" in value else [str(value)] * audio.audio_channels
    if not all(part.isdigit() and int(part) > 0 for part in parts) or len(parts) < audio.audio_channels:
        raise InputError(f"must be a vocabulary size, or one per audio channel joined by '-' (got {value!r})",
                         field="audio_config.speech_vocab_size", source=source)  # fmt: skip
    return [int(part) for part in parts[: audio.audio_channels]]


def mimo_audio(audio: MiMoAudioFields, source: str) -> int:
    """MimoAudioEncoder's parameters (module docstring): whole on every rank."""
    d, ffn = audio.input_local_dim, audio.input_local_intermediate_size
    layer = 3 * (d * d + d) + d * d + 3 * d * ffn + 2 * d  # q, k, v biased, o not; gate, up, down; two norms
    local = QWEN2_CONFIG_VOCAB * d + audio.input_local_layers * layer + (d if audio.add_post_norm else 0)
    grouped = d * audio.group_size
    if audio.projection_layers not in (1, 2):
        raise InputError(f"must be 1 or 2 (vLLM's MimoAudioEncoder raises; got {audio.projection_layers})",
                         field="audio_config.projection_layers", source=source)  # fmt: skip
    projection = grouped * audio.out_hidden_size if audio.projection_layers == 1 else (
        grouped * 4 * grouped + 4 * grouped * audio.out_hidden_size
    )
    return local + sum(_speech_vocabs(audio, source)) * d + projection


def mimo_v2_omni(vision_config: dict[str, Any], outer: dict[str, Any], source: str) -> TowerSpec:
    """`visual` and, where the config has an `audio_config`, `audio_encoder` as vLLM 0.33.0 builds them."""
    vision = validated(MiMoVisionFields, vision_config, source=source, prefix="vision_config.")
    whole, split = mimo_vision(vision)
    audio_section = outer.get("audio_config")
    if isinstance(audio_section, dict):
        whole += mimo_audio(validated(MiMoAudioFields, audio_section, source=source, prefix="audio_config."), source)
    qkv = vision.num_heads * vision.qk_channels + vision.num_key_value_heads * (vision.qk_channels + vision.kv_channels)
    attention = vision.depth * (vision.hidden_size * qkv + qkv + vision.num_heads * vision.kv_channels * vision.hidden_size)
    return TowerSpec(params=whole + split, tp_split_params=split, config_class=CONFIG_CLASS, source=SOURCE,
                     divided_heads=(vision.num_heads, vision.num_key_value_heads),
                     attention_split_params=attention,
                     projector_bias_split_params=vision.hidden_size * vision.spatial_merge_size**2,
                     projector_bias_whole_params=vision.out_hidden_size)  # fmt: skip
