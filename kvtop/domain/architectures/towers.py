"""A multimodal model's vision tower and projector, as data: which `vision_config` fields size it, and what
its modules hold, so that the weights book counts it per rank as the engines shard it.

The kinds: here the Qwen ViTs, Gemma-3's SigLIP and Pixtral; llava's (llava-next's, -onevision's) CLIP, SigLIP
or Pixtral, Llama-4's and Gemma-4's in towers_vit.py; InternVL's (remote-code and transformers formats) in
towers_intern.py; Kimi-K2.5's MoonViT3d (and Kimi-VL's MoonViT, the same layers) in towers_moon.py; MiniMax-M3's
in towers_minimax.py; Phi-3-vision's CLIP in towers_phi.py; Muse-Glimmer's in towers_muse.py; Kimi-K3's in
towers_moon.py; BLIP-2's and Granite-4.0-Vision's Q-Former towers in towers_blip.py; LFM2-VL's, Cosmos-3-Edge's,
Aria's and Command-A-Vision's in towers_vit.py; Ovis's in towers_ovis.py (Ovis2.5's in towers_ovis2_5.py); Moondream3's in towers_moondream.py.
The Qwen vision transformers (Qwen2.5-VL, Qwen3-VL, Qwen3.5; EXAONE-4.5's with grouped KV) are one shape with
switches: a Conv3d patch embedding (in_channels × temporal_patch × patch² →
width), an optional learned position table, `depth` blocks (two norms, fused qkv with bias, an output projection,
a gated or plain MLP with biases), and a patch merger (a norm, then width × merge² → the same → the language
model's width), Qwen3-VL adding one merger per `deepstack_visual_indexes` entry (its norm after the shuffle).
Gemma-3's SigLIP tower and projector are another (`towers_vit.siglip_gemma3`), Pixtral another. Parameter counts are
transformers' classes' (the oracle: `tower_params` in tests/data/configs/heldout/transformers_params.json).

Per rank, vLLM (qwen2_5_vl.py, qwen3_vl.py: `QKVParallelLinear`, `ColumnParallelLinear` for qkv, fc1 and the
merger's first layer, `RowParallelLinear` for proj, fc2 and the merger's last) and SGLang (qwen3_vl.py, the
same layers) split the big matrices over TP unless the encoder runs data-parallel (vLLM
`--mm-encoder-tp-mode data`, SGLang `--mm-enable-dp-encoder`: not read); a column-parallel layer's bias is
split with it, a row-parallel layer's bias, the norms, the patch embedding and the position table stay whole.
Where engines shard a part differently (a position table, replicated linears, a projector, a padded MLP) the
TowerSpec names it and each engine's `architectures.TOWER_SPLIT` says how it does. The tower lives on the first
pipeline stage.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvtop.domain.architectures import (
    towers_blip,
    towers_glm,
    towers_intern,
    towers_minicpm,
    towers_minimax,
    towers_moon,
    towers_moondream,
    towers_muse,
    towers_nvlm,
    towers_ovis,
    towers_ovis2_5,
    towers_phi,
    towers_step,
    towers_vit,
)
from kvtop.domain.architectures.towers_bee import BEE_CLASS, bee_projector
from kvtop.domain.architectures.towers_fields import Qwen2VLVisionFields, TowerConfig
from kvtop.domain.architectures.towers_fields import (
    Tower as Tower,  # re-exported: description.py, towers_coverage.py
)
from kvtop.domain.config_schema import validated
from kvtop.domain.errors import InputError
from kvtop.domain.model import TowerSpec


def read_tower(
    tower: Tower, vision_config: dict[str, Any], source: str, text_hidden: int, outer: dict[str, Any]
) -> TowerSpec | None:
    """The tower's parameters, whole and split over TP, from `vision_config` (fields named when bad) and, for a
    projector the outer config sizes (Mistral-3, llava, InternVL, MiniMax-M3), the outer config; None where the
    vision model is not the kind the entry describes or the engines would build it apart (the note stays)."""
    if tower.kind == "phi3v":  # its CLIP's shape is vLLM's constant: only layer_idx and image_dim_out are read
        image = validated(towers_phi.Phi3VImageFields, vision_config, source=source, prefix=f"{tower.section}.")
        if not 1 <= towers_vit.layers_built(image.layer_idx, towers_phi.CLIP_L14_336["depth"]) <= 24:
            raise InputError(f"must name a layer of the CLIP's 24 (got {image.layer_idx})",
                             field=f"{tower.section}.layer_idx", source=source)  # fmt: skip
        return towers_phi.phi3v_tower(image, text_hidden, tower.config_class, tower.source)
    if tower.kind == "ovis":  # the visual tokenizer's own section and its backbone_config
        tokenizer = validated(towers_ovis.OvisTokenizerFields, vision_config, source=source, prefix=f"{tower.section}.")
        if tokenizer.backbone_config.get("model_type") != "aimv2":
            return None
        backbone = validated(towers_ovis.Aimv2BackboneFields, tokenizer.backbone_config, source=source,
                             prefix=f"{tower.section}.backbone_config.")  # fmt: skip
        return towers_ovis.ovis(tokenizer, backbone, text_hidden, tower.config_class, tower.source)
    if tower.kind == "ovis2_5":  # the `vit_config` section (towers_ovis2_5) and the outer vte fields
        navit = validated(towers_ovis2_5.Siglip2NavitFields, vision_config, source=source, prefix=f"{tower.section}.")
        outer25 = validated(towers_ovis2_5.Ovis25OuterFields, outer, source=source)
        return towers_ovis2_5.ovis2_5(navit, outer25, tower.config_class)
    if tower.kind == "moondream3":  # the `config` section's `vision` dict
        encoder = validated(towers_moondream.Moondream3VisionFields, vision_config.get("vision") or {},
                            source=source, prefix="config.vision.")  # fmt: skip
        return towers_moondream.moondream3(encoder, text_hidden, tower.config_class, tower.source)
    if tower.kind == "minicpm_v":
        vision = validated(towers_minicpm.MiniCPMVisionFields, vision_config, source=source, prefix="vision_config.")
        wrapper = validated(towers_minicpm.MiniCPMOuterFields, outer, source=source)
        return towers_minicpm.minicpm_v(vision, wrapper, tower.drop_last_layer, text_hidden, tower.config_class,
                                        tower.source)  # fmt: skip
    if tower.kind == "minicpm_o":  # the vision section, the Whisper `audio_config` and the outer fields
        siglip = validated(towers_minicpm.MiniCPMVisionFields, vision_config, source=source, prefix="vision_config.")
        whisper = validated(towers_minicpm.WhisperEncoderFields, outer.get("audio_config") or {}, source=source,
                            prefix="audio_config.")  # fmt: skip
        minicpmo = validated(towers_minicpm.MiniCPMOOuterFields, outer, source=source)
        return towers_minicpm.minicpm_o(siglip, whisper, minicpmo, text_hidden, tower.config_class, tower.source)
    if tower.kind == "step3p7":  # SGLang's own field names (towers_step)
        step = validated(towers_step.Step3p7VisionFields, vision_config, source=source, prefix="vision_config.")
        if towers_step.sglang_reading_differs(step, vision_config):
            return None
        bias = validated(towers_step.Step3p7OuterFields, outer, source=source)
        return towers_step.step3p7(step, bias, text_hidden, tower.config_class)
    if tower.kind == "muse_glimmer":
        muse = validated(towers_muse.MuseVisionFields, vision_config, source=source, prefix="vision_config.")
        adapter = validated(towers_muse.MuseOuterFields, outer, source=source)
        return towers_muse.muse_glimmer(muse, adapter, text_hidden, tower.config_class, tower.source, source)
    paired = ("image_size", "patch_size") if tower.kind == "intern_vl_hf" else ()  # pairs: InternVlVisionFields
    shared = {key: value for key, value in vision_config.items() if key not in paired}
    stated = validated(TowerConfig, shared, source=source, prefix="vision_config.")
    if tower.vision_model_types and stated.model_type not in tower.vision_model_types:
        return None
    given = {key: value for key, value in stated.model_dump().items() if value is not None}
    values = {**tower.defaults, **given}
    if tower.kind == "qwen2_vl":  # its own names: embed_dim the width, hidden_size the merger's output
        qwen2 = validated(Qwen2VLVisionFields, vision_config, source=source, prefix="vision_config.")
        values = {**values, "hidden_size": qwen2.embed_dim, "out_hidden_size": qwen2.hidden_size,
                  "intermediate_size": int(qwen2.embed_dim * qwen2.mlp_ratio)}  # fmt: skip
    if tower.kind == "llava":
        llava = validated(towers_vit.LlavaProjectorConfig, outer, source=source)
        values = {**values, **tower.vision_defaults.get(stated.model_type or "", {}), **given}
        layer = values["vision_feature_layer"] if llava.vision_feature_layer is None else llava.vision_feature_layer
        if not 1 <= towers_vit.layers_built(layer, values["depth"]) <= values["depth"]:
            raise InputError(f"must name a layer of the {values['depth']} in vision_config (got {layer})",
                             field="vision_feature_layer", source=source)  # fmt: skip
        if stated.model_type == "pixtral":
            return towers_vit.llava_pixtral(values, text_hidden, llava, "PixtralVisionConfig", tower.source)
        named = "SiglipVisionConfig" if stated.model_type == "siglip_vision_model" else "CLIPVisionConfig"
        spec = towers_vit.llava_tower(values, text_hidden, llava, str(outer.get("model_type")), named, tower.source)
        if BEE_CLASS in (outer.get("architectures") or ()) and outer.get("model_type") == "llava_onevision":
            bias = text_hidden if llava.multimodal_projector_bias else 0
            onevision = values["hidden_size"] * text_hidden + text_hidden * text_hidden + 2 * bias  # whole
            return bee_projector(spec, values["hidden_size"], text_hidden, onevision)
        return spec
    if tower.kind == "minimax_vl":
        mini = validated(towers_minimax.MiniMaxVisionFields, vision_config, source=source, prefix="vision_config.")
        around = validated(towers_minimax.MiniMaxOuterFields, outer, source=source)
        return towers_minimax.minimax_vl(values, mini, around, text_hidden, tower.config_class, tower.source)
    if tower.kind == "moon_vit":
        moon = validated(towers_moon.MoonVitFields, vision_config, source=source, prefix="vision_config.")
        return towers_moon.moon_vit(
            moon, text_hidden, tower.config_class, tower.source, mlp_split_everywhere=tower.block_mlp_split
        )
    if tower.kind == "blip2":
        return towers_blip.blip2(
            validated(towers_blip.Blip2VisionFields, vision_config, source=source, prefix="vision_config."),
            validated(towers_blip.Blip2QFormerFields, outer.get("qformer_config") or {}, source=source,
                      prefix="qformer_config."),
            validated(towers_blip.Blip2OuterFields, outer, source=source), text_hidden, tower.config_class,
            tower.source,
        )  # fmt: skip
    if tower.kind == "kimi_k3":
        k3 = validated(towers_moon.KimiK3VisionFields, vision_config, source=source, prefix="vision_config.")
        return towers_moon.kimi_k3(k3, text_hidden, tower.config_class, tower.source)
    if tower.kind == "intern_vl_hf":
        hf = validated(towers_intern.InternVlVisionFields, vision_config, source=source, prefix="vision_config.")
        ratio = validated(towers_intern.InternChatFields, outer, source=source)
        return towers_intern.intern_vl_hf(values, hf, ratio, text_hidden, tower.config_class, tower.source,
                                          where=source)  # fmt: skip
    if tower.kind == "intern_vit":
        vit = validated(towers_intern.InternVitFields, vision_config, source=source, prefix="vision_config.")
        chat = validated(towers_intern.InternChatFields, outer, source=source)
        return towers_intern.intern_vit(values, vit, chat, text_hidden, tower.config_class, tower.source,
                                        where=source)  # fmt: skip
    if tower.kind == "granite4_vision":  # SigLIP whatever the section's model_type, by its class's defaults
        vision_type = stated.model_type or "clip_vision_model"  # Granite4VisionConfig's default section
        if vision_type not in tower.vision_defaults or not {"downsample_rate", "deepstack_layer_map"} <= outer.keys():
            return None  # another vision config class; or no projector fields (no class default: vLLM cannot build)
        values = {**values, **tower.vision_defaults[vision_type], **given}
        granite = validated(towers_blip.GraniteOuterFields, outer, source=source)
        return towers_blip.granite4_vision(values, granite, text_hidden, tower.config_class, tower.source)
    if tower.kind == "lfm2_vl":
        lfm2 = validated(towers_vit.Lfm2VlOuterFields, outer, source=source)
        return towers_vit.lfm2_vl(values, lfm2, text_hidden, tower.config_class, tower.source)
    if tower.kind == "aria":
        queries = validated(towers_vit.AriaOuterFields, outer, source=source)
        return towers_vit.aria(values, queries, text_hidden, tower.config_class, tower.source)
    if tower.kind == "cohere2_vision":
        alignment = validated(towers_vit.Cohere2VisionOuterFields, outer, source=source)
        return towers_vit.cohere2_vision(values, alignment, text_hidden, tower.config_class, tower.source)
    if tower.kind == "cosmos3_edge":
        merger = validated(towers_vit.Cosmos3EdgeOuterFields, outer, source=source)
        return towers_vit.cosmos3_edge(values, merger, text_hidden, tower.config_class, tower.source)
    if tower.kind == "nvlm_d":  # towers_nvlm: InternViT with vLLM's dummy heads, NVLM-D's mlp1
        return towers_nvlm.nvlm_d(values, vision_config, outer, text_hidden, tower.config_class, where=source)
    if tower.kind == "idefics3":
        scale = validated(towers_vit.Idefics3OuterFields, outer, source=source)
        return towers_vit.idefics3_vision(values, scale, text_hidden, tower.config_class, tower.source)
    if tower.kind == "glm4v":
        return towers_glm.glm4v_vision(values, tower.config_class, tower.source)
    if tower.kind == "llama4":
        return towers_vit.llama4_vision(values, text_hidden, tower.config_class, tower.source)
    if tower.kind == "gemma4":
        return towers_vit.gemma4_vision(values, text_hidden, tower.config_class, tower.source)
    if tower.kind == "siglip_paligemma":
        projection = validated(towers_vit.PaliGemmaOuterFields, outer, source=source)
        return towers_vit.paligemma_siglip(values, projection, tower.config_class, tower.source)
    if tower.kind == "siglip_gemma3":
        return towers_vit.siglip_gemma3(values, text_hidden, tower.config_class, tower.source)
    if tower.kind == "pixtral_mistral3":
        projector = validated(towers_vit.ProjectorConfig, outer, source=source)
        return towers_vit.pixtral_mistral3(values, text_hidden, projector, tower.config_class, tower.source)
    width, mlp, depth = values["hidden_size"], values["intermediate_size"], values["depth"]
    merged, out = width * values["spatial_merge_size"] ** 2, values["out_hidden_size"]
    norm = (2 if tower.norm_bias else 1) * width
    patch = values["in_channels"] * values["temporal_patch_size"] * values["patch_size"] ** 2 * width
    whole = patch + (width if tower.patch_bias else 0)
    whole += values["num_position_embeddings"] * width if tower.position_table else 0
    ups = 2 if tower.mlp_gated else 1  # column-parallel matrices of width → mlp (gate and up, or fc1)
    qkv = 3 * width  # q, k and v outputs; with grouped KV, k and v of num_key_value_heads × (width ÷ num_heads)
    if tower.grouped_kv:
        qkv = width + 2 * width // values["num_heads"] * values["num_key_value_heads"]
    # per block: qkv (width × qkv, with its bias) and fc1 / gate+up split; proj and fc2 split, their biases whole
    split = depth * (width * qkv + qkv + width * width + ups * (width * mlp + mlp) + mlp * width)
    whole += depth * (2 * norm + width + width)
    # the merger: a norm (over width, or after the shuffle over width × merge²), merged² + bias split, → out
    mergers = 1 + (len(values.get("deepstack_visual_indexes") or ()) if tower.deepstack else 0)
    split += mergers * (merged * merged + merged + merged * out)
    whole += (2 if tower.norm_bias else 1) * width + out  # the main merger's norm is over width
    if mergers > 1:
        whole += (mergers - 1) * (2 * merged + out)  # deepstack mergers norm after the shuffle (LayerNorm)
    rows = values["num_position_embeddings"] if tower.position_table else 0
    unit = depth * (ups * (width + 1) + width) if tower.mlp_gated else 0  # SGLang pads Qwen2.5-VL's gated MLP
    return TowerSpec(params=whole + split, tp_split_params=split, config_class=tower.config_class,
                     source=tower.source, position_params=rows * width, position_rows=rows,
                     mlp_width=mlp if unit else 0, mlp_unit_params=unit)  # fmt: skip


_QWEN3_VISION = {
    "depth": 27, "hidden_size": 1152, "intermediate_size": 4304, "in_channels": 3, "patch_size": 16,
    "temporal_patch_size": 2, "spatial_merge_size": 2, "out_hidden_size": 3584, "num_position_embeddings": 2304,
}  # fmt: skip

# Qwen2-VL: the Qwen ViT with LayerNorms (weight, bias), an unbiased Conv3d patch, no position table, a plain
# fc1/fc2 MLP with biases and one merger (vLLM 0.33.0 / SGLang 0.5.23 qwen2_vl.py Qwen2VisionTransformer: qkv,
# proj, fc1, fc2 and the merger's two linears Column/Row-parallel, split over TP in both)
QWEN2_VL = Tower(
    "Qwen2VLVisionConfig", "transformers models/qwen2_vl (Qwen2VisionTransformerPretrainedModel)",
    {"depth": 32, "in_channels": 3, "patch_size": 14, "temporal_patch_size": 2, "spatial_merge_size": 2},
    kind="qwen2_vl", patch_bias=False, position_table=False,
)  # fmt: skip
# GLM-4.1V / GLM-4.5V (towers_glm.py): Glm4vVisionConfig's defaults where vision_config leaves a field out
GLM4V = Tower(
    "Glm4vVisionConfig", "transformers models/glm4v (Glm4vVisionModel); vLLM 0.33.0 glm4_1v.py, SGLang 0.5.23 glm4v.py",
    {"depth": 24, "hidden_size": 1536, "intermediate_size": 13696, "out_hidden_size": 4096, "in_channels": 3,
     "image_size": 336, "patch_size": 14, "temporal_patch_size": 2, "spatial_merge_size": 2},
    kind="glm4v",
)  # fmt: skip
QWEN2_5_VL = Tower(
    "Qwen2_5_VLVisionConfig", "transformers models/qwen2_5_vl (Qwen2_5_VisionTransformerPretrainedModel)",
    {"depth": 32, "hidden_size": 3584, "intermediate_size": 3420, "in_channels": 3, "patch_size": 14,
     "temporal_patch_size": 2, "spatial_merge_size": 2, "out_hidden_size": 3584},
    norm_bias=False, patch_bias=False, position_table=False, mlp_gated=True,
)  # fmt: skip
# EXAONE-4.5's vision transformer: Qwen2.5-VL's (RMSNorms, an unbiased Conv3d patch, a biased gated MLP, one
# merger) with grouped KV heads (vLLM 0.33.0 exaone4_5.py EXAONE4_5_VisionAttention: QKVParallelLinear of num_heads and
# num_key_value_heads, head size width ÷ num_heads, biased; Exaone4GatedMLP biased); Exaone4_5_VisionConfig's defaults
EXAONE4_5 = Tower(
    "Exaone4_5_VisionConfig", "transformers models/exaone4_5; vLLM 0.33.0 exaone4_5.py, qwen2_5_vl.py",
    {"depth": 32, "hidden_size": 3584, "intermediate_size": 3420, "num_heads": 16, "num_key_value_heads": 8,
     "in_channels": 3, "patch_size": 14, "temporal_patch_size": 2, "spatial_merge_size": 2, "out_hidden_size": 3584},
    norm_bias=False, patch_bias=False, position_table=False, mlp_gated=True, grouped_kv=True,
)  # fmt: skip
QWEN3_VL = Tower(
    "Qwen3VLVisionConfig", "transformers models/qwen3_vl (Qwen3VLVisionModel)",
    {**_QWEN3_VISION, "deepstack_visual_indexes": [8, 16, 24]}, deepstack=True,
)  # fmt: skip
QWEN3_VL_MOE = Tower(
    "Qwen3VLMoeVisionConfig", "transformers models/qwen3_vl_moe (Qwen3VLMoeVisionModel)",
    {**_QWEN3_VISION, "deepstack_visual_indexes": [8, 16, 24]}, deepstack=True,
)  # fmt: skip
# Qwen3.5: the engines build Qwen3-VL's vision transformer, one deepstack merger per deepstack_visual_indexes entry a
# vision_config states (vLLM 0.33.0 qwen3_5.py: use_deepstack = hasattr(vision_config, "deepstack_visual_indexes"),
# Qwen3_VisionTransformer; SGLang 0.5.23 models/qwen3_5.py and interns2preview.py, qwen3_vl.py's
# deepstack_merger_list). Published Qwen3.5 checkpoints state [] (none); SGLang's InternS2PreviewConfig default
# states [8, 16, 24]. A vision_config leaving it out: none (transformers' Qwen3_5VisionConfig has no such field, as
# vLLM reads it); SGLang's own Qwen3_5VisionConfig (a Qwen3VLVisionConfig) would default three: not read.
QWEN3_5 = Tower(
    "Qwen3_5VisionConfig", "transformers models/qwen3_5 (Qwen3_5VisionModel)", _QWEN3_VISION, deepstack=True
)
QWEN3_5_MOE = Tower(
    "Qwen3_5MoeVisionConfig", "transformers models/qwen3_5_moe (Qwen3_5MoeVisionModel)", _QWEN3_VISION,
    deepstack=True,
)
# Intern-S1-Pro: vLLM 0.33.0 interns1_pro.py builds Qwen3-VL's vision transformer (Qwen3_VisionTransformer);
# InternS1ProVisionConfig's defaults are Qwen3-VL's; no deepstack_visual_indexes field (none where not stated)
INTERNS1_PRO = Tower("InternS1ProVisionConfig", "internlm/Intern-S1-Pro configuration_interns1_pro.py; vLLM 0.33.0 "
                     "interns1_pro.py (Qwen3_VisionTransformer)", _QWEN3_VISION, deepstack=True)  # fmt: skip
# Gemma-3's SigLIP tower: SiglipVisionConfig's class defaults where vision_config leaves a field out
GEMMA3_SIGLIP = Tower(
    "SiglipVisionConfig", "transformers models/siglip (SiglipVisionModel), models/gemma3 (Gemma3MultiModalProjector)",
    {"depth": 12, "hidden_size": 768, "intermediate_size": 3072, "in_channels": 3, "image_size": 224,
     "patch_size": 16},
    kind="siglip_gemma3",
)  # fmt: skip
PIXTRAL_MISTRAL3 = Tower(
    "PixtralVisionConfig", "transformers models/pixtral (PixtralVisionModel), models/mistral3 (Mistral3MultiModalProjector)",
    {"depth": 24, "hidden_size": 1024, "intermediate_size": 4096, "in_channels": 3, "patch_size": 16},
    kind="pixtral_mistral3",
)  # fmt: skip

# llava's (llava-next's, llava-onevision's) CLIP or SigLIP and projector: CLIPVisionConfig's or SiglipVisionConfig's
# class defaults where vision_config leaves a field out; the outer class's vision_feature_layer default
_LLAVA_VISION = {
    "clip_vision_model": {"depth": 12, "hidden_size": 768, "intermediate_size": 3072, "in_channels": 3,
                          "image_size": 224, "patch_size": 32},
    "siglip_vision_model": {"depth": 12, "hidden_size": 768, "intermediate_size": 3072, "in_channels": 3,
                            "image_size": 224, "patch_size": 16},
}  # fmt: skip
# llava over Pixtral (mistral-community/pixtral-12b): PixtralVisionConfig's class defaults (transformers
# models/pixtral), the tower vLLM llava.py builds for it (PixtralHFVisionModel, towers_vit.llava_pixtral)
_LLAVA_PIXTRAL = {"pixtral": {"depth": 24, "hidden_size": 1024, "intermediate_size": 4096, "in_channels": 3,
                              "image_size": 1024, "patch_size": 16}}  # fmt: skip
_LLAVA_SOURCE = "transformers models/clip, models/siglip (CLIPVisionModel, SiglipVisionModel), models/{}"
LLAVA_CLIP = Tower(
    "CLIPVisionConfig",
    _LLAVA_SOURCE.format("llava (LlavaMultiModalProjector)") + "; over Pixtral: models/pixtral, vLLM llava.py, pixtral.py",
    {"vision_feature_layer": -2}, kind="llava", vision_model_types=frozenset(_LLAVA_VISION) | {"pixtral"},
    vision_defaults={**_LLAVA_VISION, **_LLAVA_PIXTRAL},
)  # fmt: skip
LLAVA_NEXT = Tower(
    "CLIPVisionConfig", _LLAVA_SOURCE.format("llava_next (image_newline, LlavaNextMultiModalProjector)"),
    {"vision_feature_layer": -2}, kind="llava", vision_model_types=frozenset(_LLAVA_VISION),
    vision_defaults=_LLAVA_VISION,
)  # fmt: skip
LLAVA_NEXT_VIDEO = Tower(
    "CLIPVisionConfig", _LLAVA_SOURCE.format("llava_next_video (LlavaNextVideoMultiModalProjector)"),
    {"vision_feature_layer": -2}, kind="llava", vision_model_types=frozenset(_LLAVA_VISION),
    vision_defaults=_LLAVA_VISION,
)  # fmt: skip
LLAVA_ONEVISION = Tower(
    "SiglipVisionConfig", _LLAVA_SOURCE.format("llava_onevision (image_newline, LlavaOnevisionMultiModalProjector)"),
    {"vision_feature_layer": -1}, kind="llava", vision_model_types=frozenset(_LLAVA_VISION),
    vision_defaults=_LLAVA_VISION,
)  # fmt: skip
# Llama-4: vLLM 0.33.0 mllama4.py builds vision_model and multi_modal_projector whatever the config says, from
# Llama4VisionConfig's defaults where it has no vision_config (meta-built for AIC's Llama-4-Maverick config, which
# has none: 831,713,280 + 78,643,200 B at TP 1)
LLAMA4_VISION = Tower(
    "Llama4VisionConfig", "transformers models/llama4 (Llama4VisionModel, Llama4MultiModalProjector)",
    {"depth": 34, "hidden_size": 768, "intermediate_size": 5632, "in_channels": 3, "image_size": 448,
     "patch_size": 14, "vision_output_dim": 7680, "projector_input_dim": 4096, "projector_output_dim": 4096,
     "multi_modal_projector_bias": False},
    kind="llama4", absent_section_built=frozenset({"Llama4ForConditionalGeneration"}),
)  # fmt: skip
GEMMA4_VISION = Tower(
    "Gemma4VisionConfig", "transformers models/gemma4 (Gemma4VisionModel, Gemma4MultimodalEmbedder)",
    {"depth": 16, "hidden_size": 768, "intermediate_size": 3072, "num_attention_heads": 12,
     "num_key_value_heads": 12, "head_dim": 64, "patch_size": 16, "position_embedding_size": 10240},
    kind="gemma4",
)  # fmt: skip

# InternViT-6B's InternVisionConfig defaults (remote code configuration_intern_vit.py; qkv_bias False,
# qk_normalization True and norm_type rms_norm are InternVitFields' defaults) and InternVL's mlp1
INTERNVL_CHAT = Tower(
    "InternVisionConfig", "InternVL remote code (InternVisionModel, InternVLChatModel.mlp1); vLLM intern_vit.py",
    {"depth": 48, "hidden_size": 3200, "intermediate_size": 12800, "num_attention_heads": 25, "in_channels": 3,
     "image_size": 224, "patch_size": 14},
    kind="intern_vit",
)  # fmt: skip

# InternVL's transformers format: InternVLVisionConfig's class defaults (InternViT-300M)
INTERNVL_HF = Tower(
    "InternVLVisionConfig", "transformers models/internvl (InternVLVisionModel, InternVLMultiModalProjector); vLLM interns1.py",
    {"depth": 24, "hidden_size": 1024, "intermediate_size": 4096, "num_attention_heads": 16, "in_channels": 3},
    kind="intern_vl_hf",
)  # fmt: skip

# Kimi-K2.5's MoonViT3d (Kimi_K25VisionConfig's defaults: towers_moon.MoonVitFields)
KIMI_K25 = Tower(
    "Kimi_K25VisionConfig", "transformers models/kimi_k25 (Kimi_K25VisionModel, projector); vLLM kimi_k25_vit.py",
    kind="moon_vit",
)  # fmt: skip

# Kimi-VL's MoonViT (MoonViTConfig's defaults: the same as towers_moon.MoonVitFields'): vLLM moonvit.py builds the
# layers MoonViT3d has (a biased Conv2d patch, a height × width × width table, blocks of two LayerNorms, wqkv/wo
# and fc0/fc1 biased, a final LayerNorm; QKVParallelLinear, Row, Column, Row: split over TP, the heads dividing
# by it or vLLM stops) and kimi_vl.py's KimiVLMultiModalProjector the same patch merger (ReplicatedLinear, whole);
# SGLang 0.5.23 kimi_vl_moonvit.py splits the attention (VisionAttention) and the block MLP alike
# (MoonVitEncoderLayer builds MLP2 with use_tensor_parallel = not use_data_parallel: Column/RowParallelLinear),
# unlike its kimi_k25.py (MLP2 whole): meta-built at TP 2, 422,452,080 B of vision_tower per rank in both engines
KIMI_VL = Tower(
    "MoonViTConfig", "Kimi-VL remote code (MoonVitPretrainedModel, KimiVLMultiModalProjector); vLLM moonvit.py, kimi_vl.py",
    kind="moon_vit", vision_model_types=frozenset({"moonvit"}), block_mlp_split=True,
)  # fmt: skip

# Kimi-K3's MoonViT and patchmergerv2 (KimiK3VisionConfig's defaults: towers_moon.KimiK3VisionFields)
KIMI_K3 = Tower(
    "KimiK3VisionConfig", "vLLM 0.33.0 configs/kimi_k3.py, kimi_k3/nvidia/model.py, kimi_k25_vit.py; SGLang 0.5.23 kimi_k3_vl.py",
    kind="kimi_k3",
)  # fmt: skip

# Phi-3-vision / Phi-3.5-vision: vLLM phi3v.py's CLIP ViT-L/14-336, HD separators and img_projection (towers_phi)
PHI3_V = Tower(
    "CLIPVisionConfig", "Phi-3.5-vision remote code (Phi3ImageEmbedding); vLLM phi3v.py (Phi3HDImageEmbedding), clip.py",
    kind="phi3v", section="img_processor",
)  # fmt: skip

# MiniMax-M3's vision config is a CLIPVisionConfig (its class defaults where a field is absent)
MINIMAX_M3 = Tower(
    "CLIPVisionConfig", "transformers models/minimax_m3_vl (MiniMaxM3VL vision model); vLLM minimax_m3/common/vision_tower.py",
    {"depth": 12, "hidden_size": 768, "intermediate_size": 3072, "in_channels": 3, "patch_size": 32},
    kind="minimax_vl",
)  # fmt: skip

# MiniCPM-V 4.6 and 4.7 over Qwen3.5's text entry: vLLM 0.33.0 minicpmv4_6.py, minicpmv4_7.py (towers_minicpm)
_MINICPM_SOURCE = "transformers models/{} (vision config); vLLM 0.33.0 {}.py, idefics2_vision_model.py"
MINICPM_V4_6 = Tower(
    "MiniCPMV4_6VisionConfig", _MINICPM_SOURCE.format("minicpmv4_6", "minicpmv4_6"), kind="minicpm_v",
    drop_last_layer=True,
)  # fmt: skip
MINICPM_V4_7 = Tower(
    "MiniCPMV4_7VisionConfig", _MINICPM_SOURCE.format("minicpmv4_7", "minicpmv4_7"), kind="minicpm_v"
)
# MiniCPM-o 2.6's SigLIP, resampler, Whisper encoder and audio projection (towers_minicpm.minicpm_o; the entry's
# tower: SiglipVisionConfig's and WhisperConfig's class defaults where a section leaves a field out)
MINICPM_O2_6 = Tower(
    "SiglipVisionConfig", "openbmb/MiniCPM-o-2_6 configuration_minicpm.py; vLLM 0.33.0 minicpmo.py, minicpmv.py "
    "(MiniCPMV2_6, Resampler2_5); SGLang 0.5.23 minicpmo.py", kind="minicpm_o", audio_counted=True,
)  # fmt: skip

# Step-3.7's PerceptionEncoder and vit_large_projector as SGLang 0.5.23 builds them (towers_step; the entry's tower)
STEP3P7 = Tower("Step3p7VisionEncoderConfig", towers_step.SOURCE, kind="step3p7")

# Muse-Glimmer's vision encoder, adapter and projection: vLLM 0.33.0 / SGLang 0.5.23 models/muse_glimmer.py
MUSE_GLIMMER = Tower(
    "MuseGlimmerVisionConfig",
    "transformers models/muse_glimmer (vision config); vLLM 0.33.0 / SGLang 0.5.23 models/muse_glimmer.py",
    kind="muse_glimmer",
)  # fmt: skip

# PaliGemma's SigLIP and PaliGemmaMultiModalProjector (vLLM paligemma.py builds SiglipVisionModel whatever the
# section's model_type; SiglipVisionConfig's class defaults where vision_config leaves a field out: transformers
# builds the dict as a SiglipVisionConfig)
PALIGEMMA_SIGLIP = Tower(
    "SiglipVisionConfig", "transformers models/siglip, models/paligemma; vLLM 0.33.0 paligemma.py, siglip.py",
    GEMMA3_SIGLIP.defaults, kind="siglip_paligemma",
)  # fmt: skip

# Idefics3's and SmolVLM's SigLIP (Idefics3VisionConfig's / SmolVLMVisionConfig's class defaults, the same) and
# connector (vLLM 0.33.0 idefics3.py, smolvlm.py)
IDEFICS3_VISION = Tower(
    "Idefics3VisionConfig", "transformers models/idefics3, models/smolvlm; vLLM 0.33.0 idefics3.py, idefics2_vision_model.py",
    {"depth": 12, "hidden_size": 1152, "intermediate_size": 3072, "in_channels": 3, "image_size": 224,
     "patch_size": 32},
    kind="idefics3",
)  # fmt: skip

# BLIP-2's vision model, Q-Former and projection (towers_blip; Blip2VisionConfig's defaults there)
BLIP2 = Tower(
    "Blip2VisionConfig", "transformers models/blip_2 (config classes); vLLM 0.33.0 blip2.py, blip.py", kind="blip2"
)
# Granite-4.0-Vision's SigLIP and window Q-Former projectors (towers_blip): the vision config class's defaults by
# its model_type (Granite4VisionConfig's default section is a CLIPVisionConfig); vLLM builds SiglipVisionModel
GRANITE4_VISION = Tower(
    "SiglipVisionConfig", "transformers models/granite4_vision; vLLM 0.33.0 granite4_vision.py, siglip.py, blip2.py",
    {"in_channels": 3}, kind="granite4_vision", vision_defaults=_LLAVA_VISION,
)  # fmt: skip

# LFM2-VL's SigLIP2 and projector (towers_vit.lfm2_vl): Siglip2VisionConfig's class defaults; vLLM refuses another
# vision model_type ("Unsupported visual tokenizer type")
LFM2_VL = Tower(
    "Siglip2VisionConfig", "transformers models/siglip2, models/lfm2_vl; vLLM 0.33.0 lfm2_vl.py, lfm2_siglip2.py; SGLang 0.5.23 lfm2_vl.py",
    {"depth": 12, "hidden_size": 768, "intermediate_size": 3072, "in_channels": 3, "patch_size": 16,
     "num_patches": 256},
    kind="lfm2_vl", vision_model_types=frozenset({"siglip2_vision_model"}),
)  # fmt: skip

# Aria's Idefics3 SigLIP and projector (towers_vit.aria; AriaConfig's default section is an Idefics3VisionConfig)
ARIA_VISION = Tower(
    "Idefics3VisionConfig", "transformers models/aria, models/idefics3; vLLM 0.33.0 aria.py, idefics2_vision_model.py",
    IDEFICS3_VISION.defaults, kind="aria",
)  # fmt: skip

# Command-A-Vision's SigLIP and projector (towers_vit.cohere2_vision; SiglipVisionConfig's class defaults)
COHERE2_VISION = Tower(
    "SiglipVisionConfig", "transformers models/cohere2_vision, models/siglip; vLLM 0.33.0 cohere2_vision.py, siglip.py",
    GEMMA3_SIGLIP.defaults, kind="cohere2_vision",
)  # fmt: skip

# Ovis's AIMv2 visual tokenizer and visual embedding table (towers_ovis; the `visual_tokenizer_config` section)
OVIS = Tower(
    "Aimv2VisionConfig", "vLLM 0.33.0 ovis.py, aimv2.py, configs/ovis.py; transformers models/aimv2",
    kind="ovis", section="visual_tokenizer_config",
)  # fmt: skip

# Cosmos-3-Edge's SigLIP2 and patch merger (towers_vit.cosmos3_edge; Cosmos3EdgeVisionConfig's class defaults)
COSMOS3_EDGE = Tower(
    "Cosmos3EdgeVisionConfig", "transformers models/cosmos3_edge; vLLM 0.33.0 / SGLang 0.5.23 cosmos3_edge.py",
    {**LFM2_VL.defaults, "hidden_size": 1152, "intermediate_size": 4304, "depth": 27, "spatial_merge_size": 2},
    kind="cosmos3_edge",
)  # fmt: skip

# Moondream3's vision encoder and projection (towers_moondream; the entry's tower): vLLM builds them from the
# `config` section's `vision` dict, from Moondream3VisionConfig's defaults where the config has no section (vLLM's
# registry serves HfMoondream with the same class: default--HfMoondream meta-built as Moondream3ForCausalLM's)
MOONDREAM3 = Tower(
    "Moondream3VisionConfig", "vLLM 0.33.0 models/moondream3.py, transformers_utils/configs/moondream3.py",
    kind="moondream3", section="config", absent_section_built=frozenset({"Moondream3ForCausalLM", "HfMoondream"}),
)  # fmt: skip

# Towers a wrapper's outer model_type names, where its text entry is shared with text-only models (Mistral-3's
# language model is Mistral's entry, llava's Llama's, Llama-4's and Gemma-4's their text-only entries)
BY_OUTER_TYPE: Mapping[str, Tower] = {
    "mistral3": PIXTRAL_MISTRAL3, "llava": LLAVA_CLIP, "llama4": LLAMA4_VISION, "gemma4": GEMMA4_VISION,
    "internvl_chat": INTERNVL_CHAT, "llava_next": LLAVA_NEXT, "llava_onevision": LLAVA_ONEVISION,
    "kimi_k25": KIMI_K25, "kimi_k3": KIMI_K3, "minimax_m3_vl": MINIMAX_M3, "internvl": INTERNVL_HF, "kimi_vl": KIMI_VL,
    "minicpmv4_6": MINICPM_V4_6, "minicpmv4_7": MINICPM_V4_7, "paligemma": PALIGEMMA_SIGLIP,
    "idefics3": IDEFICS3_VISION, "smolvlm": IDEFICS3_VISION, "blip-2": BLIP2, "granite4_vision": GRANITE4_VISION,
    "lfm2_vl": LFM2_VL, "aria": ARIA_VISION, "cohere2_vision": COHERE2_VISION,
    "ovis": OVIS, "llava_next_video": LLAVA_NEXT_VIDEO,
    "ovis2_5": Tower("Siglip2NavitConfig", towers_ovis2_5.SOURCE, kind="ovis2_5", section="vit_config"),
    "cosmos3_edge": COSMOS3_EDGE, "exaone4_5": EXAONE4_5,
    "NVLM_D": Tower("InternVisionConfig", towers_nvlm.SOURCE, INTERNVL_CHAT.defaults, kind="nvlm_d"),
}  # fmt: skip
