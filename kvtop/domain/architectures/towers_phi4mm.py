"""Phi-4-multimodal's towers (`Phi4MMForCausalLM`, model_type phi4mm): a SigLIP image encoder with its HD separators
and projection, and the conformer audio encoder with its two projections (towers_phi4mm_audio), counted as vLLM
0.33.0 and SGLang 0.5.23 build and shard them. The config names no vision section: the tower's shape is the
engines' own constant (towers_catalog.PHI4MM reads the `embd_layer` section the engines read).

vLLM 0.33.0 phi4mm.py `Phi4MMImageEncoder`: `get_navit_vision_model` builds idefics2_vision_model.py's
Idefics2VisionTransformer over SigLIP-so400m-patch14-448 (1152 wide, MLP 4304, 27 layers, patch 14 of a 448 image:
a biased Conv2d patch embedding and a 1,024-row nn.Embedding, whole) up to `img_processor.layer_idx` (−2 where the
config has no `img_processor` dict: 26 layers), no post-LayerNorm; its blocks split over TP as SigLIP's
(towers_vit.vit_blocks). `glb_GN` and `sub_GN` (1152 each) and `img_projection` (nn.Linear 1152 → width, GELU,
nn.Linear width → width, biased) are whole. SGLang 0.5.23 phi4mm.py builds the same from the SiglipVisionConfig
its hf_transformers/config.py fills in for the class (26 layers, the same sizes), whatever `img_processor` says.
Neither engine holds the checkpoint's vision or speech LoRA weights: vLLM's hf_to_vllm_mapper drops every "lora"
tensor (the adapters are served through --enable-lora, whose slots the deployment's LoRA term books), SGLang's
load_weights skips them. Meta-built (registry sweep, microsoft--Phi-4-multimodal-instruct, vLLM 0.33.0):
vision_encoder 822,139,712 B at TP 1, 426,092,320 B a rank at TP 2.
"""

from __future__ import annotations

from typing import Any

from kvtop.domain.architectures.towers_phi4mm_audio import (
    ConformerFields,
    Phi4MMAudioEmbedFields,
    phi4mm_audio,
)
from kvtop.domain.architectures.towers_vit import vit_blocks
from kvtop.domain.config_schema import validated
from kvtop.domain.config_types import ConfigSection
from kvtop.domain.tower_spec import TowerSpec

SOURCE = "vLLM 0.33.0 phi4mm.py (Phi4MMImageEncoder), phi4mm_audio.py; SGLang 0.5.23 phi4mm.py, phi4mm_audio.py"
CONFIG_CLASS = "Phi4MMConfig"
# vLLM 0.33.0 phi4mm.py get_navit_vision_model's vision_config (not read from the checkpoint's config)
SIGLIP_448 = {"depth": 27, "hidden_size": 1152, "intermediate_size": 4304, "in_channels": 3, "image_size": 448,
              "patch_size": 14}  # fmt: skip
LAYERS_BUILT = 26  # layer_idx −2 (vLLM); SGLang's filled-in SiglipVisionConfig num_hidden_layers
WORDS = "the vision tower, the audio encoder and their projectors"


class Phi4MMImageFields(ConfigSection):
    """`img_processor` as a dict: the layer vLLM builds the encoder up to (absent: −2)."""

    layer_idx: int = -2


def _layers(outer: dict[str, Any], source: str) -> int | None:
    """The SigLIP layers both engines build: 26, unless an `img_processor` dict names another layer (vLLM builds
    up to it, SGLang 26 whatever it says: the engines disagree, None)."""
    image = outer.get("img_processor")
    if not isinstance(image, dict):
        return LAYERS_BUILT
    index = validated(Phi4MMImageFields, image, source=source, prefix="img_processor.").layer_idx
    depth = SIGLIP_448["depth"]
    built = depth + index + 1 if index < 0 else index + 1
    return built if built == LAYERS_BUILT else None


def phi4mm(embd_layer: dict[str, Any], outer: dict[str, Any], text_hidden: int, source: str) -> TowerSpec | None:
    """The image encoder, separators and projection (SigLIP's blocks split over TP, the rest whole) and the audio
    encoder and projections (whole); None where the engines build them otherwise than kvtop counts."""
    processor = outer.get("audio_processor")
    audio_embd = embd_layer.get("audio_embd_layer")
    layers = _layers(outer, source)
    if layers is None or not isinstance(processor, dict) or processor.get("name") != "cascades":
        return None
    if not isinstance(audio_embd, dict) or not isinstance(processor.get("config"), dict):
        return None
    conformer = validated(ConformerFields, processor["config"], source=source, prefix="audio_processor.config.")
    embed = validated(Phi4MMAudioEmbedFields, audio_embd, source=source, prefix="embd_layer.audio_embd_layer.")
    audio = phi4mm_audio(conformer, embed, text_hidden)
    if audio is None:
        return None
    clip = SIGLIP_448
    width, patch = clip["hidden_size"], clip["patch_size"]
    positions = (clip["image_size"] // patch) ** 2
    whole, split = vit_blocks(layers, width, clip["intermediate_size"])
    whole += clip["in_channels"] * patch * patch * width + width + positions * width  # patch Conv2d, position table
    whole += 2 * width  # glb_GN, sub_GN
    whole += width * text_hidden + text_hidden + text_hidden * text_hidden + text_hidden  # img_projection
    return TowerSpec(params=whole + split + audio, tp_split_params=split, config_class=CONFIG_CLASS, source=SOURCE,
                     label=WORDS)  # fmt: skip
