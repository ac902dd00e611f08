"""The vocabulary of towers.py: the `vision_config` fields a tower reads (TowerConfig, Qwen2-VL's own names) and
a family's Tower entry (its vision config class, defaults, kind and module switches)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import AliasChoices, Field

from kvtop.domain.config_types import (
    ConfigSection,
    Dim,
    Flag,
    HeadDim,
    Heads,
    Hidden,
    Intermediate,
    LayerIndices,
    Layers,
    Name,
)
from kvtop.domain.tower_spec import TowerKind


class TowerConfig(ConfigSection):
    """The `vision_config` fields a tower's size reads (absent: the vision config class's default)."""

    depth: Layers | None = Field(default=None, validation_alias=AliasChoices("depth", "num_hidden_layers"))
    hidden_size: Hidden | None = None
    intermediate_size: Intermediate | None = None
    in_channels: Dim | None = Field(
        default=None, validation_alias=AliasChoices("in_channels", "in_chans", "num_channels")
    )
    patch_size: Dim | None = None
    image_size: Dim | None = None
    num_patches: Dim | None = None  # SigLIP2's position table rows (LFM2-VL)
    temporal_patch_size: Dim | None = None
    spatial_merge_size: Dim | None = None
    out_hidden_size: Hidden | None = None
    num_position_embeddings: Dim | None = None
    deepstack_visual_indexes: LayerIndices | None = None
    num_attention_heads: Heads | None = None
    num_key_value_heads: Heads | None = None
    num_heads: Heads | None = None  # the Qwen ViTs' name (read where the tower's attention groups KV: EXAONE-4.5)
    head_dim: HeadDim | None = None
    position_embedding_size: Dim | None = None
    projector_input_dim: Hidden | None = None
    projector_output_dim: Hidden | None = None
    vision_output_dim: Hidden | None = None
    multi_modal_projector_bias: Flag | None = None
    vision_use_head: Flag | None = None  # SigLIP's pooling head (SiglipVisionConfig's default: True)
    model_type: Name | None = None


class Qwen2VLVisionFields(ConfigSection):
    """Qwen2VLVisionConfig's own names (transformers models/qwen2_vl: its class defaults where absent): the width
    is `embed_dim`, the block MLP `embed_dim × mlp_ratio` (vLLM qwen2_vl.py `int(embed_dim * mlp_ratio)`), and
    `hidden_size` the patch merger's output."""

    embed_dim: Hidden = 1280
    hidden_size: Hidden = 3584
    mlp_ratio: float = Field(default=4.0, gt=0, le=64)


@dataclass(frozen=True)
class Tower:
    """One family's vision tower: its vision config class, defaults and module switches."""

    config_class: str
    source: str  # the transformers file its modules and defaults come from
    defaults: Mapping[str, Any] = field(default_factory=dict)
    # the Qwen ViT and merger; SigLIP and Gemma-3's projector; Pixtral and Mistral-3's projector; CLIP or SigLIP
    # and llava's projector; Llama-4's vision model and projector; Gemma-4's vision tower and embedder (towers_vit);
    # InternViT and InternVL's mlp1 (towers_intern); Kimi-K2.5's MoonViT3d and patch merger, Kimi-K3's (towers_moon);
    # MiniMax-M3's ViT, projector and patch merger (towers_minimax); Phi-3-vision's CLIP and img_projection
    # (towers_phi); MiniCPM-V 4.6/4.7's SigLIP, window-attention merger and merger (towers_minicpm); Muse-Glimmer's
    # vision encoder, adapter and projection (towers_muse); PaliGemma's SigLIP and projector (towers_vit);
    # Qwen2-Audio's and AudioFlamingo3's Whisper encoders and projectors (towers_audio: `audio_config`);
    # Qwen2.5-Omni's and Qwen3-Omni-MoE's thinkers: a Qwen ViT and an audio encoder (towers_audio); GLM-ASR's
    # encoder and projector (towers_audio: each engine divides its blocks its own way, TowerSplit.blocks)
    kind: Literal[
        "qwen",
        "siglip_gemma3",
        "pixtral_mistral3",
        "llava",
        "llama4",
        "gemma4",
        "intern_vit",
        "intern_vl_hf",
        "moon_vit",
        "minimax_vl",
        "phi3v",
        "minicpm_v",
        "minicpm_o",
        "minicpm_v2_6",
        "step3p7",
        "muse_glimmer",
        "siglip_paligemma",
        "qwen2_vl",
        "points_v15",  # POINTS-1.5: the Qwen2-VL ViT and a second merger (towers_points)
        "glm4v",
        "idefics3",
        "kimi_k3",
        "blip2",
        "granite4_vision",
        "lfm2_vl",
        "aria",
        "cohere2_vision",
        "ovis",
        "ovis2_5",
        "cosmos3_edge",
        "moondream3",
        "nvlm_d",
        "deepseek_ocr",
        "moss_audio",  # MOSS-Audio: its encoder, adapter and deepstack mergers (towers_moss)
        "kimi_audio",  # Kimi-Audio: vLLM's Whisper encoder (whisper-large-v3's sizes) and VQ adaptor (towers_kimi_audio)
        "funasr",  # Fun-ASR: the SANM encoder and its adaptor (towers_funasr)
        "fireredasr2",  # FireRedASR2: its Conformer encoder and adapter, replicated (towers_fireredasr2)
        "funaudiochat",  # Fun-Audio-Chat: its continuous and discrete audio encoders (towers_funaudiochat)
        "ultravox",  # Ultravox: vLLM's Whisper encoder and the feed-forward projector (towers_ultravox)
        "voxtral",  # Voxtral: its Whisper encoder and audio-language adapter, SGLang's build (towers_voxtral)
        "dasheng",  # MiDashengLM: the Dasheng audio transformer and subsampling projector (towers_dasheng)
        "moss_td",  # MOSS-Transcribe-Diarize: vLLM's Whisper encoder and the VQ adaptor (towers_moss)
        "gemma3n",  # Gemma-3n: MobileNet-v5, the USM audio encoder and both embedders (towers_gemma3n)
        "janus",  # Janus / Janus-Pro: SigLIP, aligners, VQ-16 and the generation head (towers_janus)
        "qwen2_audio",
        "audioflamingo3",
        "qwen2_5_omni",
        "qwen3_omni",
        "qwen3_asr",
        "granite_speech",
        "step3_vl",
        "isaac",
        "mimo_v2_omni",
        "glm_asr",
        "mllama",  # Llama-3.2-Vision's vision model and projector (towers_mllama)
        "whisper",  # Whisper's encoder, sized by the top-level config beside its decoder (towers_whisper)
        "phi4_siglip",  # Phi-4-reasoning-vision's SigLIP2 to layer -2 and LLaVA projector (towers_phi4_siglip)
        "phi4mm",  # Phi-4-multimodal's SigLIP, projection and conformer audio encoder (towers_phi4mm)
        "ernie45_vl",  # ERNIE-4.5-VL's DFNRope vision transformer and resampler (towers_ernie45_vl)
        "molmo",  # Molmo's ViT, pooling attention and projector, vLLM's constant shape (towers_molmo)
        "pixtral_mistral_format",  # a Mistral-format Pixtral's encoder and adapter (towers_mistral_format)
        "eva2clip",  # GLM-4V-9B's EVA2-CLIP tower and GLU projector, vLLM's build (towers_eva2clip)
        "radio",  # Nemotron Nano VL V2's C-RADIO ViT and mlp1 (towers_radio)
        "nemotron_vl",  # Llama-Nemotron-Nano-VL's mlp1 alone, its vision model named (towers_nemotron_vl)
        "bailing_v3_vl",  # Ling-3-VL: the Qwen3 ViT without its merger MLP, and linear_proj (towers_bailing)
        "onevision2",  # LLaVA-OneVision-2: its OneVision encoder and patch merger (towers_onevision2)
        "nvila",  # NVILA's transformers SigLIP and projector, whole (towers_nvila)
        "nvila_lite",  # NVILA-Lite's (towers_nvila)
        "sarashina2_vision",  # Sarashina2-Vision: the Qwen2-VL ViT and its output LayerNorm (towers_nvila)
        "dots_vlm",  # dots.vlm1's vision transformer and patch merger, SGLang's build (towers_dots_vlm)
        "kanana_v",  # Kanana-V: the Qwen2-VL ViT less its merger, and the DynamicCAbstractor (towers_kanana)
        "keye",  # Keye-VL / Keye-VL-1.5: SigLIP with a packing position table, and mlp_AR (towers_keye)
    ] = "qwen"
    section: str = "vision_config"  # the config section that sizes it (Phi-3-vision's: img_processor; ROOT: the top level)
    # per vision_config model_type, the defaults of its config class (llava over CLIP, SigLIP or Pixtral)
    vision_defaults: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    # the vision_config model_types this kind describes (empty: any); another one's tower is not modelled
    vision_model_types: frozenset[str] = frozenset()
    norm_bias: bool = True  # LayerNorm (weight and bias); False: RMSNorm (weight)
    patch_bias: bool = True  # the Conv3d patch embedding carries a bias
    position_table: bool = True  # a learned table of num_position_embeddings rows
    mlp_gated: bool = False  # gate, up and down (Qwen2.5-VL) rather than fc1, fc2
    grouped_kv: bool = False  # qkv of num_heads queries and num_key_value_heads K/V, width ÷ num_heads each (EXAONE-4.5)
    deepstack: bool = False  # one more merger per deepstack_visual_indexes entry (Qwen3-VL)
    # a biased nn.Linear out_hidden_size → the language model's width after the merger, whole on every rank
    # (HyperCLOVA X SEED Think's mm_projector: vLLM 0.33.0 hyperclovax_vision_v2.py HCXVisionV2ForCausalLM.__init__)
    text_projector: bool = False
    # every engine splits the block MLPs with the heads (Kimi-VL's MoonViT: SGLang kimi_vl_moonvit.py builds MLP2
    # with use_tensor_parallel), where another tower of the kind has an engine build them whole (Kimi-K2.5's)
    block_mlp_split: bool = False
    drop_last_layer: bool = False  # the outer config's drop_vision_last_layer drops a block (MiniCPM-V 4.6)
    audio_counted: bool = False  # the kind counts the `audio_config` encoder too (MiniCPM-o 2.6): no audio note
    # the audio config class's defaults, where a vision tower's kind also reads `audio_config` (Qwen2.5-Omni)
    audio_defaults: Mapping[str, Any] = field(default_factory=dict)
    # the section the outer config class fills in where the file has none, which the engines build the tower from
    # ({}: the vision config class's defaults, Llama4Config's vision_config None -> Llama4VisionConfig(); llava's
    # CLIP-L/336); None: unknown, the tower is "not modelled" (towers_absent)
    absent_default: Mapping[str, Any] | None = None
    # where absent_default stands in for a file other than config.json (Kimi-Audio's whisper-large-v3/config.json):
    # the row's words for it, in place of "the … its config class fills in" (towers_absent.absent_note)
    absent_words: str = ""
    # what the class builds beside the tower that no config field sizes (MiMo-V2.5's audio tokenizer): "not modelled"
    notes: tuple[str, ...] = ()
    words: str = ""  # what the weights row holds, where not a vision tower and projector (Janus's generation towers)
    # the (layers, width) of the vision_config an engine fills in for a config with none, which its multimodal
    # memory rule reads (SGLang 0.5.23 hf_transformers/config.py: Phi4MM's SiglipVisionConfig, 26 layers of 1152)
    filled_vision: tuple[int, int] | None = None
    audio_elsewhere: bool = False  # an audio encoder sized by a section other than `audio_config` (Phi-4-MM's)

    def holds(self, has_audio_config: bool) -> tuple[bool, bool]:
        """Whether the row holds (a vision tower, an audio encoder). An audio kind sized by its own section
        (`audio_config`, Granite-Speech's `encoder_config`) is the audio encoder alone; a kind that counts an
        audio encoder holds it where the config has `audio_config` (the Omni thinkers, MiniCPM-o, Gemma-3n) or
        always where another section sizes it (`audio_elsewhere`: Phi-4-multimodal's `embd_layer`, beside its
        SigLIP)."""
        audio_only = self.audio_counted and self.section != "vision_config" and not self.audio_elsewhere
        audio = self.audio_counted and (has_audio_config or self.audio_elsewhere or audio_only)
        return not audio_only, audio

    def row_kind(self, has_audio_config: bool) -> TowerKind:
        """The weights row's kind (`tower_spec.TOWER_KINDS`): what the row holds (`holds`), as `label` words it."""
        vision, audio = self.holds(has_audio_config)
        return "vision_audio" if vision and audio else "audio" if audio else "vision"

    def label(self, has_audio_config: bool) -> str:
        """What the tower's weights row holds, in words: the family's own (`words`) or its kind's."""
        return self.words or ROW_WORDS[self.row_kind(has_audio_config)]


ROOT = "."  # `Tower.section` of a tower the config's top level sizes beside the decoder (Whisper's encoder)

# a weights row's words per kind, where the family states none of its own
ROW_WORDS: Mapping[TowerKind, str] = {
    "vision": "the vision tower and its projector",
    "audio": "the audio encoder and its projector",
    "vision_audio": "the vision tower, the audio encoder and their projectors",
}
