"""SGLang's refusal of a multimodal encoder whose attention splits over a narrower attention-TP group than TP.

From 0.5.22 `VisionAttention.__init__` (srt/layers/attention/vision.py 0.5.22:1215, 0.5.23:1220) calls
`reject_attn_tp_shard_with_tp_reduce` (srt/layers/dp_attention.py 0.5.22:492, 0.5.23:536): its qkv / proj split over
attention TP (`self.tp_size = get_parallel().attn_tp_size`) while proj all-reduces over the whole TP group unless the
tower passes `use_dp_attention_reduce`, so where 1 < attention TP < TP (attention DP) it raises ValueError naming the
flags. It does not fire where the encoder does not run on this instance (`multimodal_encoder_runs_here`: a PD decode
instance, `--language-only`, `--language-model-only`), nor on a tower built data-parallel (`--mm-enable-dp-encoder`,
the classes that hand it to their VisionAttention: `use_data_parallel`, attention TP 1). 0.5.21 and before have no
check (the same VisionAttention then builds and runs, its all-reduce mixing the DP groups' ranks).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvtop.domain.engines.sglang.architectures import TOWER_SPLIT
from kvtop.domain.engines.versions import Era, Eras
from kvtop.domain.refusals import Refusal
from kvtop.domain.served_model import tower_unbuilt
from kvtop.domain.span import flag_text

if TYPE_CHECKING:
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


def _encoder_runs_here(ledger: Ledger) -> bool:
    """`multimodal_encoder_runs_here`: not a PD decode instance, nor a language-only one."""
    # --language-only / --language-model-only typed to kvtop are refused first (flags_unmodelled_late.py); they reach
    # here from an engine's own line (`--cmd`, a log), kept in `flags` and named as ignored, and lift this refusal
    flags = ledger.settings.flags
    decode = flag_text(ledger.settings, "disaggregation-mode") == "decode"
    return not (decode or flags.get("language-only") is True or flags.get("language-model-only") is True)


def vision_tp_reduce_refusal(ledger: Ledger) -> Refusal | None:
    """SGLang's ValueError for an encoder split over attention TP where 1 < attention TP < TP."""
    model, layout = ledger.model, ledger.layout
    entry = REFUSED_ERAS.at(ledger.version).get(model.architecture)
    if entry is None or model.tower is None or not 1 < layout.attn_tp < layout.tp:
        return None
    where, flag_lifts = entry
    if tower_unbuilt(model, ledger.settings, ledger.version) or not _encoder_runs_here(ledger):
        return None
    if flag_lifts and ledger.settings.flags.get(_DP_KEY) == _DP_ON:
        return None
    dp = f"--attn-dp-size {layout.attn_dp}"
    lift = "takes" if flag_lifts else "does not hand its encoder"
    return Refusal(
        field="--enable-dp-attention",
        message=f"SGLang {ledger.version.label} refuses {model.architecture}'s encoder under attention DP: "
        f"'VisionAttention shards over the attention TP group ({layout.attn_tp} ranks) but all-reduces over the "
        f"full TP group ({layout.tp} ranks), so it does not support {dp} yet. Use --attn-dp-size equal to "
        f"--tp-size, or drop {dp}, or --mm-enable-dp-encoder where the model supports it' ({model.architecture} {lift} "
        f"{DP_ENCODER})",
        source=f"{REFUSED_ERAS.era(ledger.version).source}; srt/models/{where}",
    )
