"""A multimodal model's vision tower and projector, as data: which `vision_config` fields size it, and what
its modules hold, so that the weights book counts it per rank as the engines shard it.

The kinds: here the Qwen ViTs, Gemma-3's SigLIP and Pixtral; llava's (llava-next's, -onevision's) CLIP, SigLIP
or Pixtral, Llama-4's and Gemma-4's in towers_vit.py; InternVL's (remote-code and transformers formats) in
towers_intern.py; Kimi-K2.5's MoonViT3d (and Kimi-VL's MoonViT, the same layers) in towers_moon.py; MiniMax-M3's
in towers_minimax.py; Phi-3-vision's CLIP in towers_phi.py; Muse-Glimmer's in towers_muse.py; Kimi-K3's in
towers_moon.py; BLIP-2's and Granite-4.0-Vision's Q-Former towers in towers_blip.py; LFM2-VL's, Cosmos-3-Edge's,
Aria's and Command-A-Vision's in towers_vit.py; Ovis's in towers_ovis.py (Ovis2.5's in towers_ovis2_5.py);
Moondream3's in towers_moondream.py; a tower named by checkpoint id (`mm_vision_tower`, no section) in
towers_named.py, read by config_reader; Isaac's in towers_isaac.py; Phi-4-reasoning-vision's in
towers_phi4_siglip.py; Phi-4-multimodal's SigLIP and conformer audio encoder in towers_phi4mm.py; ERNIE-4.5-VL's
DFNRope transformer and resampler in towers_ernie45_vl.py; Gemma-3n's MobileNet-v5, USM audio encoder and embedders in towers_gemma3n.py;
MOSS-Transcribe-Diarize's Whisper encoder and adaptor in towers_moss.py; Molmo's constant ViT in towers_molmo.py.
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
`--mm-encoder-tp-mode data`, SGLang `--mm-enable-dp-encoder`: whole, as at TP 1, for the classes each engine's
`TowerSplit.data_parallel` lists); a column-parallel layer's bias is
split with it, a row-parallel layer's bias, the norms, the patch embedding and the position table stay whole.
Where engines shard a part differently (a position table, replicated linears, a projector, a padded MLP) the
TowerSpec names it and each engine's `architectures.TOWER_SPLIT` says how it does. The tower lives on the first
pipeline stage. The descriptions themselves (one `Tower` per family, and the tower each outer model_type
builds) are in towers_catalog.py, the audio-only towers in towers_catalog_audio.py; this module reads them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from kvtop.domain.architectures import (
    towers_audio,
    towers_bailing,
    towers_blip,
    towers_dasheng,
    towers_deepseek_ocr,
    towers_deepseek_vl2,
    towers_dots_vlm,
    towers_ernie45_vl,
    towers_eva2clip,
    towers_fireredasr2,
    towers_funasr,
    towers_funaudiochat,
    towers_gemma3n,
    towers_gemma4_audio,
    towers_glm,
    towers_intern,
    towers_isaac,
    towers_janus,
    towers_kanana,
    towers_keye,
    towers_kimi_audio,
    towers_mimo,
    towers_minicpm,
    towers_minimax,
    towers_mistral_format,
    towers_mllama,
    towers_molmo,
    towers_moon,
    towers_moondream,
    towers_moss,
    towers_muse,
    towers_nemotron_vl,
    towers_nvila,
    towers_nvlm,
    towers_onevision2,
    towers_ovis,
    towers_ovis2_5,
    towers_phi,
    towers_phi4_siglip,
    towers_phi4mm,
    towers_points,
    towers_radio,
    towers_step,
    towers_step3_vl,
    towers_ultravox,
    towers_vit,
    towers_voxtral,
    towers_whisper,
)
from kvtop.domain.architectures.towers_bee import ONEVISION, bee_projector, pre_norm_projector
from kvtop.domain.architectures.towers_fields import Qwen2VLVisionFields, TowerConfig
from kvtop.domain.architectures.towers_fields import (
    Tower as Tower,  # re-exported: description.py
)
from kvtop.domain.config_schema import validated
from kvtop.domain.errors import InputError
from kvtop.domain.tower_spec import TowerSpec


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
    if tower.kind == "phi4mm":  # towers_phi4mm: the engines' SigLIP constant, `audio_processor` and `embd_layer`
        return towers_phi4mm.phi4mm(vision_config, outer, text_hidden, source)
    if tower.kind == "molmo":  # towers_molmo: vLLM's constant ViT; the language model's fields size the projector
        return towers_molmo.molmo(validated(towers_molmo.MolmoProjectorFields, outer, source=source))
    if tower.kind == "dots_vlm":  # towers_dots_vlm: DotsVisionConfig's names, its defaults where absent
        return towers_dots_vlm.dots_vlm(validated(towers_dots_vlm.DotsVisionFields, vision_config, source=source,
                                                  prefix="vision_config."))  # fmt: skip
    if tower.kind == "ernie45_vl":  # towers_ernie45_vl: DFNRope's own names and the outer resampler fields
        dfn = validated(towers_ernie45_vl.DFNRopeVisionFields, vision_config, source=source, prefix="vision_config.")
        resampler = validated(towers_ernie45_vl.ErnieResamplerFields, outer, source=source)
        return towers_ernie45_vl.ernie45_vl(dfn, resampler, text_hidden)
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
    if tower.kind == "onevision2":  # towers_onevision2: the OneVision encoder, its merger to the text width
        ov2 = validated(towers_onevision2.OneVision2Fields, vision_config, source=source, prefix="vision_config.")
        return towers_onevision2.onevision2(ov2, text_hidden)
    if tower.kind == "moondream3":  # the `config` section's `vision` dict
        encoder = validated(towers_moondream.Moondream3VisionFields, vision_config.get("vision") or {},
                            source=source, prefix="config.vision.")  # fmt: skip
        return towers_moondream.moondream3(encoder, text_hidden, tower.config_class, tower.source)
    if tower.kind == "deepseek_ocr":  # SAM and CLIP (OCR) or timm's SigLIP (VL2): constants; `projector_config` the rest
        section = outer.get("projector_config") or {}
        ocr = validated(towers_deepseek_ocr.DeepseekOCRProjectorFields, section, source=source, prefix="projector_config.")
        vl2 = validated(towers_deepseek_vl2.DeepseekVL2ProjectorFields, section, source=source, prefix="projector_config.")
        return towers_deepseek_ocr.deepseek_ocr(outer, ocr) or towers_deepseek_vl2.deepseek_vl2(outer, vl2)
    if tower.kind == "janus":  # five sections of `cls` and `params` (towers_janus)
        return towers_janus.janus(outer)
    if tower.kind == "gemma3n":  # `vision_config` names a timm architecture; `audio_config` sizes the USM encoder
        return towers_gemma3n.gemma3n(outer, text_hidden, source)
    if tower.kind == "minicpm_v":
        vision = validated(towers_minicpm.MiniCPMVisionFields, vision_config, source=source, prefix="vision_config.")
        wrapper = validated(towers_minicpm.MiniCPMOuterFields, outer, source=source)
        return towers_minicpm.minicpm_v(vision, wrapper, tower.drop_last_layer, text_hidden, tower.config_class,
                                        tower.source)  # fmt: skip
    if tower.kind == "minicpm_o":  # the vision section, the Whisper `audio_config` and the outer fields
        siglip = validated(towers_minicpm.MiniCPMVisionFields, vision_config, source=source, prefix="vision_config.")
        whisper = validated(towers_audio.WhisperEncoderFields, outer.get("audio_config") or {}, source=source,
                            prefix="audio_config.")  # fmt: skip
        minicpmo = validated(towers_minicpm.MiniCPMOOuterFields, outer, source=source)
        return towers_minicpm.minicpm_o(siglip, whisper, minicpmo, text_hidden, tower.config_class, tower.source)
    if tower.kind == "minicpm_v2_6":  # the vision section and the outer MiniCPMVConfig fields
        siglip = validated(towers_minicpm.MiniCPMVisionFields, vision_config, source=source, prefix="vision_config.")
        outer_v = validated(towers_minicpm.MiniCPMOOuterFields, outer, source=source)
        return towers_minicpm.minicpm_v2_6(siglip, outer_v, text_hidden, tower.config_class, tower.source)
    if tower.kind == "moss_audio":  # `audio_config` (vLLM's MossAudioEncoderConfig) and the outer adapter fields
        moss = validated(towers_moss.MossAudioEncoderFields, vision_config, source=source, prefix="audio_config.")
        adapter_fields = validated(towers_moss.MossAudioOuterFields, outer, source=source)
        return towers_moss.moss_audio(moss, adapter_fields, text_hidden)
    if tower.kind == "whisper":  # the top-level WhisperConfig's encoder fields (towers_whisper)
        sizes = validated(towers_audio.WhisperEncoderFields, vision_config, source=source)
        heads_w = validated(towers_whisper.WhisperHeadFields, vision_config, source=source)
        return towers_whisper.whisper_tower(sizes, heads_w)
    if tower.kind == "moss_td":  # `audio_config` (a WhisperConfig) and the outer adaptor fields (towers_moss)
        heads = validated(towers_moss.MossWhisperFields, vision_config, source=source, prefix="audio_config.")
        adaptor = validated(towers_moss.MossOuterFields, outer, source=source)
        sizes = towers_audio.audio_sizes(vision_config, tower.defaults, source)
        return towers_moss.moss_transcribe_diarize(sizes, heads, adaptor, text_hidden)
    if tower.kind == "kimi_audio":  # whisper-large-v3's sizes (Tower.absent_default) and kimia_adaptor_input_dim
        heads = validated(towers_moss.MossWhisperFields, vision_config, source=source, prefix=f"{tower.section}.")
        sizes = towers_audio.audio_sizes(vision_config, tower.defaults, source)
        adaptor_in = validated(towers_kimi_audio.KimiAudioOuterFields, outer, source=source)
        return towers_kimi_audio.kimi_audio(sizes, heads, adaptor_in, text_hidden)
    if tower.kind == "funasr":  # `audio_encoder_conf` (SenseVoiceEncoderSmall's arguments)
        return towers_funasr.funasr(validated(towers_funasr.SenseVoiceConf, vision_config, source=source,
                                              prefix=f"{tower.section}."))  # fmt: skip
    if tower.kind == "fireredasr2":  # `audio_encoder_conf` (ConformerEncoder's arguments), encoder_downsample_rate
        conformer = validated(towers_fireredasr2.ConformerConf, vision_config, source=source, prefix=f"{tower.section}.")
        rate = validated(towers_fireredasr2.FireRedOuterFields, outer, source=source)
        return towers_fireredasr2.fireredasr2(conformer, rate, text_hidden)
    if tower.kind == "funaudiochat":  # `audio_config` (FunAudioChatAudioEncoderConfig)
        fun = validated(towers_funaudiochat.FunAudioChatAudioFields, vision_config, source=source,
                        prefix=f"{tower.section}.")  # fmt: skip
        return towers_funaudiochat.funaudiochat(towers_audio.audio_sizes(vision_config, tower.defaults, source), fun)
    if tower.kind == "dasheng":  # `audio_encoder_config` (a DashengConfig) and the outer subsample_factor
        dasheng = validated(towers_dasheng.DashengFields, vision_config, source=source, prefix=f"{tower.section}.")
        subsample = validated(towers_dasheng.MiDashengOuterFields, outer, source=source)
        return towers_dasheng.midashenglm(dasheng, subsample, text_hidden)
    if tower.kind == "ultravox":  # `audio_config` (a WhisperConfig) and UltravoxConfig's projector fields
        sizes_u = validated(towers_audio.WhisperEncoderFields, vision_config, source=source, prefix="audio_config.")
        heads_u = validated(towers_whisper.WhisperHeadFields, vision_config, source=source, prefix="audio_config.")
        outer_u = validated(towers_ultravox.UltravoxOuterFields, outer, source=source)
        return towers_ultravox.ultravox(sizes_u, heads_u, outer_u, text_hidden, source)
    if tower.kind == "voxtral":  # `audio_config` (a VoxtralEncoderConfig): SGLang's build (towers_voxtral)
        voxtral_heads = validated(towers_voxtral.VoxtralEncoderHeads, vision_config, source=source,
                                  prefix=f"{tower.section}.")  # fmt: skip
        sizes = towers_audio.audio_sizes(vision_config, tower.defaults, source)
        return towers_voxtral.voxtral(sizes, voxtral_heads, text_hidden)
    if tower.kind in towers_audio.KINDS:  # an audio encoder (and Qwen2.5-Omni's vision tower beside it)
        return _read_audio(tower, vision_config, source, text_hidden, outer)
    if tower.kind == "step3p7":  # SGLang's own field names (towers_step)
        step = validated(towers_step.Step3p7VisionFields, vision_config, source=source, prefix="vision_config.")
        if towers_step.sglang_reading_differs(step, vision_config):
            return None
        bias = validated(towers_step.Step3p7OuterFields, outer, source=source)
        return towers_step.step3p7(step, bias, text_hidden, tower.config_class, tower.source)
    if tower.kind == "step3_vl":  # Step3VisionEncoderConfig and the outer projector fields (towers_step3_vl)
        step3 = validated(towers_step3_vl.Step3VisionFields, vision_config, source=source, prefix="vision_config.")
        return towers_step3_vl.step3_vl(step3, validated(towers_step3_vl.Step3VLOuterFields, outer, source=source))
    if tower.kind == "eva2clip":  # GLM-4V-9B: the section's own names, the outer ChatGLM ffn_hidden_size
        eva = validated(towers_eva2clip.Eva2ClipVisionFields, vision_config, source=source, prefix="vision_config.")
        return towers_eva2clip.eva2clip(eva, validated(towers_eva2clip.Eva2ClipOuterFields, outer, source=source),
                                        text_hidden)  # fmt: skip
    if tower.kind == "nemotron_vl":  # towers_nemotron_vl: mlp1 alone, sized by the outer fields
        return towers_nemotron_vl.mlp1(outer, text_hidden, source)
    if tower.kind == "mimo_v2_omni":  # Mimo_VLVisionConfig and the `audio_config` encoder (towers_mimo)
        return towers_mimo.mimo_v2_omni(vision_config, outer, source)
    if tower.kind == "bailing_v3_vl":  # the Qwen3 ViT without its merger MLP and Ling-3-VL's linear_proj
        bailing = validated(towers_bailing.BailingVisionFields, vision_config, source=source, prefix="vision_config.")
        qwen = read_tower(replace(tower, kind="qwen", deepstack=False), vision_config, source, text_hidden, outer)
        if qwen is None or not towers_bailing.engines_agree(bailing):
            return None
        qwen_vit = {**tower.defaults, **{k: v for k, v in vision_config.items() if k in tower.defaults}}
        return towers_bailing.bailing_v3_vl(qwen, qwen_vit["hidden_size"], qwen_vit["spatial_merge_size"],
                                            qwen_vit["out_hidden_size"], text_hidden)  # fmt: skip
    if tower.kind == "keye":  # towers_keye: SigLIP and its projector, by the class the config names
        keye = validated(towers_keye.KeyeVisionFields, vision_config, source=source, prefix="vision_config.")
        return towers_keye.keye(keye, str((outer.get("architectures") or [""])[0]), text_hidden)
    if tower.kind == "mllama":  # MllamaVisionConfig's fields (towers_mllama)
        mllama = validated(towers_mllama.MllamaVisionFields, vision_config, source=source, prefix="vision_config.")
        return towers_mllama.mllama_vision(mllama, text_hidden)
    if tower.kind == "muse_glimmer":
        muse = validated(towers_muse.MuseVisionFields, vision_config, source=source, prefix="vision_config.")
        adapter = validated(towers_muse.MuseOuterFields, outer, source=source)
        return towers_muse.muse_glimmer(muse, adapter, text_hidden, tower.config_class, tower.source, source)
    if tower.kind == "kanana_v":  # towers_kanana: the Qwen2-VL ViT less its merger, and the abstractor
        kanana_vit = {k: v for k, v in vision_config.items() if k != "image_size"}  # "dynamic": sizes nothing
        qwen = read_tower(replace(tower, kind="qwen2_vl"), kanana_vit, source, text_hidden, outer)
        merge = validated(TowerConfig, kanana_vit, source=source, prefix="vision_config.").spatial_merge_size
        kanana_merger = validated(Qwen2VLVisionFields, kanana_vit, source=source, prefix="vision_config.")
        proj = validated(towers_kanana.KananaProjectorFields, outer.get("projector_config") or {}, source=source,
                         prefix="projector_config.")  # fmt: skip
        return None if qwen is None else towers_kanana.kanana_v(
            qwen, kanana_merger.embed_dim, merge or tower.defaults["spatial_merge_size"], kanana_merger.hidden_size, proj)
    paired = ("image_size", "patch_size") if tower.kind == "intern_vl_hf" else ()  # pairs: InternVlVisionFields
    shared = {key: value for key, value in vision_config.items() if key not in paired}
    stated = validated(TowerConfig, shared, source=source, prefix="vision_config.")
    if tower.vision_model_types and stated.model_type not in tower.vision_model_types:
        return None
    given = {key: value for key, value in stated.model_dump().items() if value is not None}
    values = {**tower.defaults, **given}
    if tower.kind in ("nvila", "nvila_lite"):  # towers_nvila: transformers' SigLIP and the projector, whole
        return towers_nvila.nvila(values, tower.kind, text_hidden, tower.config_class, tower.source)
    if tower.kind == "sarashina2_vision":  # towers_nvila: the Qwen2-VL ViT and the LayerNorm over its output
        qwen = read_tower(replace(tower, kind="qwen2_vl"), vision_config, source, text_hidden, outer)
        return None if qwen is None else towers_nvila.with_output_norm(qwen, text_hidden, tower.config_class,
                                                                       tower.source)  # fmt: skip
    if tower.kind == "points_v15":  # towers_points: the Qwen2-VL ViT and a second merger, its vision_projector
        qwen = read_tower(replace(tower, kind="qwen2_vl"), vision_config, source, text_hidden, outer)
        return None if qwen is None else towers_points.with_projector(qwen, text_hidden)
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
        pre_norm = pre_norm_projector(outer)  # Bee's, R-4B's: llava-onevision's tower, its own projector
        outer_type = ONEVISION if pre_norm is not None else str(outer.get("model_type"))
        spec = towers_vit.llava_tower(values, text_hidden, llava, outer_type, named, tower.source)
        if pre_norm is not None:
            projector_bias = text_hidden if llava.multimodal_projector_bias else 0
            onevision = values["hidden_size"] * text_hidden + text_hidden * text_hidden + 2 * projector_bias  # whole
            return bee_projector(spec, values["hidden_size"], text_hidden, onevision, *pre_norm)
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
    if tower.kind == "isaac":  # towers_isaac: SigLIP2 and the pixel-shuffle MLP
        shuffle = validated(towers_isaac.IsaacVisionFields, vision_config, source=source, prefix="vision_config.")
        isaac_outer = validated(towers_isaac.IsaacOuterFields, outer, source=source)
        return towers_isaac.isaac(values, shuffle, isaac_outer, text_hidden, tower.config_class)
    if tower.kind == "phi4_siglip":  # towers_phi4_siglip: SigLIP2 to layer -2 and the LLaVA projector
        phi4 = validated(towers_phi4_siglip.Phi4SiglipOuterFields, outer, source=source)
        return towers_phi4_siglip.phi4_siglip(values, phi4, text_hidden, tower.config_class)
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
    if tower.kind == "radio":  # towers_radio: `args.model` names the ViT; the outer fields size mlp1
        return towers_radio.radio(vision_config, outer, text_hidden, source)
    if tower.kind == "nvlm_d":  # towers_nvlm: InternViT with vLLM's dummy heads, NVLM-D's mlp1
        return towers_nvlm.nvlm_d(values, vision_config, outer, text_hidden, tower.config_class, where=source)
    if tower.kind == "idefics3":
        scale = validated(towers_vit.Idefics3OuterFields, outer, source=source)
        return towers_vit.idefics3_vision(values, scale, text_hidden, tower.config_class, tower.source)
    if tower.kind == "glm4v":
        return towers_glm.glm4v_vision(values, tower.config_class, tower.source)
    if tower.kind == "llama4":
        return towers_vit.llama4_vision(values, text_hidden, tower.config_class, tower.source)
    if tower.kind == "gemma4":  # towers_gemma4_audio: an `audio_config`'s encoder joins the vision tower's row
        gemma4 = towers_vit.gemma4_vision(values, text_hidden, tower.config_class, tower.source)
        return towers_gemma4_audio.with_audio(gemma4, outer, text_hidden, source)
    if tower.kind == "siglip_paligemma":
        projection = validated(towers_vit.PaliGemmaOuterFields, outer, source=source)
        return towers_vit.paligemma_siglip(values, projection, tower.config_class, tower.source)
    if tower.kind == "siglip_gemma3":
        return towers_vit.siglip_gemma3(values, text_hidden, tower.config_class, tower.source)
    if tower.kind == "pixtral_mistral_format":
        switches = validated(towers_mistral_format.MistralVisionFields, vision_config, source=source,
                             prefix="vision_config.")  # fmt: skip
        return towers_mistral_format.pixtral_mistral_format(values, switches, text_hidden, tower.config_class, source)
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
    whole += out * text_hidden + text_hidden if tower.text_projector else 0  # a projector past the merger
    if mergers > 1:
        whole += (mergers - 1) * (2 * merged + out)  # deepstack mergers norm after the shuffle (LayerNorm)
    rows = values["num_position_embeddings"] if tower.position_table else 0
    unit = depth * (ups * (width + 1) + width) if tower.mlp_gated else 0  # SGLang pads Qwen2.5-VL's gated MLP
    return TowerSpec(params=whole + split, tp_split_params=split, config_class=tower.config_class,
                     source=tower.source, position_params=rows * width, position_rows=rows,
                     mlp_width=mlp if unit else 0, mlp_unit_params=unit,
                     attention_split_params=depth * (width * qkv + qkv + width * width))  # fmt: skip


def _read_audio(
    tower: Tower, section: dict[str, Any], source: str, text_hidden: int, outer: dict[str, Any]
) -> TowerSpec | None:
    """An audio kind's tower (towers_audio): the `audio_config` encoder and projector; Qwen2.5-Omni's thinker
    reads its Qwen2.5-VL tower from `vision_config` (the `qwen` kind) and adds its audio encoder."""
    if tower.kind == "qwen2_5_omni":
        vision = read_tower(replace(tower, kind="qwen"), section, source, text_hidden, outer)
        audio_section = outer.get("audio_config") or {}
        sizes = towers_audio.audio_sizes(audio_section, tower.audio_defaults, source)
        out = validated(towers_audio.OmniAudioFields, audio_section, source=source, prefix="audio_config.")
        audio = towers_audio.qwen2_5_omni_audio(sizes, out.output_dim)
        return None if vision is None else vision.model_copy(update={"params": vision.params + audio})
    if tower.kind == "qwen3_omni":
        qwen3 = read_tower(replace(tower, kind="qwen"), section, source, text_hidden, outer)
        image, patch = section.get("image_size"), section.get("patch_size", tower.defaults["patch_size"])
        rows = section.get("num_position_embeddings", tower.defaults["num_position_embeddings"])
        if qwen3 is None or not isinstance(image, int) or not isinstance(patch, int) or (image // patch) ** 2 != rows:
            return None  # vLLM sizes the position table by image_size (absent: it cannot build), kvtop by the rows
        audio_section = outer.get("audio_config") or {}
        extra = validated(towers_audio.Qwen3OmniAudioFields, audio_section, source=source, prefix="audio_config.")
        sizes = towers_audio.audio_sizes(audio_section, tower.audio_defaults, source)
        encoder = towers_audio.qwen3_omni_audio(sizes, extra)
        return qwen3.model_copy(update={"params": qwen3.params + encoder.whole + encoder.blocks,
                                        "head_split_params": encoder.blocks, "head_split_mlp_params": encoder.mlp,
                                        "heads": extra.encoder_attention_heads, "block_mlp_width": sizes.encoder_ffn_dim,
                                        "block_class": towers_audio.QWEN3_OMNI_AUDIO})  # fmt: skip
    if tower.kind == "granite_speech":  # `encoder_config`, `projector_config` and the outer window fields
        return towers_audio.granite_speech(
            validated(towers_audio.GraniteSpeechEncoderFields, section, source=source, prefix="encoder_config."),
            validated(towers_audio.GraniteSpeechProjectorFields, outer.get("projector_config") or {}, source=source,
                      prefix="projector_config."),
            validated(towers_audio.GraniteSpeechOuterFields, outer, source=source), text_hidden, tower.config_class,
            tower.source,
        )  # fmt: skip
    if tower.kind == "qwen3_asr":  # the Qwen3-Omni audio encoder alone
        asr = validated(towers_audio.Qwen3OmniAudioFields, section, source=source, prefix="audio_config.")
        sizes = towers_audio.audio_sizes(section, tower.defaults, source)
        encoder = towers_audio.qwen3_omni_audio(sizes, asr)
        return TowerSpec(params=encoder.whole + encoder.blocks, tp_split_params=0, config_class=tower.config_class,
                         source=tower.source, head_split_params=encoder.blocks, head_split_mlp_params=encoder.mlp,
                         heads=asr.encoder_attention_heads, block_mlp_width=sizes.encoder_ffn_dim,
                         block_class=towers_audio.QWEN3_OMNI_AUDIO)  # fmt: skip
    if tower.kind == "glm_asr":
        glm = validated(towers_audio.GlmAsrEncoderFields, section, source=source, prefix="audio_config.")
        return towers_audio.glm_asr(glm, text_hidden, tower.config_class, tower.source)
    sizes = towers_audio.audio_sizes(section, tower.defaults, source)
    if tower.kind == "audioflamingo3":
        bias = validated(towers_audio.AudioFlamingo3OuterFields, outer, source=source)
        return towers_audio.audioflamingo3(sizes, bias, text_hidden, tower.config_class, tower.source)
    return towers_audio.qwen2_audio(sizes, text_hidden, tower.config_class, tower.source)
