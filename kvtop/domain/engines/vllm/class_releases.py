"""The vLLM releases whose registry has each model class, read in every wheel 0.6.0 … 0.34.0: the verdict between reads.

vLLM loads a model by config.json's `architectures` class from its registry (vllm/model_executor/models/registry.py
`_VLLM_MODELS`, models/__init__.py `_MODELS` before 0.6.2). A class it does not register stops the launch before 0.7.2
with "Model architectures ['X'] are not supported for now." (`ModelRegistry._raise_for_unsupported`, read at 0.6.0 and
0.7.1); from 0.7.2 (`_FALLBACK_MODEL` "TransformersModel", `_normalize_archs`) it hands the class to its Transformers
backend, which serves it only where the installed transformers has the class and it is backend-compatible (vLLM's
wheel pins no transformers release: not checked), and raises those words (or, for a class in
`_PREVIOUSLY_SUPPORTED_MODELS`, "was supported in vLLM until v…") only after that fails (0.33.0 registry.py:1221-1240).
Before 0.7.2 a config's `auto_map` does not help: vLLM takes the class from its registry alone (no "auto_map" in the
0.6.0 or 0.7.1 wheel), so a class no wheel registers is refused there too.

Read from each x86_64 wheel of release_calendar.py's releases 0.6.0 … 0.34.0 (67 wheels, the registry's keys parsed
with `ast`) by benchmarks/engine_registries/vllm_first_releases.py; tests/data/architectures/vllm_first_releases.json
holds what it read (with each class's module). Each class: the spans of releases whose registry has it, a span written
`FIRST-LAST` (both read), or `FIRST` alone where it holds through 0.34.0. A release outside 0.6.0 … 0.34.0, or one not
on the calendar, is not decided here.
"""

from __future__ import annotations

from typing import NamedTuple

from kvtop.domain.engine_architectures import ArchitectureCheck
from kvtop.domain.engines.versions import Release, ResolvedVersion, parse_release
from kvtop.domain.engines.vllm.release_calendar import CALENDAR

READ_FIRST, READ_LAST = "0.6.0", "0.34.0"
FALLBACK_FIRST = "0.7.2"  # registry.py `_FALLBACK_MODEL` TransformersModel: the Transformers backend takes the rest
SOURCE = f"vllm/model_executor/models/registry.py, every vLLM wheel {READ_FIRST} … {READ_LAST} read"


class ClassSpans(NamedTuple):
    """A model class and the spans (first, last read) of releases whose registry has it."""

    architecture: str
    spans: tuple[tuple[str, str], ...]

    @property
    def first(self) -> str:
        return self.spans[0][0]


# class, then its spans (see the module's docstring)
_SPANS = """
AXK1ForCausalLM 0.17.0 AfmoeForCausalLM 0.11.1 AliceAIForCausalLM 0.33.0 Alpamayo2Super 0.33.0
ApertusForCausalLM 0.10.2 AquilaForCausalLM 0.6.0-0.24.0 AquilaModel 0.6.0-0.24.0 ArceeForCausalLM 0.10.0
ArcticForCausalLM 0.6.0-0.28.0 AriaForConditionalGeneration 0.6.5 AudioFlamingo3ForConditionalGeneration 0.13.0
AyaVisionForConditionalGeneration 0.8.3-0.24.0 BagelForConditionalGeneration 0.13.0 BaiChuanForCausalLM 0.6.0-0.24.0
BaichuanForCausalLM 0.6.0-0.24.0 BailingMoeForCausalLM 0.10.0 BailingMoeV25MTPModel 0.25.0
BailingMoeV2ForCausalLM 0.11.0 BailingMoeV2_5ForCausalLM 0.17.0 BailingMoeV3ForCausalLM 0.28.0
BailingMoeV3MTPModel 0.28.0 BailingMoeV3VLForConditionalGeneration 0.30.0 BambaForCausalLM 0.7.3-0.23.0
BartForConditionalGeneration 0.6.0-0.10.2 BartModel 0.6.0-0.10.2 BeamForCausalLM 0.33.0
BeeForConditionalGeneration 0.11.1 BertForMaskedLM 0.26.0 BertForSequenceClassification 0.6.5
BertForTokenClassification 0.11.0 BertModel 0.6.4 BertSpladeSparseEmbeddingModel 0.11.1 BgeM3EmbeddingModel 0.15.0
Blip2ForConditionalGeneration 0.6.0 BloomForCausalLM 0.6.0 CLIPModel 0.11.1 CanaryForConditionalGeneration 0.34.0
ChameleonForConditionalGeneration 0.6.0-0.28.0 ChatGLMForConditionalGeneration 0.6.0-0.7.2 0.8.4 ChatGLMModel 0.6.0
Cheers 0.20.0-0.28.0 CheersForConditionalGeneration 0.20.0-0.28.0 ClefFlashForJointSchema 0.33.0
ClefOmniForJointSchema 0.32.0 Cohere2ForCausalLM 0.6.5 Cohere2MoeForCausalLM 0.21.0
Cohere2VisionForConditionalGeneration 0.10.1 CohereAsrForConditionalGeneration 0.19.0
CohereCompassForConditionalGeneration 0.30.0 CohereForCausalLM 0.6.0 ColBERTJinaRobertaModel 0.17.0
ColBERTLfm2Model 0.19.0 ColBERTModernBertModel 0.17.0 ColModernVBertForRetrieval 0.17.0 ColPaliForRetrieval 0.18.0
ColQwen3 0.17.0 ColQwen3_5 0.19.0 ColUltraVBertForRetrieval 0.33.0 Cosmos3EdgeForConditionalGeneration 0.26.0
Cosmos3ForConditionalGeneration 0.23.0 CwmForCausalLM 0.11.0 D3ForSequenceClassification 0.33.0
DFlash2BeamDraftModel 0.33.0 DFlash2DraftModel 0.28.0 DFlash2RicursiveDraftModel 0.34.0 DFlashDraftModel 0.20.0
DFlashLagunaForCausalLM 0.25.0 DFlashMuseGlimmerAssistantModel 0.28.0 DFlashQwen3XPressModel 0.33.0
DSparkDraftModel 0.25.0 DSparkMiniMaxDraftModel 0.34.0 DSparkV41DraftModel 0.30.0 DbrxForCausalLM 0.6.0
DeciLMForCausalLM 0.6.0 DeepSeekMTPModel 0.7.3 DeepSeekV4MTPModel 0.20.0 DeepseekForCausalLM 0.6.0
DeepseekOCR2ForCausalLM 0.16.0 DeepseekOCRForCausalLM 0.11.1 DeepseekV2ForCausalLM 0.6.0 DeepseekV32ForCausalLM 0.11.0
DeepseekV32MTPModel 0.29.0 DeepseekV3BidirectionalModel 0.29.0 DeepseekV3ForCausalLM 0.6.6
DeepseekV41ForCausalLM 0.30.0 DeepseekV4ForCausalLM 0.20.0 DeepseekV4ForConditionalGeneration 0.30.0
DeepseekVLV2ForCausalLM 0.7.0 DiffusionGemmaForBlockDiffusion 0.24.0 DomynEdgeForCausalLM 0.33.0
DonutForConditionalGeneration 0.10.2-0.10.2 DoryForCausalLM 0.33.0 Dots1ForCausalLM 0.9.2-0.23.0
Dots3NoteForCausalLM 0.28.0 Dots3NoteMTPModel 0.28.0 DotsOCRForCausalLM 0.11.0 EAGLEModel 0.6.0-0.9.2
Eagle2_5_VLForConditionalGeneration 0.15.0 Eagle3DeepseekV2ForCausalLM 0.18.0 Eagle3DeepseekV3ForCausalLM 0.18.0
Eagle3LlamaForCausalLM 0.8.5 Eagle3MiniMaxM2ForCausalLM 0.20.0 Eagle3Qwen2_5vlForCausalLM 0.11.1
Eagle3Qwen3ForCausalLM 0.24.0 Eagle3Qwen3vlForCausalLM 0.12.0 EagleCohereForCausalLM 0.21.0
EagleDeepSeekMTPModel 0.10.2 EagleLlama4ForCausalLM 0.10.0 EagleLlamaForCausalLM 0.8.4 EagleMiniCPMForCausalLM 0.9.1
EagleMistralForCausalLM 0.21.0 EagleMistralLarge3ForCausalLM 0.12.0 EmbeddingGemma2Model 0.32.0
Emu3ForConditionalGeneration 0.10.1 Ernie4_5ForCausalLM 0.10.1 Ernie4_5_ForCausalLM 0.9.2-0.10.0
Ernie4_5_MoeForCausalLM 0.9.2 Ernie4_5_VLMoeForConditionalGeneration 0.10.2
ErnieForSequenceClassification 0.18.0-0.23.0 ErnieForTokenClassification 0.18.0-0.23.0 ErnieMTPModel 0.10.2
ErnieModel 0.18.0-0.23.0 Exaone4ForCausalLM 0.10.0 Exaone4_5_ForConditionalGeneration 0.20.0 Exaone4_5_MTP 0.20.0
ExaoneForCausalLM 0.6.0 ExaoneMoEForCausalLM 0.14.0-0.26.0 0.32.0 ExaoneMoeForCausalLM 0.27.0 ExaoneMoeMTP 0.14.0
ExtractHiddenStatesModel 0.17.0 Fairseq2LlamaForCausalLM 0.7.0-0.28.0 FalconForCausalLM 0.6.0
FalconH1ForCausalLM 0.9.0 FalconMambaForCausalLM 0.6.4 FireRedASR2ForConditionalGeneration 0.17.0
FireRedLIDForConditionalGeneration 0.20.0-0.28.0 FlexOlmoForCausalLM 0.11.1 FlintForCausalLM 0.33.0
Florence2ForConditionalGeneration 0.6.4-0.10.2 FunASRForConditionalGeneration 0.17.0
FunAudioChatForConditionalGeneration 0.16.0 FuyuForCausalLM 0.6.0-0.25.1 GLM4VForCausalLM 0.7.3
GPT2ForSequenceClassification 0.9.2 GPT2LMHeadModel 0.6.0 GPTBigCodeForCausalLM 0.6.0 GPTJForCausalLM 0.6.0
GPTNeoXForCausalLM 0.6.0 Gemma2ForCausalLM 0.6.0 Gemma2Model 0.6.3 Gemma3ForCausalLM 0.8.0
Gemma3ForConditionalGeneration 0.8.0 Gemma3TextModel 0.10.2 Gemma3nForCausalLM 0.10.1
Gemma3nForConditionalGeneration 0.9.2 Gemma4DSparkModel 0.26.0 Gemma4ForCausalLM 0.19.0
Gemma4ForConditionalGeneration 0.19.0 Gemma4MTPModel 0.21.0 Gemma4UnifiedForConditionalGeneration 0.23.0
GemmaForCausalLM 0.6.0 Glm4ForCausalLM 0.8.4 Glm4MoeForCausalLM 0.10.0 Glm4MoeLiteForCausalLM 0.15.0
Glm4MoeLiteMTPModel 0.15.0 Glm4MoeMTPModel 0.10.0 Glm4vForConditionalGeneration 0.9.2
Glm4vMoeForConditionalGeneration 0.10.1 Glm5NextForCausalLM 0.30.0 Glm5NextForConditionalGeneration 0.30.0
Glm5NextMTPModel 0.30.0 GlmAsrForConditionalGeneration 0.14.0 GlmForCausalLM 0.6.5 GlmMoeDsaForCausalLM 0.16.0
GlmOcrForConditionalGeneration 0.16.0 GlmOcrMTPModel 0.16.0 GptOssForCausalLM 0.10.1
Granite4VisionForConditionalGeneration 0.20.0 GraniteForCausalLM 0.6.0 GraniteMoeForCausalLM 0.6.3
GraniteMoeHybridForCausalLM 0.9.0 GraniteMoeSWAForCausalLM 0.29.0 GraniteMoeSharedForCausalLM 0.8.0
GraniteSWAForCausalLM 0.29.0 GraniteSpeechForConditionalGeneration 0.8.5
GraniteSpeechPlusForConditionalGeneration 0.23.0 GritLM 0.6.5-0.28.0 Grok1ForCausalLM 0.14.0-0.24.0
Grok1ModelForCausalLM 0.8.0-0.24.0 GteModel 0.8.5 GteNewForSequenceClassification 0.10.2 GteNewModel 0.9.0
H2OVLChatModel 0.6.4 HCXVisionForCausalLM 0.10.1-0.28.0 HCXVisionV2ForCausalLM 0.18.0 HF_ColBERT 0.16.0
HYV3ForCausalLM 0.20.0 HYV3MTPModel 0.20.0 HYV4ForCausalLM 0.29.0 HYV4MTPModel 0.29.0 HfMoondream 0.21.0
HrmTextForCausalLM 0.24.0 HunYuanDenseV1ForCausalLM 0.10.0 HunYuanMoEV1ForCausalLM 0.9.2
HunYuanVLForConditionalGeneration 0.12.0 HyperCLOVAXForCausalLM 0.18.0 IQuestCoderForCausalLM 0.14.0
IQuestLoopCoderForCausalLM 0.14.0 Idefics3ForConditionalGeneration 0.6.4 InklingForCausalLM 0.26.0
InklingForConditionalGeneration 0.26.0 InklingMTPModel 0.26.0 InternLM2ForCausalLM 0.6.0 InternLM2ForRewardModel 0.7.0
InternLM2VEForCausalLM 0.6.4-0.23.0 InternLM3ForCausalLM 0.7.0 InternLMForCausalLM 0.6.0-0.23.0
InternS1ForConditionalGeneration 0.10.1 InternS1ProForConditionalGeneration 0.16.0
InternS2MobiusForConditionalGeneration 0.28.0 InternS2MobiusMTP 0.28.0 InternS2PreviewForConditionalGeneration 0.22.0
InternVLChatModel 0.6.0 InternVLForConditionalGeneration 0.10.2 IsaacForConditionalGeneration 0.14.0
JAISLMHeadModel 0.6.0-0.22.1 Jais2ForCausalLM 0.13.0 JambaForCausalLM 0.6.0 JambaForSequenceClassification 0.6.6
JinaEmbeddingsV5Model 0.20.0 JinaForRanking 0.20.0 JinaVLForRanking 0.10.0 K2HorizonForCausalLM 0.30.0
K3DSparkModel 0.27.0 KananaVForConditionalGeneration 0.14.0 KeyeForConditionalGeneration 0.9.2-0.33.0
KeyeVL1_5ForConditionalGeneration 0.10.2-0.33.0 KimiK25ForConditionalGeneration 0.15.0
KimiK31ForConditionalGeneration 0.34.0 KimiK3ForConditionalGeneration 0.27.0 KimiK3MTPModel 0.27.0
KimiLinearForCausalLM 0.11.1 KimiVLForConditionalGeneration 0.8.5 Kolibri1ForCausalLM 0.33.0 LLaMAForCausalLM 0.6.0
LagunaForCausalLM 0.21.0 Lfm2BidirectionalModel 0.33.0 Lfm2ForCausalLM 0.10.2 Lfm2MoeForCausalLM 0.11.1
Lfm2VlForConditionalGeneration 0.14.0 Lfm3AudioForConditionalGeneration 0.34.0 Lfm3ForCausalLM 0.34.0
Lfm3VlForConditionalGeneration 0.34.0 LiLiCorrDraftModel 0.31.0 LightOnOCRForConditionalGeneration 0.11.1
Llama4ForCausalLM 0.8.3-0.8.3 0.10.1 Llama4ForConditionalGeneration 0.8.3
LlamaBidirectionalForSequenceClassification 0.14.0 LlamaBidirectionalModel 0.14.0 LlamaForCausalLM 0.6.0
LlamaForCausalLMEagle3 0.10.2 LlamaModel 0.6.4 LlamaNemotronVLForSequenceClassification 0.17.0
LlamaNemotronVLModel 0.17.0 Llama_Nemotron_Nano_VL 0.10.0 LlavaForConditionalGeneration 0.6.0
LlavaNextForConditionalGeneration 0.6.0 LlavaNextVideoForConditionalGeneration 0.6.1
LlavaOnevision2ForConditionalGeneration 0.25.0 LlavaOnevisionForConditionalGeneration 0.6.2
LongCatFlashMTPModel 0.11.0 LongcatFlashForCausalLM 0.11.0 LongcatFlashNgramForCausalLM 0.26.0
MBartForConditionalGeneration 0.10.1-0.10.2 MLPSpeculatorPreTrainedModel 0.6.0-0.9.2 MPTForCausalLM 0.6.0-0.28.0
Mamba2ForCausalLM 0.7.3 MambaForCausalLM 0.6.3 MantisForConditionalGeneration 0.6.5-0.24.0 MedusaModel 0.6.0-0.32.0
MellumForCausalLM 0.22.1 MiDashengLMModel 0.10.2 MiMoForCausalLM 0.9.0 MiMoMTPModel 0.9.0
MiMoV2FlashForCausalLM 0.14.0 MiMoV2ForCausalLM 0.21.0 MiMoV2MTPModel 0.21.0 MiMoV2OmniForCausalLM 0.21.0
MiMoV2OmniMTPModel 0.21.0 MingV3ASRForConditionalGeneration 0.34.0 MiniCPM3ForCausalLM 0.6.2 MiniCPMForCausalLM 0.6.0
MiniCPMO 0.7.1 MiniCPMOcrForConditionalGeneration 0.33.0 MiniCPMV 0.6.0 MiniCPMV4_6ForConditionalGeneration 0.22.0
MiniCPMV4_7ForConditionalGeneration 0.32.0 MiniMaxForCausalLM 0.10.0-0.23.0 MiniMaxM1ForCausalLM 0.9.2-0.23.0
MiniMaxM2ForCausalLM 0.11.1 MiniMaxM3MTP 0.24.0 MiniMaxM3SparseForCausalLM 0.24.0
MiniMaxM3SparseForConditionalGeneration 0.24.0 MiniMaxText01ForCausalLM 0.8.3-0.23.0
MiniMaxVL01ForConditionalGeneration 0.9.0-0.23.0 Ministral3ForCausalLM 0.20.0 Mistral3ForConditionalGeneration 0.8.3
MistralForCausalLM 0.6.0 MistralLarge3ForCausalLM 0.12.0 MistralLarge4DSparkModel 0.34.0
MistralLarge4ForCausalLM 0.34.0 MistralModel 0.6.0 MixtralForCausalLM 0.6.0
MllamaForConditionalGeneration 0.6.2-0.10.2 ModernBertForSequenceClassification 0.8.5
ModernBertForTokenClassification 0.11.1 ModernBertModel 0.9.0 ModernVBertModel 0.33.0
Molmo2ForConditionalGeneration 0.15.0 MolmoForCausalLM 0.6.3 Moondream3ForCausalLM 0.21.0
MoonshotKimiaForCausalLM 0.18.0 MossAudioModel 0.24.0 MossTranscribeDiarizeForConditionalGeneration 0.25.0
MotifForCausalLM 0.10.2-0.11.0 MptForCausalLM 0.6.0-0.28.0 MuseGlimmerAssistantModel 0.28.0
MuseGlimmerForCausalLM 0.28.0 MuseGlimmerForConditionalGeneration 0.28.0 MuseSparkDSparkModel 0.33.0
MuseSparkForConditionalGeneration 0.33.0 MusicFlamingoForConditionalGeneration 0.16.0-0.24.0 NVLM_D 0.6.3
NanbeigeForCausalLM 0.30.0 Nemotron3_5TranscribeForConditionalGeneration 0.34.0 Nemotron3_5TranscribeMTPModel 0.34.0
NemotronForCausalLM 0.6.0 NemotronHForCausalLM 0.9.1 NemotronHMTPModel 0.17.0 NemotronHPuzzleForCausalLM 0.16.0
NemotronH_Nano_Omni_Reasoning_V3 0.20.0 NemotronH_Nano_VL 0.10.2-0.10.2 NemotronH_Nano_VL_V2 0.11.0
NemotronH_Omni_Reasoning_V3 0.29.0 NemotronH_Super_Omni_Reasoning_V3 0.20.0
NemotronParseForConditionalGeneration 0.14.0 NomicBertModel 0.8.5 OPTForCausalLM 0.6.0 Olmo2ForCausalLM 0.6.5
Olmo3ForCausalLM 0.11.0 OlmoForCausalLM 0.6.0 OlmoHybridForCausalLM 0.18.0 OlmoeForCausalLM 0.6.2
OpenAIPrivacyFilterForTokenClassification 0.25.0 OpenCUAForConditionalGeneration 0.12.0 OpenPanguMTPModel 0.11.1
OpenPanguVLForConditionalGeneration 0.16.0 OpenVLAForActionPrediction 0.22.0 OpsColQwen3Model 0.17.0
OrionForCausalLM 0.6.0 OuroForCausalLM 0.11.1-0.26.0 Ovis 0.9.0 Ovis2_5 0.10.2 Ovis2_6ForCausalLM 0.17.0
Ovis2_6_MoeForCausalLM 0.17.0 PEagleDraftModel 0.22.0-0.33.0 PaddleOCRVLForConditionalGeneration 0.11.1
PaliGemmaForConditionalGeneration 0.6.0 PanguEmbeddedForCausalLM 0.11.1 PanguProMoEV2ForCausalLM 0.14.0
PanguUltraMoEForCausalLM 0.11.1 Param2MoEForCausalLM 0.20.0 ParseAuxMTPModel 0.33.0
PeagleLlamaForCausalLM 0.22.0-0.33.0 PeagleQwen3ForCausalLM 0.24.0-0.33.0 PersimmonForCausalLM 0.6.0-0.25.1
Phi3ForCausalLM 0.6.0 Phi3SmallForCausalLM 0.6.0-0.9.2 Phi3VForCausalLM 0.6.0 Phi4FlashForCausalLM 0.10.0-0.10.2
Phi4ForCausalLMV 0.20.0 Phi4MMForCausalLM 0.8.0 Phi4MultimodalForCausalLM 0.10.1-0.12.0 PhiForCausalLM 0.6.0
PhiMoEForCausalLM 0.6.0 PixtralForConditionalGeneration 0.6.1 Plamo2ForCausalLM 0.8.5-0.26.0 Plamo3ForCausalLM 0.12.0
PrithviGeoSpatialMAE 0.7.3-0.28.0 QWenLMHeadModel 0.6.0-0.23.0 QianfanOCRForConditionalGeneration 0.21.0
QuantMixtralForCausalLM 0.6.0-0.10.1.1 Qwen2AudioForConditionalGeneration 0.6.4 Qwen2ForCausalLM 0.6.0
Qwen2ForProcessRewardModel 0.7.0 Qwen2ForRewardModel 0.6.3 Qwen2ForSequenceClassification 0.6.4-0.9.2 Qwen2Model 0.6.4
Qwen2MoeForCausalLM 0.6.0 Qwen2VLForConditionalGeneration 0.6.1 Qwen2_5OmniForConditionalGeneration 0.9.0
Qwen2_5OmniModel 0.8.5 Qwen2_5_VLForConditionalGeneration 0.7.2 Qwen3ASRForConditionalGeneration 0.16.0
Qwen3ASRForcedAlignerForTokenClassification 0.19.0 Qwen3ASRRealtimeGeneration 0.17.0 Qwen3DSparkModel 0.25.0
Qwen3ForCausalLM 0.8.4 Qwen3ForSequenceClassification 0.9.2-0.9.2 Qwen3MoeForCausalLM 0.8.4
Qwen3NextForCausalLM 0.10.2 Qwen3NextMTP 0.10.2 Qwen3OmniDSparkModel 0.29.0
Qwen3OmniMoeForConditionalGeneration 0.11.1 Qwen3VLForConditionalGeneration 0.11.0
Qwen3VLMoeForConditionalGeneration 0.11.0 Qwen3VLNemotronEmbedModel 0.17.0 Qwen3XPressModel 0.33.0
Qwen3_5ForCausalLM 0.27.0 Qwen3_5ForConditionalGeneration 0.17.0 Qwen3_5MTP 0.17.0 Qwen3_5MoeForCausalLM 0.27.0
Qwen3_5MoeForConditionalGeneration 0.17.0 Qwen3_5MoeMTP 0.17.0 Qwen4ExpForCausalLM 0.29.0
Qwen4ExpForConditionalGeneration 0.29.0 Qwen4ExpMTP 0.29.0 QwenVLForConditionalGeneration 0.7.3-0.23.0
RForConditionalGeneration 0.10.2 RWForCausalLM 0.6.0-0.28.0 RadioMBartPrefixForCausalLM 0.33.0
RicursiveForCausalLM 0.34.0 Rnj1ForCausalLM 0.20.0 RobertaForMaskedLM 0.6.5 RobertaForSequenceClassification 0.6.5
RobertaForTokenClassification 0.26.0 RobertaModel 0.6.4 SarvamMLAForCausalLM 0.18.0 SarvamMoEForCausalLM 0.18.0
SeedOssForCausalLM 0.10.2 SiglipModel 0.11.1 SkyworkR1VChatModel 0.8.3 SmolLM3ForCausalLM 0.10.1
SmolVLMForConditionalGeneration 0.8.4 SolarForCausalLM 0.6.2 StableLMEpochForCausalLM 0.6.0-0.28.0
StableLmForCausalLM 0.6.0 Starcoder2ForCausalLM 0.6.0 Step1ForCausalLM 0.15.0 Step3TextForCausalLM 0.10.1
Step3VLForConditionalGeneration 0.10.1 Step3p5ForCausalLM 0.15.1 Step3p5MTP 0.15.1
Step3p7ForConditionalGeneration 0.23.0 Step5ForCausalLM 0.33.0 Step5ForConditionalGeneration 0.33.0 Step5MTP 0.33.0
StepVLForConditionalGeneration 0.15.0 Tarsier2ForConditionalGeneration 0.9.2-0.24.0
TarsierForConditionalGeneration 0.9.1-0.24.0 TeleChat2ForCausalLM 0.6.5 TeleChat3ForCausalLM 0.20.0
TeleChatForCausalLM 0.12.0-0.25.1 TeleFLMForCausalLM 0.8.2 Terratorch 0.10.2 TransformersEmbeddingModel 0.11.1
TransformersForCausalLM 0.8.3 TransformersForMTP 0.33.0 TransformersForMultimodalLM 0.10.0-0.11.0
TransformersForSequenceClassification 0.11.1 TransformersMoEEmbeddingModel 0.11.1 TransformersMoEForCausalLM 0.11.1
TransformersMoEForMTP 0.33.0 TransformersMoEForSequenceClassification 0.11.1
TransformersModel 0.7.2-0.8.2 0.10.1-0.11.0 TransformersMultiModalEmbeddingModel 0.11.1
TransformersMultiModalForCausalLM 0.11.1 TransformersMultiModalForSequenceClassification 0.11.1
TransformersMultiModalMoEForCausalLM 0.11.1 UltraVBertModel 0.34.0 UltravoxModel 0.6.0
UnlimitedOCR2TextForCausalLM 0.34.0 UnlimitedOCRForCausalLM 0.25.0 VaultGemmaForCausalLM 0.27.0
VibeVoiceAsrForConditionalGeneration 0.27.0 VoxtralForConditionalGeneration 0.10.0 VoxtralRealtimeGeneration 0.16.0
VoxtralStreamingGeneration 0.14.0-0.15.1 VoyageQwen3BidirectionalEmbedModel 0.16.0
WhisperForConditionalGeneration 0.7.0 XLMRobertaForSequenceClassification 0.6.5
XLMRobertaForTokenClassification 0.26.0 XLMRobertaModel 0.6.4 XverseForCausalLM 0.6.0-0.23.0 Zamba2ForCausalLM 0.8.0
ZayaForCausalLM 0.34.0
"""


def _key(text: str) -> Release:
    found = parse_release(text)
    assert found is not None, text
    return found


def _parse(text: str) -> dict[str, ClassSpans]:
    rows: dict[str, list[tuple[str, str]]] = {}
    name = ""
    for word in text.split():
        if word[:1].isdigit():
            first, _, last = word.partition("-")
            rows[name].append((first, last or READ_LAST))
        else:
            name = word
            rows[name] = []
    return {name: ClassSpans(name, tuple(spans)) for name, spans in rows.items()}


SPANS: dict[str, ClassSpans] = _parse(_SPANS)
READ: frozenset[Release] = frozenset(
    key for key in (parse_release(row.release) for row in CALENDAR)
    if key is not None and _key(READ_FIRST) <= key <= _key(READ_LAST)
)  # fmt: skip


def registers(architecture: str, release: Release) -> bool | None:
    """Whether the registry of `release` has the class (None: a class or release not read)."""
    row = SPANS.get(architecture)
    if row is None or release not in READ:
        return None
    return any(_key(first) <= release <= _key(last) for first, last in row.spans)


def _read(row: ClassSpans) -> str:
    return ", ".join(
        f"from {first}" if last == READ_LAST else first if first == last else f"{first}–{last}" for first, last in row.spans
    )


def first_release_check(
    architecture: str, version: ResolvedVersion, *, custom_code: bool
) -> ArchitectureCheck | None:
    """vLLM's verdict on a class SPANS names at a stated release read here: registered where its registry has it; before
    the Transformers backend (0.7.2) refused by vLLM's own words (an auto_map or not), naming the release that added
    it, or, for a class no wheel registers, that none does; from 0.7.2 handed to that backend (not checked: it depends
    on the transformers installed) or, with an auto_map, to remote code. None where this table does not decide (a
    class never registered from 0.7.2, no release stated, a release not read)."""
    row, release = SPANS.get(architecture), version.release
    if row is None and release is not None:
        return _never_registered(architecture, version, release, custom_code=custom_code)
    if row is None or release is None:
        return None
    has = registers(architecture, release)
    if has is None:
        return None
    label, added = version.label, f"added in {row.first}"
    if has:
        return ArchitectureCheck(state="registered", architecture=architecture, source=SOURCE,
                                 message=f"vLLM {label} registers {architecture} ({added})")  # fmt: skip
    before = release < _key(row.first)
    when = added if before else f"registered at {_read(row)}"
    if before and version.approximate:  # a release inferred from a log's dates or fields: a log that ran it is later
        return ArchitectureCheck(state="not_checked", architecture=architecture, source=SOURCE,
                                 message=f"vLLM {label} (inferred) predates {architecture} ({added}): the release the "
                                 "log ran is later; not checked")  # fmt: skip
    words = _words(architecture)
    if release < _key(FALLBACK_FIRST):
        return _refused(architecture, f"vLLM {label} has no {architecture} ({when})", custom_code=custom_code)
    if custom_code:
        return ArchitectureCheck(state="custom_code", architecture=architecture, source=SOURCE,
                                 message=f"vLLM {label} has no {architecture} ({when}); the config's auto_map names "
                                 "remote code, which its Transformers backend may load with --trust-remote-code "
                                 "(not checked)")  # fmt: skip
    stops = f"stops with {words!r}" if before else "stops (its _raise_for_unsupported)"
    return ArchitectureCheck(state="not_checked", architecture=architecture, source=SOURCE,
                             message=f"vLLM {label} has no class of its own for {architecture} ({when}): it hands it "
                             "to its Transformers backend, which serves it only where the installed transformers has "
                             f"the class and it is backend-compatible, else {stops}; not checked")  # fmt: skip


def _words(architecture: str) -> str:
    return f"Model architectures [{architecture!r}] are not supported for now."


# Before 0.7.2 nothing in vLLM reads a config's `auto_map`: the class comes from the registry alone
# (model_loader/utils.py get_model_architecture → registry resolve_model_cls, 0.6.0 :21-31, 0.7.1 :25-40; no
# "auto_map" in either wheel's vllm/), so --trust-remote-code loads the config, not the model class.
_NO_REMOTE = "its auto_map remote code is not loaded before then (only the config is)"


def _refused(architecture: str, head: str, *, custom_code: bool) -> ArchitectureCheck:
    """A release before the Transformers backend (0.7.2) that has no class of this name: it stops, remote code or not."""
    words, remote = _words(architecture), f"; {_NO_REMOTE}" if custom_code else ""
    return ArchitectureCheck(state="refused", architecture=architecture, source=SOURCE, engine_words=words,
                             message=f"{head} and no Transformers backend (from {FALLBACK_FIRST}){remote}: pick a "
                             f"later --engine-version; it stops with {words!r}")  # fmt: skip


def _never_registered(
    architecture: str, version: ResolvedVersion, release: Release, *, custom_code: bool
) -> ArchitectureCheck | None:
    """A class no wheel 0.6.0 … 0.34.0 registers, at a stated release read before 0.7.2: refused as vLLM refuses it
    (0.6.0 models/__init__.py ModelRegistry.resolve_model_cls :163-172; 0.7.1 registry.py _raise_for_unsupported
    :346-356). None from 0.7.2 (its
    Transformers backend may take it), at a release not read, for a name that is no class (model_type stands in),
    and at an inferred release (a log ran the class, so it ran a later release)."""
    if not architecture[:1].isupper() or release not in READ or version.approximate:
        return None
    if release >= _key(FALLBACK_FIRST):
        return None
    head = f"vLLM {version.label} has no {architecture} (no vLLM wheel {READ_FIRST} … {READ_LAST} registers it)"
    return _refused(architecture, head, custom_code=custom_code)
