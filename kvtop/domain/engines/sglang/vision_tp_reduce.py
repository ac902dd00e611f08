"""SGLang's refusal of a multimodal encoder whose attention splits over a narrower attention-TP group than TP.

From 0.5.22 `VisionAttention.__init__` (srt/layers/attention/vision.py 0.5.22:1215, 0.5.23:1220) calls
`reject_attn_tp_shard_with_tp_reduce` (srt/layers/dp_attention.py 0.5.22:492, 0.5.23:536): its qkv / proj split over
attention TP (`self.tp_size = get_parallel().attn_tp_size`) while proj all-reduces over the whole TP group unless the
tower passes `use_dp_attention_reduce`, so where 1 < attention TP < TP (attention DP) it raises ValueError naming the
flags. It does not fire where the encoder does not run on this instance (`multimodal_encoder_runs_here`: a PD decode
instance, `--language-model-only`, `--language-only` without `--enable-adaptive-dispatch-to-encoder`: flags kvtop
does not model, so from an engine's line they lift the refusal and the plan says what they were read for), nor on a
tower built data-parallel (`--mm-enable-dp-encoder`, the classes that hand it to their VisionAttention:
`use_data_parallel`, attention TP 1). 0.5.21 and before have no
check (the same VisionAttention then builds and runs, its all-reduce mixing the DP groups' ranks).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvtop.domain.engines.sglang.architectures import TOWER_SPLIT
from kvtop.domain.engines.versions import Era, Eras, ResolvedVersion
from kvtop.domain.launch import LaunchSettings
from kvtop.domain.model import ModelSpec
from kvtop.domain.refusals import Refusal
from kvtop.domain.served_model import tower_unbuilt
from kvtop.domain.span import flag_set, flag_text

if TYPE_CHECKING:
    from kvtop.domain.layout import ParallelLayout
    from kvtop.domain.ledger import Ledger

# The classes whose encoder builds a VisionAttention without `use_dp_attention_reduce` (0.5.22 and 0.5.23 read alike:
# the same calls in both), by the file and line of that call at 0.5.23 srt/models/; True where the class hands
# `--mm-enable-dp-encoder` to it (`use_data_parallel = get_mm().mm_enable_dp_encoder`), so the flag lifts the refusal.
# Not listed, their VisionAttention reducing over attention TP under DP attention (`use_dp_attention_reduce=
# is_dp_attention_enabled()` or glm4v_vision_reduces_over_attn_tp): qwen3_vl.py (Qwen3-VL, Qwen3.5), glm4v.py,
# glm5_next.py, glm_image_vl.py, glm_ocr.py, kimi_k25.py, minimax_vl_common.py; mimo_audio.py passes
# allow_tp_reduce_mismatch. Classes whose tower was not traced to its VisionAttention are not listed.
_REFUSED = {
    "Qwen2VLForConditionalGeneration": ("qwen2_vl.py:146", False),
    "Sarashina2VisionForCausalLM": ("sarashina2_vision.py: qwen2_vl.py Qwen2VisionTransformer (:146)", False),
    "Qwen2_5_VLForConditionalGeneration": ("qwen2_5_vl.py:245", True),
    "MiMoV2ForCausalLM": ("mimo_v2.py MiMoVisionTransformer: mimo_vl.py:167", True),
    "InternVLChatModel": ("internvl.py:72", True),
    "InternS1ForConditionalGeneration": ("interns1.py InternVisionModel: internvl.py:72", False),
    "KimiVLForConditionalGeneration": ("kimi_vl.py MoonVitPretrainedModel: kimi_vl_moonvit.py:437", True),
    "Gemma3ForConditionalGeneration": ("gemma3_mm.py SiglipVisionModel: siglip.py:114", False),
    "Gemma4ForConditionalGeneration": ("gemma4_mm.py Gemma4VisionEncoder: gemma4_vision.py:325", False),
    "Gemma4UnifiedForConditionalGeneration": ("gemma4_unified.py Gemma4VisionEncoder: gemma4_vision.py:325", False),
    "Llama4ForConditionalGeneration": ("mllama4.py:177", False),
    "MllamaForConditionalGeneration": ("mllama.py:212", False),
    "PixtralForConditionalGeneration": ("pixtral.py:549", False),
    "LightOnOCRForConditionalGeneration": ("lightonocr.py PixtralHFVisionModel: pixtral.py:549", False),
    "Step3VLForConditionalGeneration": ("step3_vl.py:580", False),
    "StepVLForConditionalGeneration": ("step3_vl_10b.py:215", False),
    "Ernie4_5_VLMoeForConditionalGeneration": ("ernie45_vl.py:106", False),
    "PaddleOCRVLForConditionalGeneration": ("paddleocr_vl.py:371", False),
    "DotsOCRForCausalLM": ("dots_ocr.py DotsVisionTransformer: dots_vlm_vit.py:164", False),
    "MiniCPMV": ("minicpmv.py Idefics2VisionTransformer: idefics2.py:81", False),
    "MiniCPMO": ("minicpmo.py Idefics2VisionTransformer: idefics2.py:81", False),
    "Phi4MMForCausalLM": ("phi4mm.py Idefics2VisionTransformer: idefics2.py:81", False),
    "MultiModalityCausalLM": ("deepseek_janus_pro.py:531", False),
    "MiDashengLMModel": ("midashenglm.py:163 (the audio encoder)", False),
    "Qwen3OmniMoeForConditionalGeneration": ("qwen3_omni_moe.py:90 (the audio encoder)", False),
    "Qwen3ASRForConditionalGeneration": ("qwen3_asr.py Qwen3OmniMoeAudioEncoder: qwen3_omni_moe.py:90", False),
    "MossVLForConditionalGeneration": ("moss_vl.py:150", False),
    "Lfm2VlForConditionalGeneration": ("lfm2_vl.py Siglip2Model: siglip2.py:196", False),
    "Cosmos3EdgeForConditionalGeneration": ("cosmos3_edge.py Siglip2Model: siglip2.py:196", False),
}  # fmt: skip
REFUSED_ERAS: Eras[dict[str, tuple[str, bool]]] = Eras((
    Era("", {}, "0.5.21 srt/layers/attention/vision.py VisionAttention: no reject_attn_tp_shard_with_tp_reduce "
        "(read in the 0.5.17 … 0.5.21 wheels)"),
    Era("0.5.22", _REFUSED, "0.5.22 srt/layers/dp_attention.py:492 reject_attn_tp_shard_with_tp_reduce, "
        "srt/layers/attention/vision.py:1215; 0.5.23 dp_attention.py:536, vision.py:1220"),
))  # fmt: skip
assert TOWER_SPLIT.data_parallel_flag is not None  # --mm-enable-dp-encoder, spelled once (architectures.py)
_DP_KEY, _DP_ON = TOWER_SPLIT.data_parallel_flag
DP_ENCODER = f"--{_DP_KEY}"


# `multimodal_encoder_runs_here` (0.5.22 srt/layers/dp_attention.py:468-489, 0.5.23 :512-533): False on a PD decode
# instance, under --language-model-only, and under --language-only unless --enable-adaptive-dispatch-to-encoder (from
# 0.5.10rc0), which keeps the requests it does not send to the encoder and forwards the tower for them. The three are
# store_true fields (srt/arg_groups/fields/disagg.py, 0.5.23 :136, :140, :165): kvtop does not model them
# (flags_unmodelled*.py), so typed to kvtop they are refused first; from an engine's own line (`--cmd`, a log) they are
# kept in `flags`, named as ignored for memory, and read here for whether this check fires, which the plan says
_LANGUAGE_ONLY, _LM_ONLY, _ADAPTIVE = "language-only", "language-model-only", "enable-adaptive-dispatch-to-encoder"


def _offloaded_by(settings: LaunchSettings) -> str | None:
    """The engine-line flag under which SGLang runs no encoder on this instance; None where it runs one here."""
    if flag_set(settings, _LM_ONLY):
        return f"--{_LM_ONLY}"
    if flag_set(settings, _LANGUAGE_ONLY) and not flag_set(settings, _ADAPTIVE):
        return f"--{_LANGUAGE_ONLY}"
    return None


def _checked(
    model: ModelSpec, settings: LaunchSettings, layout: ParallelLayout, version: ResolvedVersion
) -> tuple[str, bool] | None:
    """(where the class builds its VisionAttention, whether the DP-encoder flag lifts it) where SGLang's check fires
    for a tower built here under 1 < attention TP < TP, before whether the encoder runs on this instance; else None."""
    entry = REFUSED_ERAS.at(version).get(model.architecture)
    if entry is None or model.tower is None or not 1 < layout.attn_tp < layout.tp:
        return None
    if tower_unbuilt(model, settings, version):
        return None
    if entry[1] and settings.flags.get(_DP_KEY) == _DP_ON:
        return None
    return entry


def _decode(settings: LaunchSettings) -> bool:
    return flag_text(settings, "disaggregation-mode") == "decode"


def vision_tp_reduce_note(
    model: ModelSpec, settings: LaunchSettings, layout: ParallelLayout, version: ResolvedVersion
) -> str | None:
    """What an ignored engine-line flag was read for, where it alone lifts SGLang's refusal; else None."""
    flag = _offloaded_by(settings)
    if flag is None or _decode(settings) or _checked(model, settings, layout, version) is None:
        return None
    return (
        f"{flag} (from the engine's line; its effect on memory not modelled) is read for one thing: SGLang "
        f"{version.label} runs no encoder on this instance (multimodal_encoder_runs_here), so its refusal of "
        f"{model.architecture}'s encoder under attention DP (attention TP {layout.attn_tp} of TP {layout.tp}) does not fire"
    )


def vision_tp_reduce_refusal(ledger: Ledger) -> Refusal | None:
    """SGLang's ValueError for an encoder split over attention TP where 1 < attention TP < TP."""
    model, layout, settings = ledger.model, ledger.layout, ledger.settings
    entry = _checked(model, settings, layout, ledger.version)
    if entry is None or _decode(settings) or _offloaded_by(settings):
        return None
    where, flag_lifts = entry
    dp = f"--attn-dp-size {layout.attn_dp}"
    lift = "takes" if flag_lifts else "does not hand its encoder"
    # past `_offloaded_by`, --language-only comes with adaptive dispatch: the operator who typed it is told why it kept
    kept = (f"; --{_LANGUAGE_ONLY} does not lift it: --{_ADAPTIVE} keeps the encoder's forward on this instance "
            "(multimodal_encoder_runs_here)") if flag_set(settings, _LANGUAGE_ONLY) else ""  # fmt: skip
    return Refusal(
        field="--enable-dp-attention",
        message=f"SGLang {ledger.version.label} refuses {model.architecture}'s encoder under attention DP: "
        f"'VisionAttention shards over the attention TP group ({layout.attn_tp} ranks) but all-reduces over the "
        f"full TP group ({layout.tp} ranks), so it does not support {dp} yet. Use --attn-dp-size equal to "
        f"--tp-size, or drop {dp}, or --mm-enable-dp-encoder where the model supports it' ({model.architecture} {lift} "
        f"{DP_ENCODER}{kept})",
        source=f"{REFUSED_ERAS.era(ledger.version).source}; srt/models/{where}",
    )
