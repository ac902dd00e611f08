"""What kvtop does with a multimodal engine class's vision tower: planned (its bytes in the weights book), not
modelled beside a planned language model (the plan says "vision tower weights … not modelled"), or the whole
class not modelled (`coverage.verdict`'s reason). docs/multimodal.md lists every multimodal class of vLLM's and
SGLang's registries with this verdict (written by benchmarks/architectures/multimodal_classes.py).

A class's tower is its entry's (`Architecture.tower`), or, for a wrapper whose language model is a shared entry,
the tower its config's outer `model_type` picks (`towers.BY_OUTER_TYPE`): `OUTER_TYPE_BY_CLASS` says which
model_type each such class's checkpoints carry (the engines' config classes: vLLM 0.33.0 and transformers 5.24.0).
A class whose config names its tower by checkpoint id or folder (`mm_vision_tower`: LLaVA-NeXT's format, Yi-VL) has
the verdict `towers_named.class_verdict` gives from the data the plan's named_tower reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from kvtop.domain.architectures.coverage import verdict
from kvtop.domain.architectures.registry import ARCHITECTURES, BY_CLASS_NAME
from kvtop.domain.architectures.towers_catalog import BY_OUTER_TYPE, TOWERS_BY_CLASS
from kvtop.domain.architectures.towers_fields import Tower
from kvtop.domain.architectures.towers_named import class_verdict

TowerVerdict = Literal["tower", "no_tower", "not_modelled"]

OUTER_TYPE_BY_CLASS: Mapping[str, str] = {
    "Mistral3ForConditionalGeneration": "mistral3", "LlavaForConditionalGeneration": "llava",
    "LlavaNextForConditionalGeneration": "llava_next", "LlavaNextVideoForConditionalGeneration": "llava_next_video", "LlavaOnevisionForConditionalGeneration": "llava_onevision",
    "Llama4ForConditionalGeneration": "llama4", "Gemma4ForConditionalGeneration": "gemma4",
    "InternVLChatModel": "internvl_chat", "InternVLForConditionalGeneration": "internvl",
    "KimiK25ForConditionalGeneration": "kimi_k25", "KimiK3ForConditionalGeneration": "kimi_k3", "KimiVLForConditionalGeneration": "kimi_vl",
    "MiniMaxM3SparseForConditionalGeneration": "minimax_m3_vl",
    "MiniCPMV4_6ForConditionalGeneration": "minicpmv4_6", "MiniCPMV4_7ForConditionalGeneration": "minicpmv4_7",
    "PaliGemmaForConditionalGeneration": "paligemma", "Idefics3ForConditionalGeneration": "idefics3",
    "SmolVLMForConditionalGeneration": "smolvlm", "Blip2ForConditionalGeneration": "blip-2",
    "Granite4VisionForConditionalGeneration": "granite4_vision", "Lfm2VlForConditionalGeneration": "lfm2_vl",
    "Cosmos3EdgeForConditionalGeneration": "cosmos3_edge", "Exaone4_5_ForConditionalGeneration": "exaone4_5", "Ovis": "ovis", "AriaForConditionalGeneration": "aria", "Cohere2VisionForConditionalGeneration": "cohere2_vision",
    "NVLM_D": "NVLM_D", "Ovis2_5": "ovis2_5", "Ovis2_6ForCausalLM": "ovis2_5", "Ovis2_6_MoeForCausalLM": "ovis2_5",
    "HCXVisionV2ForCausalLM": "hyperclovax_vision_v2", "LlavaOnevision2ForConditionalGeneration": "llava_onevision2",
    "NemotronH_Nano_VL_V2": "NemotronH_Nano_VL_V2",
    "Llama_Nemotron_Nano_VL": "Llama_Nemotron_Nano_VL",  # mlp1 counted, its vision model named (towers_nemotron_vl)
    "DeepseekOCRForCausalLM": "deepseek_vl_v2",
    "DeepseekVL2ForCausalLM": "deepseek_vl_v2", "DeepseekVLV2ForCausalLM": "deepseek_vl_v2",  # towers_deepseek_vl2
    "MultiModalityCausalLM": "multi_modality",
    "Gemma3nForConditionalGeneration": "gemma3n",
    "MossTranscribeDiarizeForConditionalGeneration": "moss_transcribe_diarize", "MossAudioModel": "moss_audio",
    "MllamaForConditionalGeneration": "mllama",
    "Qwen2AudioForConditionalGeneration": "qwen2_audio", "AudioFlamingo3ForConditionalGeneration": "audioflamingo3",
    "Qwen2_5OmniModel": "qwen2_5_omni_thinker", "Qwen2_5OmniForConditionalGeneration": "qwen2_5_omni_thinker",
    "Qwen3OmniMoeForConditionalGeneration": "qwen3_omni_moe_thinker", "Qwen3ASRForConditionalGeneration": "qwen3_asr_thinker",
    "GraniteSpeechForConditionalGeneration": "granite_speech", "GraniteSpeechPlusForConditionalGeneration": "granite_speech_plus",
    "IsaacForConditionalGeneration": "isaac", "Phi4ForCausalLMV": "phi4-siglip",
    "GlmAsrForConditionalGeneration": "glmasr", "MiDashengLMModel": "midashenglm",
    "VoxtralForConditionalGeneration": "voxtral", "UltravoxModel": "ultravox",
    "MoonshotKimiaForCausalLM": "moonshot_kimia", "FunAudioChatForConditionalGeneration": "funaudiochat",
    "PixtralForConditionalGeneration": "pixtral",  # built from a Mistral-format params.json (mistral_params)
    "BailingMoeV3VLForConditionalGeneration": "bailing_moe_v3_vl",  # Ling-3-VL's ViT and linear_proj (towers_bailing)
    "NVILAForConditionalGeneration": "nvila", "NVILALiteForConditionalGeneration": "nvila_lite",  # towers_nvila
    "Sarashina2VisionForCausalLM": "sarashina2_vision",
    "DotsVLMForCausalLM": "dots_vlm",  # dots.vlm1's vision transformer and patch merger (towers_dots_vlm)
    "OpenCUAForConditionalGeneration": "opencua",  # Qwen2.5-VL's ViT (vLLM 0.33.0 opencua.py)
    "YiVLForCausalLM": "llava",  # its config's model_type; its verdict is towers_named.class_verdict's (the vit/ folder)
    "RForConditionalGeneration": "rvl",  # llava-onevision's SigLIP and its pre-norm projector (towers_bee)
    # the model_type their checkpoints' configs carry, whose tower the plan books (config_reader: the outer type's
    # tower first); each judged equal to the engines' meta builds in docs/fidelity_registry.md
    "SkyworkR1VChatModel": "skywork_chat", "H2OVLChatModel": "h2ovl_chat",  # InternViT and mlp1 (towers_catalog)
    "InternS1ForConditionalGeneration": "internvl", "KananaVForConditionalGeneration": "kanana-1.5-v",
    "BeeForConditionalGeneration": "llava_onevision",  # its pre-norm projector (towers.pre_norm_projector)
    "MiMoV2OmniForCausalLM": "mimo_v2",  # MiMo-V2.5's ViT and audio encoder (towers_catalog, towers_mimo)
    "HfMoondream": "moondream3",  # vLLM 0.33.0 serves it with Moondream3's class (towers_absent.SERVED_WITH_TOWER)
}  # fmt: skip

# Where kvtop knows why a tower it sees is not read (else: no tower kind describes it yet)
_VL2 = ("DeepSeek-VL2's own: timm's SigLIP so400m/14-384 and its MlpProjector, sized from the engines' constant and "
        "projector_config (towers_deepseek_vl2: SGLang 0.5.23 / vLLM 0.33.0 deepseek_vl2.py)")
NO_TOWER_BECAUSE: Mapping[str, str] = {
    "DeepseekVL2ForCausalLM": _VL2, "DeepseekVLV2ForCausalLM": _VL2,
    "BailingMoeV3VLForConditionalGeneration": "planned where vision_config states disable_merger_proj true and no "
    "deepstack_visual_indexes; otherwise SGLang builds merger MLPs vLLM does not, and the note stays",
    "LlavaForConditionalGeneration": "planned over CLIP, SigLIP or Pixtral; another vision model keeps the note",
    # vLLM 0.33.0 nemotron_vl.py: _init_vision_model (lines 167-177) is AutoModel.from_config(vision_config,
    # trust_remote_code), the checkpoint's own C-RADIO code no engine ships; _init_mlp1 (179-202) is counted
    "Llama_Nemotron_Nano_VL": "the projector (mlp1) only: its vision model, the checkpoint's own C-RADIO code "
    "(AutoModel.from_config with trust_remote_code), is named not modelled in the plan (towers_nemotron_vl)",
}

NO_TOWER = "no tower kind in kvtop's book yet: the plan says 'vision tower weights … not modelled'"


def tower_of(class_name: str) -> Tower | None:
    """The tower kvtop reads for a config naming this class (None: none)."""
    if class_name in TOWERS_BY_CLASS:
        return TOWERS_BY_CLASS[class_name]
    entry = BY_CLASS_NAME.get(class_name)
    if entry is not None and entry.tower is not None:
        return entry.tower
    outer = OUTER_TYPE_BY_CLASS.get(class_name)
    if outer is None:
        return None
    by_entry = ARCHITECTURES[outer].tower if outer in ARCHITECTURES else None  # the entry its model_type reads
    return BY_OUTER_TYPE.get(outer) or by_entry


def tower_verdict(class_name: str) -> tuple[TowerVerdict, str]:
    """(what kvtop does with this multimodal class's tower, why): the class's own refusal reason where the class
    is not modelled; the tower's config class and source where it is planned."""
    kind, why = verdict(class_name)
    if kind == "not_modelled":
        return "not_modelled", why
    if (named := class_verdict(class_name)) is not None:  # LLaVA-NeXT's format, Yi-VL: the tower named, not stated
        return "tower", named
    tower = tower_of(class_name)
    if tower is None:
        return "no_tower", NO_TOWER_BECAUSE.get(class_name, NO_TOWER)
    note = NO_TOWER_BECAUSE.get(class_name)
    return "tower", f"{tower.config_class} ({tower.source})" + (f"; {note}" if note else "")
