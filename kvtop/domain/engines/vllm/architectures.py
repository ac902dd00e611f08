"""Which model classes vLLM registers, by release: `vllm/model_executor/models/registry.py`, read from the wheels.

vLLM resolves config.json's `architectures` against `_VLLM_MODELS` (every `_*_MODELS` table it spreads:
text generation, pooling, multimodal, speculative, the Transformers-backend names). A class it does not
register goes to `_try_resolve_transformers`: transformers' own class of that name where it is backend-
compatible (0.13.0: `is_backend_compatible()`; 0.33.0: that or `_can_set_attn_implementation()`), or the
config's `auto_map` remote code; else `_raise_for_unsupported` stops the launch ("Model architectures [...]
are not supported for now", or "was supported in vLLM until v…" for a class in `_PREVIOUSLY_SUPPORTED_MODELS`).

Read with benchmarks/engine_registries/read_registries.py (the registry, without importing vLLM) and
transformers_backend.py (run in each wheel's environment: the transformers it installs) from the vLLM
0.13.0, 0.33.0 and 0.34.0 wheels; at every other release 0.6.0 … 0.34.0 class_releases.py (each wheel's registry
keys) decides, and a release outside is "not checked" (docs/engines/architectures.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvtop.domain.engine_architectures import ArchitectureCheck, RegistryRange, RegistryTable, names
from kvtop.domain.engines.vllm.class_releases import (
    FALLBACK_FIRST,
    READ,
    READ_FIRST,
    READ_LAST,
    first_release_check,
)
from kvtop.domain.tower_blocks import BlockSplit
from kvtop.domain.tower_spec import TowerSplit

if TYPE_CHECKING:
    from kvtop.domain.engines.versions import ResolvedVersion
    from kvtop.domain.launch import LaunchSettings
    from kvtop.domain.model import ModelSpec

SOURCE = "vllm/model_executor/models/registry.py _VLLM_MODELS"

_V0_13_0 = names("""
AfmoeForCausalLM ApertusForCausalLM AquilaForCausalLM AquilaModel ArceeForCausalLM ArcticForCausalLM
AriaForConditionalGeneration AudioFlamingo3ForConditionalGeneration AyaVisionForConditionalGeneration
BagelForConditionalGeneration BaiChuanForCausalLM BaichuanForCausalLM BailingMoeForCausalLM
BailingMoeV2ForCausalLM BambaForCausalLM BeeForConditionalGeneration BertForSequenceClassification
BertForTokenClassification BertModel BertSpladeSparseEmbeddingModel Blip2ForConditionalGeneration
BloomForCausalLM CLIPModel ChameleonForConditionalGeneration ChatGLMForConditionalGeneration ChatGLMModel
Cohere2ForCausalLM Cohere2VisionForConditionalGeneration CohereForCausalLM CwmForCausalLM DbrxForCausalLM
DeciLMForCausalLM DeepSeekMTPModel DeepseekForCausalLM DeepseekOCRForCausalLM DeepseekV2ForCausalLM
DeepseekV32ForCausalLM DeepseekV3ForCausalLM DeepseekVLV2ForCausalLM Dots1ForCausalLM DotsOCRForCausalLM
Eagle3LlamaForCausalLM Eagle3Qwen2_5vlForCausalLM Eagle3Qwen3vlForCausalLM EagleDeepSeekMTPModel
EagleLlama4ForCausalLM EagleLlamaForCausalLM EagleMiniCPMForCausalLM EagleMistralLarge3ForCausalLM
Emu3ForConditionalGeneration Ernie4_5ForCausalLM Ernie4_5_MoeForCausalLM
Ernie4_5_VLMoeForConditionalGeneration ErnieMTPModel Exaone4ForCausalLM ExaoneForCausalLM
Fairseq2LlamaForCausalLM FalconForCausalLM FalconH1ForCausalLM FalconMambaForCausalLM FlexOlmoForCausalLM
FuyuForCausalLM GLM4VForCausalLM GPT2ForSequenceClassification GPT2LMHeadModel GPTBigCodeForCausalLM
GPTJForCausalLM GPTNeoXForCausalLM Gemma2ForCausalLM Gemma2Model Gemma3ForCausalLM
Gemma3ForConditionalGeneration Gemma3TextModel Gemma3nForCausalLM Gemma3nForConditionalGeneration
GemmaForCausalLM Glm4ForCausalLM Glm4MoeForCausalLM Glm4MoeMTPModel Glm4vForConditionalGeneration
Glm4vMoeForConditionalGeneration GlmForCausalLM GptOssForCausalLM GraniteForCausalLM GraniteMoeForCausalLM
GraniteMoeHybridForCausalLM GraniteMoeSharedForCausalLM GraniteSpeechForConditionalGeneration GritLM
Grok1ModelForCausalLM GteModel GteNewForSequenceClassification GteNewModel H2OVLChatModel
HCXVisionForCausalLM HunYuanDenseV1ForCausalLM HunYuanMoEV1ForCausalLM HunYuanVLForConditionalGeneration
Idefics3ForConditionalGeneration InternLM2ForCausalLM InternLM2ForRewardModel InternLM2VEForCausalLM
InternLM3ForCausalLM InternLMForCausalLM InternS1ForConditionalGeneration InternVLChatModel
InternVLForConditionalGeneration JAISLMHeadModel Jais2ForCausalLM JambaForCausalLM
JambaForSequenceClassification JinaVLForRanking KeyeForConditionalGeneration
KeyeVL1_5ForConditionalGeneration KimiLinearForCausalLM KimiVLForConditionalGeneration LLaMAForCausalLM
Lfm2ForCausalLM Lfm2MoeForCausalLM LightOnOCRForConditionalGeneration Llama4ForCausalLM
Llama4ForConditionalGeneration LlamaForCausalLM LlamaForCausalLMEagle3 LlamaModel Llama_Nemotron_Nano_VL
LlavaForConditionalGeneration LlavaNextForConditionalGeneration LlavaNextVideoForConditionalGeneration
LlavaOnevisionForConditionalGeneration LongCatFlashMTPModel LongcatFlashForCausalLM MPTForCausalLM
Mamba2ForCausalLM MambaForCausalLM MantisForConditionalGeneration MedusaModel MiDashengLMModel
MiMoForCausalLM MiMoMTPModel MiniCPM3ForCausalLM MiniCPMForCausalLM MiniCPMO MiniCPMV MiniMaxForCausalLM
MiniMaxM1ForCausalLM MiniMaxM2ForCausalLM MiniMaxText01ForCausalLM MiniMaxVL01ForConditionalGeneration
Mistral3ForConditionalGeneration MistralForCausalLM MistralLarge3ForCausalLM MistralModel MixtralForCausalLM
ModernBertForSequenceClassification ModernBertForTokenClassification ModernBertModel MolmoForCausalLM
MptForCausalLM NVLM_D NemotronForCausalLM NemotronHForCausalLM NemotronH_Nano_VL_V2 NomicBertModel
OPTForCausalLM Olmo2ForCausalLM Olmo3ForCausalLM OlmoForCausalLM OlmoeForCausalLM
OpenCUAForConditionalGeneration OpenPanguMTPModel OrionForCausalLM OuroForCausalLM Ovis Ovis2_5
PaddleOCRVLForConditionalGeneration PaliGemmaForConditionalGeneration PanguEmbeddedForCausalLM
PanguUltraMoEForCausalLM PersimmonForCausalLM Phi3ForCausalLM Phi3VForCausalLM Phi4MMForCausalLM
PhiForCausalLM PhiMoEForCausalLM PixtralForConditionalGeneration Plamo2ForCausalLM Plamo3ForCausalLM
PrithviGeoSpatialMAE QWenLMHeadModel Qwen2AudioForConditionalGeneration Qwen2ForCausalLM
Qwen2ForProcessRewardModel Qwen2ForRewardModel Qwen2Model Qwen2MoeForCausalLM
Qwen2VLForConditionalGeneration Qwen2_5OmniForConditionalGeneration Qwen2_5OmniModel
Qwen2_5_VLForConditionalGeneration Qwen3ForCausalLM Qwen3MoeForCausalLM Qwen3NextForCausalLM Qwen3NextMTP
Qwen3OmniMoeForConditionalGeneration Qwen3VLForConditionalGeneration Qwen3VLMoeForConditionalGeneration
QwenVLForConditionalGeneration RForConditionalGeneration RWForCausalLM RobertaForMaskedLM
RobertaForSequenceClassification RobertaModel SeedOssForCausalLM SiglipModel SkyworkR1VChatModel
SmolLM3ForCausalLM SmolVLMForConditionalGeneration SolarForCausalLM StableLMEpochForCausalLM
StableLmForCausalLM Starcoder2ForCausalLM Step3TextForCausalLM Step3VLForConditionalGeneration
Tarsier2ForConditionalGeneration TarsierForConditionalGeneration TeleChat2ForCausalLM TeleChatForCausalLM
TeleFLMForCausalLM Terratorch TransformersEmbeddingModel TransformersForCausalLM
TransformersForSequenceClassification TransformersMoEEmbeddingModel TransformersMoEForCausalLM
TransformersMoEForSequenceClassification TransformersMultiModalEmbeddingModel
TransformersMultiModalForCausalLM TransformersMultiModalForSequenceClassification
TransformersMultiModalMoEForCausalLM UltravoxModel VoxtralForConditionalGeneration
WhisperForConditionalGeneration XLMRobertaForSequenceClassification XLMRobertaModel XverseForCausalLM
Zamba2ForCausalLM
""")
# classes vLLM 0.13.0 does not register that its Transformers backend takes (transformers 4.57.6)
_V0_13_0_TRANSFORMERS = names("""
AriaTextForCausalLM BitNetForCausalLM DogeForCausalLM Emu3ForCausalLM GotOcr2ForConditionalGeneration
HeliumForCausalLM Idefics2ForConditionalGeneration IdeficsForVisionText2Text
InstructBlipForConditionalGeneration InstructBlipVideoForConditionalGeneration
Kosmos2ForConditionalGeneration Kosmos2_5ForConditionalGeneration Lfm2VlForConditionalGeneration
MinistralForCausalLM MllamaForCausalLM MllamaForConditionalGeneration ModernBertDecoderForCausalLM
Ovis2ForConditionalGeneration PerceptionLMForConditionalGeneration Phi4MultimodalForCausalLM
VaultGemmaForCausalLM VideoLlavaForConditionalGeneration VipLlavaForConditionalGeneration
""")
_V0_33_0 = names("""
AXK1ForCausalLM AfmoeForCausalLM AliceAIForCausalLM Alpamayo2Super ApertusForCausalLM ArceeForCausalLM
AriaForConditionalGeneration AudioFlamingo3ForConditionalGeneration BagelForConditionalGeneration
BailingMoeForCausalLM BailingMoeV25MTPModel BailingMoeV2ForCausalLM BailingMoeV2_5ForCausalLM
BailingMoeV3ForCausalLM BailingMoeV3MTPModel BailingMoeV3VLForConditionalGeneration BeamForCausalLM
BeeForConditionalGeneration BertForMaskedLM BertForSequenceClassification BertForTokenClassification
BertModel BertSpladeSparseEmbeddingModel BgeM3EmbeddingModel Blip2ForConditionalGeneration BloomForCausalLM
CLIPModel ChatGLMForConditionalGeneration ChatGLMModel ClefFlashForJointSchema ClefOmniForJointSchema
Cohere2ForCausalLM Cohere2MoeForCausalLM Cohere2VisionForConditionalGeneration
CohereAsrForConditionalGeneration CohereCompassForConditionalGeneration CohereForCausalLM
ColBERTJinaRobertaModel ColBERTLfm2Model ColBERTModernBertModel ColModernVBertForRetrieval
ColPaliForRetrieval ColQwen3 ColQwen3_5 ColUltraVBertForRetrieval Cosmos3EdgeForConditionalGeneration
Cosmos3ForConditionalGeneration CwmForCausalLM D3ForSequenceClassification DFlash2BeamDraftModel
DFlash2DraftModel DFlashDraftModel DFlashLagunaForCausalLM DFlashMuseGlimmerAssistantModel
DFlashQwen3XPressModel DSparkDraftModel DSparkV41DraftModel DbrxForCausalLM DeciLMForCausalLM
DeepSeekMTPModel DeepSeekV4MTPModel DeepseekForCausalLM DeepseekOCR2ForCausalLM DeepseekOCRForCausalLM
DeepseekV2ForCausalLM DeepseekV32ForCausalLM DeepseekV32MTPModel DeepseekV3BidirectionalModel
DeepseekV3ForCausalLM DeepseekV41ForCausalLM DeepseekV4ForCausalLM DeepseekV4ForConditionalGeneration
DeepseekVLV2ForCausalLM DiffusionGemmaForBlockDiffusion DomynEdgeForCausalLM DoryForCausalLM
Dots3NoteForCausalLM Dots3NoteMTPModel DotsOCRForCausalLM Eagle2_5_VLForConditionalGeneration
Eagle3DeepseekV2ForCausalLM Eagle3DeepseekV3ForCausalLM Eagle3LlamaForCausalLM Eagle3MiniMaxM2ForCausalLM
Eagle3Qwen2_5vlForCausalLM Eagle3Qwen3ForCausalLM Eagle3Qwen3vlForCausalLM EagleCohereForCausalLM
EagleDeepSeekMTPModel EagleLlama4ForCausalLM EagleLlamaForCausalLM EagleMiniCPMForCausalLM
EagleMistralForCausalLM EagleMistralLarge3ForCausalLM EmbeddingGemma2Model Emu3ForConditionalGeneration
Ernie4_5ForCausalLM Ernie4_5_MoeForCausalLM Ernie4_5_VLMoeForConditionalGeneration ErnieMTPModel
Exaone4ForCausalLM Exaone4_5_ForConditionalGeneration Exaone4_5_MTP ExaoneForCausalLM ExaoneMoEForCausalLM
ExaoneMoeForCausalLM ExaoneMoeMTP ExtractHiddenStatesModel FalconForCausalLM FalconH1ForCausalLM
FalconMambaForCausalLM FireRedASR2ForConditionalGeneration FlexOlmoForCausalLM FlintForCausalLM
FunASRForConditionalGeneration FunAudioChatForConditionalGeneration GLM4VForCausalLM
GPT2ForSequenceClassification GPT2LMHeadModel GPTBigCodeForCausalLM GPTJForCausalLM GPTNeoXForCausalLM
Gemma2ForCausalLM Gemma2Model Gemma3ForCausalLM Gemma3ForConditionalGeneration Gemma3TextModel
Gemma3nForCausalLM Gemma3nForConditionalGeneration Gemma4DSparkModel Gemma4ForCausalLM
Gemma4ForConditionalGeneration Gemma4MTPModel Gemma4UnifiedForConditionalGeneration GemmaForCausalLM
Glm4ForCausalLM Glm4MoeForCausalLM Glm4MoeLiteForCausalLM Glm4MoeLiteMTPModel Glm4MoeMTPModel
Glm4vForConditionalGeneration Glm4vMoeForConditionalGeneration Glm5NextForCausalLM
Glm5NextForConditionalGeneration Glm5NextMTPModel GlmAsrForConditionalGeneration GlmForCausalLM
GlmMoeDsaForCausalLM GlmOcrForConditionalGeneration GlmOcrMTPModel GptOssForCausalLM
Granite4VisionForConditionalGeneration GraniteForCausalLM GraniteMoeForCausalLM GraniteMoeHybridForCausalLM
GraniteMoeSWAForCausalLM GraniteMoeSharedForCausalLM GraniteSWAForCausalLM
GraniteSpeechForConditionalGeneration GraniteSpeechPlusForConditionalGeneration GteModel
GteNewForSequenceClassification GteNewModel H2OVLChatModel HCXVisionV2ForCausalLM HF_ColBERT HYV3ForCausalLM
HYV3MTPModel HYV4ForCausalLM HYV4MTPModel HfMoondream HrmTextForCausalLM HunYuanDenseV1ForCausalLM
HunYuanMoEV1ForCausalLM HunYuanVLForConditionalGeneration HyperCLOVAXForCausalLM IQuestCoderForCausalLM
IQuestLoopCoderForCausalLM Idefics3ForConditionalGeneration InklingForCausalLM
InklingForConditionalGeneration InklingMTPModel InternLM2ForCausalLM InternLM2ForRewardModel
InternLM3ForCausalLM InternS1ForConditionalGeneration InternS1ProForConditionalGeneration
InternS2MobiusForConditionalGeneration InternS2MobiusMTP InternS2PreviewForConditionalGeneration
InternVLChatModel InternVLForConditionalGeneration IsaacForConditionalGeneration Jais2ForCausalLM
JambaForCausalLM JambaForSequenceClassification JinaEmbeddingsV5Model JinaForRanking JinaVLForRanking
K2HorizonForCausalLM K3DSparkModel KananaVForConditionalGeneration KeyeForConditionalGeneration
KeyeVL1_5ForConditionalGeneration KimiK25ForConditionalGeneration KimiK3ForConditionalGeneration
KimiK3MTPModel KimiLinearForCausalLM KimiVLForConditionalGeneration Kolibri1ForCausalLM LLaMAForCausalLM
LagunaForCausalLM Lfm2BidirectionalModel Lfm2ForCausalLM Lfm2MoeForCausalLM Lfm2VlForConditionalGeneration
LiLiCorrDraftModel LightOnOCRForConditionalGeneration Llama4ForCausalLM Llama4ForConditionalGeneration
LlamaBidirectionalForSequenceClassification LlamaBidirectionalModel LlamaForCausalLM LlamaForCausalLMEagle3
LlamaModel LlamaNemotronVLForSequenceClassification LlamaNemotronVLModel Llama_Nemotron_Nano_VL
LlavaForConditionalGeneration LlavaNextForConditionalGeneration LlavaNextVideoForConditionalGeneration
LlavaOnevision2ForConditionalGeneration LlavaOnevisionForConditionalGeneration LongCatFlashMTPModel
LongcatFlashForCausalLM LongcatFlashNgramForCausalLM Mamba2ForCausalLM MambaForCausalLM MellumForCausalLM
MiDashengLMModel MiMoForCausalLM MiMoMTPModel MiMoV2FlashForCausalLM MiMoV2ForCausalLM MiMoV2MTPModel
MiMoV2OmniForCausalLM MiMoV2OmniMTPModel MiniCPM3ForCausalLM MiniCPMForCausalLM MiniCPMO
MiniCPMOcrForConditionalGeneration MiniCPMV MiniCPMV4_6ForConditionalGeneration
MiniCPMV4_7ForConditionalGeneration MiniMaxM2ForCausalLM MiniMaxM3MTP MiniMaxM3SparseForCausalLM
MiniMaxM3SparseForConditionalGeneration Ministral3ForCausalLM Mistral3ForConditionalGeneration
MistralForCausalLM MistralLarge3ForCausalLM MistralModel MixtralForCausalLM
ModernBertForSequenceClassification ModernBertForTokenClassification ModernBertModel ModernVBertModel
Molmo2ForConditionalGeneration MolmoForCausalLM Moondream3ForCausalLM MoonshotKimiaForCausalLM
MossAudioModel MossTranscribeDiarizeForConditionalGeneration MuseGlimmerAssistantModel
MuseGlimmerForCausalLM MuseGlimmerForConditionalGeneration MuseSparkDSparkModel
MuseSparkForConditionalGeneration NVLM_D NanbeigeForCausalLM NemotronForCausalLM NemotronHForCausalLM
NemotronHMTPModel NemotronHPuzzleForCausalLM NemotronH_Nano_Omni_Reasoning_V3 NemotronH_Nano_VL_V2
NemotronH_Omni_Reasoning_V3 NemotronH_Super_Omni_Reasoning_V3 NemotronParseForConditionalGeneration
NomicBertModel OPTForCausalLM Olmo2ForCausalLM Olmo3ForCausalLM OlmoForCausalLM OlmoHybridForCausalLM
OlmoeForCausalLM OpenAIPrivacyFilterForTokenClassification OpenCUAForConditionalGeneration OpenPanguMTPModel
OpenPanguVLForConditionalGeneration OpenVLAForActionPrediction OpsColQwen3Model OrionForCausalLM Ovis
Ovis2_5 Ovis2_6ForCausalLM Ovis2_6_MoeForCausalLM PEagleDraftModel PaddleOCRVLForConditionalGeneration
PaliGemmaForConditionalGeneration PanguEmbeddedForCausalLM PanguProMoEV2ForCausalLM PanguUltraMoEForCausalLM
Param2MoEForCausalLM ParseAuxMTPModel PeagleLlamaForCausalLM PeagleQwen3ForCausalLM Phi3ForCausalLM
Phi3VForCausalLM Phi4ForCausalLMV Phi4MMForCausalLM PhiForCausalLM PhiMoEForCausalLM
PixtralForConditionalGeneration Plamo3ForCausalLM QianfanOCRForConditionalGeneration
Qwen2AudioForConditionalGeneration Qwen2ForCausalLM Qwen2ForProcessRewardModel Qwen2ForRewardModel
Qwen2Model Qwen2MoeForCausalLM Qwen2VLForConditionalGeneration Qwen2_5OmniForConditionalGeneration
Qwen2_5OmniModel Qwen2_5_VLForConditionalGeneration Qwen3ASRForConditionalGeneration
Qwen3ASRForcedAlignerForTokenClassification Qwen3ASRRealtimeGeneration Qwen3DSparkModel Qwen3ForCausalLM
Qwen3MoeForCausalLM Qwen3NextForCausalLM Qwen3NextMTP Qwen3OmniDSparkModel
Qwen3OmniMoeForConditionalGeneration Qwen3VLForConditionalGeneration Qwen3VLMoeForConditionalGeneration
Qwen3VLNemotronEmbedModel Qwen3XPressModel Qwen3_5ForCausalLM Qwen3_5ForConditionalGeneration Qwen3_5MTP
Qwen3_5MoeForCausalLM Qwen3_5MoeForConditionalGeneration Qwen3_5MoeMTP Qwen4ExpForCausalLM
Qwen4ExpForConditionalGeneration Qwen4ExpMTP RForConditionalGeneration RadioMBartPrefixForCausalLM
Rnj1ForCausalLM RobertaForMaskedLM RobertaForSequenceClassification RobertaForTokenClassification
RobertaModel SarvamMLAForCausalLM SarvamMoEForCausalLM SeedOssForCausalLM SiglipModel SkyworkR1VChatModel
SmolLM3ForCausalLM SmolVLMForConditionalGeneration SolarForCausalLM StableLmForCausalLM
Starcoder2ForCausalLM Step1ForCausalLM Step3TextForCausalLM Step3VLForConditionalGeneration
Step3p5ForCausalLM Step3p5MTP Step3p7ForConditionalGeneration Step5ForCausalLM Step5ForConditionalGeneration
Step5MTP StepVLForConditionalGeneration TeleChat2ForCausalLM TeleChat3ForCausalLM TeleFLMForCausalLM
Terratorch TransformersEmbeddingModel TransformersForCausalLM TransformersForMTP
TransformersForSequenceClassification TransformersMoEEmbeddingModel TransformersMoEForCausalLM
TransformersMoEForMTP TransformersMoEForSequenceClassification TransformersMultiModalEmbeddingModel
TransformersMultiModalForCausalLM TransformersMultiModalForSequenceClassification
TransformersMultiModalMoEForCausalLM UltravoxModel UnlimitedOCRForCausalLM VaultGemmaForCausalLM
VibeVoiceAsrForConditionalGeneration VoxtralForConditionalGeneration VoxtralRealtimeGeneration
VoyageQwen3BidirectionalEmbedModel WhisperForConditionalGeneration XLMRobertaForSequenceClassification
XLMRobertaForTokenClassification XLMRobertaModel Zamba2ForCausalLM
""")
# classes vLLM 0.33.0 does not register that its Transformers backend takes (transformers 5.20.2)
_V0_33_0_TRANSFORMERS = names("""
AXK2ForCausalLM AriaTextForCausalLM AyaVisionForConditionalGeneration BailingHybridForCausalLM
BambaForCausalLM BartForCausalLM BertGenerationDecoder BertLMHeadModel BigBirdPegasusForCausalLM
BioGptForCausalLM BitNetForCausalLM BlenderbotForCausalLM BlenderbotSmallForCausalLM BltForCausalLM
CTRLLMHeadModel CamembertForCausalLM ChameleonForConditionalGeneration CohereCompassForCausalLM
Cosmos3OmniForConditionalGeneration Data2VecTextForCausalLM DeepseekOcr2ForConditionalGeneration
DeepseekVLForConditionalGeneration DeepseekVLHybridForConditionalGeneration DiffLlamaForCausalLM
DogeForCausalLM Dots1ForCausalLM ElectraForCausalLM Emu3ForCausalLM ErnieForCausalLM
EvollaForProteinText2Text FastVlmForConditionalGeneration Florence2ForConditionalGeneration
FunAsrNanoForConditionalGeneration FuyuForCausalLM Gemma4AssistantForCausalLM
Gemma4UnifiedAssistantForCausalLM Gemma4UnifiedForCausalLM GitForCausalLM Glm46VForConditionalGeneration
GotOcr2ForConditionalGeneration HeliumForCausalLM HyperCLOVAXVisionV2ForConditionalGeneration
Idefics2ForConditionalGeneration IdeficsForVisionText2Text InstructBlipForConditionalGeneration
InstructBlipVideoForConditionalGeneration JanusForConditionalGeneration JetMoeForCausalLM
Kimi_K25ForConditionalGeneration Kosmos2ForConditionalGeneration Kosmos2_5ForConditionalGeneration
KyutaiSpeechToTextForConditionalGeneration LightOnOcrForConditionalGeneration MBartForCausalLM
MarianForCausalLM MiniMaxForCausalLM MiniMaxM3VLForCausalLM MinistralForCausalLM Mistral4ForCausalLM
MllamaForCausalLM MllamaForConditionalGeneration ModernBertDecoderForCausalLM MoshiForCausalLM
MusicgenForCausalLM MusicgenMelodyForCausalLM NanoChatForCausalLM Ovis2ForConditionalGeneration
PI0ForConditionalGeneration PLBartForCausalLM PPFormulaNetForConditionalGeneration PegasusForCausalLM
PerceptionLMForConditionalGeneration PersimmonForCausalLM Phi4MultimodalForCausalLM PhimoeForCausalLM
Pix2StructForConditionalGeneration Qwen2_5OmniThinkerForConditionalGeneration
Qwen3OmniMoeThinkerForConditionalGeneration RecurrentGemmaForCausalLM RoCBertForCausalLM RobertaForCausalLM
RobertaPreLayerNormForCausalLM SolarOpenForCausalLM T5Gemma2ForConditionalGeneration
UdopForConditionalGeneration UnlimitedOcrForConditionalGeneration VideoLlama3ForConditionalGeneration
VideoLlavaForConditionalGeneration VipLlavaForConditionalGeneration VisionEncoderDecoderModel
VoxtralRealtimeForConditionalGeneration WhisperForCausalLM XLMRobertaForCausalLM XLMRobertaXLForCausalLM
XmodForCausalLM YoutuForCausalLM ZambaForCausalLM ZayaForCausalLM xLSTMForCausalLM
""")

# `_PREVIOUSLY_SUPPORTED_MODELS` at each release: the last release that had each class it dropped
_DROPPED_0_13_0 = {
    "MotifForCausalLM": "0.10.2", "Phi3SmallForCausalLM": "0.9.2", "Phi4FlashForCausalLM": "0.10.2",
    "Phi4MultimodalForCausalLM": "0.12.0", "BartModel": "0.10.2", "BartForConditionalGeneration": "0.10.2",
    "DonutForConditionalGeneration": "0.10.2", "Florence2ForConditionalGeneration": "0.10.2",
    "MBartForConditionalGeneration": "0.10.2", "MllamaForConditionalGeneration": "0.10.2",
}  # fmt: skip
_DROPPED_0_33_0 = {
    "MotifForCausalLM": "0.10.2", "Phi3SmallForCausalLM": "0.9.2", "Phi4FlashForCausalLM": "0.10.2",
    "Phi4MultimodalForCausalLM": "0.12.0", "JAISLMHeadModel": "0.22.0", "ErnieModel": "0.23.0",
    "ErnieForSequenceClassification": "0.23.0", "ErnieForTokenClassification": "0.23.0",
    "InternLM2VEForCausalLM": "0.23.0", "QWenLMHeadModel": "0.23.0", "QwenVLForConditionalGeneration": "0.23.0",
    "InternLMForCausalLM": "0.23.0", "DonutForConditionalGeneration": "0.10.2",
    "MllamaForConditionalGeneration": "0.10.2", "XverseForCausalLM": "0.23.0", "Dots1ForCausalLM": "0.23.0",
    "BambaForCausalLM": "0.23.0", "MiniMaxForCausalLM": "0.23.0", "MiniMaxText01ForCausalLM": "0.23.0",
    "MiniMaxM1ForCausalLM": "0.23.0", "MiniMaxVL01ForConditionalGeneration": "0.23.0",
    "BaiChuanForCausalLM": "0.23.0", "BaichuanForCausalLM": "0.23.0", "AquilaModel": "0.24.0",
    "AquilaForCausalLM": "0.24.0", "Grok1ModelForCausalLM": "0.24.0", "Grok1ForCausalLM": "0.24.0",
    "TarsierForConditionalGeneration": "0.24.0", "Tarsier2ForConditionalGeneration": "0.23.0",
    "MantisForConditionalGeneration": "0.24.0", "MusicFlamingoForConditionalGeneration": "0.24.0",
    "AyaVisionForConditionalGeneration": "0.24.0", "TeleChatForCausalLM": "0.25.0", "PersimmonForCausalLM": "0.25.0",
    "FuyuForCausalLM": "0.25.0", "Plamo2ForCausalLM": "0.26.0", "OuroForCausalLM": "0.26.0",
    "ArcticForCausalLM": "0.28.0", "ChameleonForConditionalGeneration": "0.28.0", "Cheers": "0.28.0",
    "CheersForConditionalGeneration": "0.28.0", "Fairseq2LlamaForCausalLM": "0.28.0",
    "FireRedLIDForConditionalGeneration": "0.28.0", "GritLM": "0.28.0", "HCXVisionForCausalLM": "0.28.0",
    "MPTForCausalLM": "0.28.0", "MptForCausalLM": "0.28.0", "RWForCausalLM": "0.28.0",
    "StableLMEpochForCausalLM": "0.28.0", "PrithviGeoSpatialMAE": "0.28.0",
}  # fmt: skip

# Classes vLLM does not register whose checkpoint's remote code it cannot take: _try_resolve_transformers
# (registry.py) imports the auto_map's AutoModel… class with try_get_class_from_dynamic_module, which returns None
# where the import fails, and then (model_impl auto) returns None; a class that imports is kept only where
# is_backend_compatible() (its `_supports_attention_backend`) or, from 0.33.0, _can_set_attn_implementation() (its
# module calls ALL_ATTENTION_FUNCTIONS.get_interface) holds, else None again. Either way _raise_for_unsupported stops
# the launch with "Model architectures [...] are not supported for now." (read at 0.13.0 and 0.33.0). MiniCPM-SALA
# imports under 0.13.0 (transformers 4.57.6 still defines is_torch_fx_available); its flags were not read there, so
# "not checked". BailingMoEForCausalLM (SGLang's base class; a config naming it keeps Ling-plus's auto_map) is the
# Ling family's published modeling_bailing_moe.py (inclusionAI/Ling models/, last changed at ceb34760, read at
# 5ccaeae0): imported here in each wheel's environment, 0.33.0's raises ImportError and 0.13.0's gives a
# BailingMoeModel with is_backend_compatible() False and _can_set_attn_implementation() False.
_LING_REMOTE = "inclusionAI/Ling models/modeling_bailing_moe.py (Ling-plus's auto_map modeling_bailing_moe)"
_V0_13_0_REMOTE_CODE_REFUSED = {
    "BailingMoEForCausalLM": f"{_LING_REMOTE}: its BailingMoePreTrainedModel sets no _supports_attention_backend, so "
                             "BailingMoeModel.is_backend_compatible() is False with transformers 4.57.6, the 0.13.0 "
                             "wheel's, and _try_resolve_transformers returns None",
}  # fmt: skip
_V0_33_0_REMOTE_CODE_REFUSED = {
    "MiniCPMSALAForCausalLM": "openbmb/MiniCPM-SALA modeling_minicpm_sala.py imports is_torch_fx_available from "
                              "transformers.utils.import_utils (its line as a public patch script for the file "
                              "quotes it), which transformers 5.20.2, the 0.33.0 wheel's, no longer defines",
    "BailingMoEForCausalLM": f"{_LING_REMOTE} imports is_torch_fx_available from transformers.utils.import_utils, "
                             "which transformers 5.20.2, the 0.33.0 wheel's, no longer defines (and its "
                             "BailingMoeAttention(nn.Module) calls no ALL_ATTENTION_FUNCTIONS.get_interface, so "
                             "imported it would still not be backend-compatible)",
}  # fmt: skip

# vLLM 0.34.0 (read like 0.33.0: read_registries.py on the wheel, transformers_backend.py under transformers 5.22.2,
# the newest its `transformers<5.23.0` pin installs; its `_try_resolve_transformers` the same test, registry.py:1407)
_V0_34_0 = (_V0_33_0 - {"KeyeForConditionalGeneration", "KeyeVL1_5ForConditionalGeneration", "PEagleDraftModel",
                        "PeagleLlamaForCausalLM", "PeagleQwen3ForCausalLM"}) | names("""
CanaryForConditionalGeneration DFlash2RicursiveDraftModel DSparkMiniMaxDraftModel KimiK31ForConditionalGeneration
Lfm3AudioForConditionalGeneration Lfm3ForCausalLM Lfm3VlForConditionalGeneration MingV3ASRForConditionalGeneration
MistralLarge4DSparkModel MistralLarge4ForCausalLM Nemotron3_5TranscribeForConditionalGeneration
Nemotron3_5TranscribeMTPModel RicursiveForCausalLM UltraVBertModel UnlimitedOCR2TextForCausalLM ZayaForCausalLM
""")
_V0_34_0_TRANSFORMERS = (_V0_33_0_TRANSFORMERS - {"ZayaForCausalLM"}) | {"MistralLarge4ForConditionalGeneration"}
_DROPPED_0_34_0 = {**_DROPPED_0_33_0, "KeyeForConditionalGeneration": "0.33.0",
                   "KeyeVL1_5ForConditionalGeneration": "0.33.0"}  # fmt: skip
_V0_34_0_REMOTE_CODE_REFUSED = {
    name: why.replace("transformers 5.20.2, the 0.33.0 wheel's", "transformers 5.22.2, the 0.34.0 wheel's")
    for name, why in _V0_33_0_REMOTE_CODE_REFUSED.items()
}  # transformers 5.22.2 has no is_torch_fx_available either (read in its import_utils)

RANGES: tuple[RegistryRange, ...] = (
    RegistryRange("0.13.0", "0.13.0", _V0_13_0, f"{SOURCE}, vLLM 0.13.0 wheel",
                  transformers_backend=_V0_13_0_TRANSFORMERS, transformers="4.57.6", dropped=_DROPPED_0_13_0,
                  remote_code_refused=_V0_13_0_REMOTE_CODE_REFUSED),
    RegistryRange("0.33.0", "0.33.0", _V0_33_0, f"{SOURCE}, vLLM 0.33.0 wheel",
                  transformers_backend=_V0_33_0_TRANSFORMERS, transformers="5.20.2", dropped=_DROPPED_0_33_0,
                  remote_code_refused=_V0_33_0_REMOTE_CODE_REFUSED),
    RegistryRange("0.34.0", "0.34.0", _V0_34_0, f"{SOURCE}, vLLM 0.34.0 wheel",
                  transformers_backend=_V0_34_0_TRANSFORMERS, transformers="5.22.2", dropped=_DROPPED_0_34_0,
                  remote_code_refused=_V0_34_0_REMOTE_CODE_REFUSED),
)  # fmt: skip


def _wording(architecture: str, found: RegistryRange) -> str:
    """`_raise_for_unsupported`'s own words."""
    if architecture in found.dropped:
        return (f"Model architecture {architecture} was supported in vLLM until v{found.dropped[architecture]}, "
                "and is not supported anymore.")  # fmt: skip
    return f"Model architectures [{architecture!r}] are not supported for now."


TABLE = RegistryTable("vLLM", RANGES, _wording)


# vLLM 0.33.0 keeps a learned position table whole (nn.Embedding / a Parameter: qwen3_vl.py, siglip.py) and
# builds Gemma-4's tower linears replicated (gemma4_mm.py ReplicatedLinear): its split is the towers' default.
# Gemma-4's full-attention layers under attention_k_eq_v build V in their QKVParallelLinear all the same
# (gemma4.py Gemma4Attention: "k_eq_v layers load K weights into both K and V slots via hf_to_vllm_mapper — no
# structural difference needed"): meta-built, gemma-4-26B-A4B TP1 qkv_proj [10240, 2816], not [9216, 2816].
# Read at 0.33.0, the one checked release that registers Gemma-4 (0.13.0's registry has no Gemma4 class; the
# releases between are not checked, RANGES above).
# Muse-Glimmer (0.33.0 models/muse_glimmer.py, read there only): only the vision blocks' qkv_proj / o_proj are
# parallel layers; the block MLP (c_fc, c_proj), the adapter and the projection are nn.Linear, whole on every rank
# (towers_muse.py `replicated_params`, whole here): meta-built at TP 2, 3,371,601,920 B of tower a rank.
# How vLLM 0.33.0 divides each encoder class's blocks over TP (kvtop.domain.tower_blocks): Qwen3-Omni's and
# Qwen3-ASR's audio encoder (qwen3_omni_moe_thinker.py Qwen3OmniMoeAudioAttention / Qwen3OmniMoeAudioEncoderLayer:
# `disable_tp = num_heads % tp_size != 0` on qkv_proj, out_proj, fc1 and fc2): split where the 20 heads divide, else
# whole; GLM-ASR's (glmasr.py GlmAsrEncoderAttention: QKVParallelLinear bias=True, a K bias the checkpoint lacks
# ("For simplicity with QKVParallelLinear, we use bias=True for all"), RowParallelLinear o_proj; GlmAsrEncoderMLP
# Column/Row): split, its QKVParallelLinear dividing the heads (`divide` asserts where they do not). GLM-4.1V's and
# GLM-4.5V's vision attention (glm4_1v.py Glm4vVisionAttention): split, asserting the heads divide (zai-org--GLM-4.5V,
# 12 heads, at TP 8: "12 is not divisible by 8").
_BLOCKS = (
    ("InternVisionModel", BlockSplit(attention="heads",
                                     source="0.33.0 model_executor/models/intern_vit.py InternVisionEncoderLayer: "
                                     "InternParallelAttention where num_heads % tp == 0, else whole")),
    ("InternVLVisionModel", BlockSplit(attention="never", mlp="never",
                                       source="0.33.0 model_executor/models/interns1_vit.py InternSdpaAttention: "
                                       "q_proj, k_proj, v_proj and projection_layer nn.Linear, whole")),
    ("Glm4vVisionTransformer", BlockSplit(attention="always",
                                          source="0.33.0 model_executor/models/glm4_1v.py Glm4vVisionAttention "
                                          "(dist_utils.divide(num_heads, tp))")),
    ("Qwen3OmniMoeAudioEncoder", BlockSplit(attention="heads", mlp="heads",
                                            source="0.33.0 model_executor/models/qwen3_omni_moe_thinker.py disable_tp")),
    ("GlmAsrEncoder", BlockSplit(attention="always", mlp="always", k_bias=True,
                                 source="0.33.0 model_executor/models/glmasr.py GlmAsrEncoderAttention "
                                 "(QKVParallelLinear: divide(num_heads, tp))")),
    ("MossAudioEncoder", BlockSplit(attention="always", mlp="always",
                                    source="0.33.0 model_executor/models/moss_audio.py MossAudioAttention (raises "
                                    "unless encoder_attention_heads % tp == 0), Column/RowParallelLinear")),
    ("FunAudioChatAudioEncoder", BlockSplit(attention="always", mlp="never", k_bias=True,
                                            source="0.33.0 model_executor/models/funaudiochat.py "
                                            "FunAudioChatAudioAttention (QKVParallelLinear bias=True, divides the "
                                            "heads), FunAudioChatAudioEncoderLayer fc1 / fc2 nn.Linear")),
    ("DashengAudioTransformer", BlockSplit(attention="always", mlp="always",
                                           source="0.33.0 model_executor/models/midashenglm.py DashengAttention "
                                           "(asserts num_heads % tp == 0), DashengMlp Column/RowParallelLinear")),
    ("VoxtralWhisperEncoder", BlockSplit(attention="always", mlp="always", k_bias=True,
                                         source="0.33.0 model_executor/models/voxtral.py VoxtralEncoderModel: "
                                         "whisper.py WhisperEncoder (its attention and MLP as below)")),
    ("WhisperEncoder", BlockSplit(attention="always", mlp="always", k_bias=True,
                                  source="0.33.0 model_executor/models/whisper.py WhisperAttention (asserts "
                                  "num_heads % tp == 0; QKVParallelLinear bias=True, a zero K bias at load)")),
    ("Gemma3nAudioEncoder", BlockSplit(attention="never", mlp="never",
                                       source="0.33.0 model_executor/models/gemma3n_mm.py: AutoModel.from_config("
                                       "audio_config), transformers' Gemma3nAudioEncoder (nn.Linear)")),
)  # fmt: skip
# The Qwen2.5-VL vision MLP (qwen2_5_vl.py Qwen2_5_VisionMLP: gate_up a MergedColumnParallelLinear, which asserts
# every output size divides by TP; Qwen2.5-Omni's and EXAONE-4.5's towers build it too) is not padded: a 3,420-wide
# MLP stops the build at TP 8 (meta-built, default--Exaone4_5_ForConditionalGeneration: AssertionError, linear.py).
MLP_SOURCE = "0.33.0 model_executor/layers/linear.py MergedColumnParallelLinear: output_size % tp_size == 0"
# `--mm-encoder-tp-mode data` (first in v0.10.2: config/__init__.py:453 ModelConfig.mm_encoder_tp_mode, absent from
# v0.10.1; read at v0.13.0 and v0.33.0 config/multimodal.py MultiModalConfig.mm_encoder_tp_mode): for a class with `supports_encoder_tp_data = True` (models/interfaces.py SupportsMultiModal)
# vision.py is_vit_use_data_parallel() is true and the encoder's linears are built `disable_tp=True` (whole), the
# projector too where it lives in the encoder; ModelConfig.__post_init__ (config/model.py) turns the flag back to
# "weights" for any other class ("This model does not support `--mm-encoder-tp-mode data`"). Listed: the classes
# whose whole tower (blocks and merger) is built so, as at TP 1 — qwen2_vl.py / qwen2_5_vl.py / qwen3_vl.py
# Vision{MLP,Attention,PatchMerger} and glm4_1v.py Glm4vVision{MLP,Attention}, Glm4vPatchMerger, and the classes that
# inherit them (opencua.py, exaone4_5.py, qwen3_vl_moe.py, qwen3_5.py, Glm4vMoe). Others that take the flag are not
# modelled data-parallel (their projectors stay split, read per class: mllama4.py Llama4MultiModalProjector,
# isaac.py; InternVL, Kimi-VL, Kimi-K2.5, Step3-VL, MiniCPM-V, dots.ocr, Eagle2.5, Cosmos3-Edge, Cohere Compass).
DATA_PARALLEL_ENCODER = (
    "Qwen2VLForConditionalGeneration", "Qwen2_5_VLForConditionalGeneration", "OpenCUAForConditionalGeneration",
    "Exaone4_5_ForConditionalGeneration", "Qwen3VLForConditionalGeneration", "Qwen3VLMoeForConditionalGeneration",
    "Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration", "Glm4vForConditionalGeneration",
    "Glm4vMoeForConditionalGeneration",
)  # fmt: skip
# the classes above older than their taking the flag (models/*.py `supports_encoder_tp_data = True` read in each
# wheel: v0.10.2 qwen2_5_vl.py:910, glm4_1v.py:1308, kimi_vl, step3_vl, minicpmv, mllama4; v0.11.0 adds qwen2_vl.py:1137,
# internvl.py (H2OVL, NVLM_D subclass InternVLChatModel), new dots_ocr.py and qwen3_vl.py): before it vLLM turns the flag
# back to "weights" (config/__init__.py:872-877 at v0.10.2) and builds the tower split
DATA_PARALLEL_SINCE = (
    ("Qwen2VLForConditionalGeneration", "0.11.0"), ("InternVLChatModel", "0.11.0"), ("H2OVLChatModel", "0.11.0"),
    ("NVLM_D", "0.11.0"),
)  # fmt: skip
# the other registered classes whose own class (or a base) says supports_encoder_tp_data = True (v0.33.0 registry.py
# read with the models' class hierarchy; HunYuanVL from v0.13.0 hunyuan_vision.py): not modelled data-parallel
DATA_PARALLEL_UNMODELLED = (
    "Alpamayo2Super", "ClefFlashForJointSchema", "CohereCompassForConditionalGeneration", "ColQwen3", "ColQwen3_5",
    "Cosmos3EdgeForConditionalGeneration", "Cosmos3ForConditionalGeneration", "DotsOCRForCausalLM",
    "Eagle2_5_VLForConditionalGeneration", "GlmOcrForConditionalGeneration", "H2OVLChatModel",
    "HunYuanVLForConditionalGeneration", "InternS1ProForConditionalGeneration",
    "InternS2MobiusForConditionalGeneration", "InternS2PreviewForConditionalGeneration", "InternVLChatModel",
    "IsaacForConditionalGeneration", "JinaVLForRanking", "KimiK25ForConditionalGeneration",
    "KimiVLForConditionalGeneration", "Llama4ForConditionalGeneration", "MiniCPMO", "MiniCPMOcrForConditionalGeneration",
    "MiniCPMV", "MiniCPMV4_6ForConditionalGeneration", "MiniCPMV4_7ForConditionalGeneration", "NVLM_D",
    "OpsColQwen3Model", "QianfanOCRForConditionalGeneration", "Qwen3VLNemotronEmbedModel",
    "Step3VLForConditionalGeneration", "Step3p7ForConditionalGeneration", "StepVLForConditionalGeneration",
)  # fmt: skip
# 0.33.0 models/whisper.py WhisperDecoder: embed_tokens an nn.Embedding (vocab × d_model whole, unpadded), proj_out a
# ParallelLMHead tied to it (its weight is the embedding's)
_WHISPER = ("WhisperForConditionalGeneration",)
# vLLM 0.33.0 midashenglm.py AudioProjectorSubsample: Column/RowParallelLinear with their default bias=True
# siglip.py's SiglipVisionEmbeddings built its position table a VocabParallelEmbedding (rows padded to 64, split over
# TP) to v0.13.x and an nn.Embedding (whole) from v0.14.0: read in the wheels of v0.8.0 (siglip.py:70), v0.8.4 (:67),
# v0.9.0.1 (:68), v0.9.1-v0.11.0 (:69-70), v0.11.1-v0.13.0 (:298-299); whole at v0.14.0 (:299), v0.16.0-v0.19.0
# (:300-304), v0.27.1 (:299), v0.33.0 (:277) and v0.34.0 (:278). The classes that build their tower from it
# (`from .siglip import SiglipVisionModel`: gemma3_mm.py, paligemma.py, llava.py's init_vision_tower_for_llava for
# llava-onevision, cohere2_vision.py; read at v0.9.1 and v0.13.0); MiniCPM-V's SigLIP is idefics2_vision_model.py's
# (an nn.Embedding at v0.9.1): not among them
SIGLIP_TABLE_SPLIT = tuple((cls, "0.14.0") for cls in (
    "Gemma3ForConditionalGeneration", "PaliGemmaForConditionalGeneration", "LlavaOnevisionForConditionalGeneration",
    "Cohere2VisionForConditionalGeneration"))  # fmt: skip
TOWER_SPLIT = TowerSplit(k_eq_v_holds_v=("Gemma4ForCausalLM", "Gemma4ForConditionalGeneration"), blocks=_BLOCKS,
                         whole_embedding=_WHISPER, projector_bias=("DashengConfig",),
                         float32_tables=("VoxtralWhisperEncoder",),  # voxtral.py: WhisperEncoder(init_in_fp32=True)
                         mlp_divides=True, data_parallel_flag=("mm-encoder-tp-mode", "data"),
                         data_parallel=DATA_PARALLEL_ENCODER,
                         data_parallel_unmodelled=DATA_PARALLEL_UNMODELLED,
                         data_parallel_since=DATA_PARALLEL_SINCE,
                         split_tables_before=SIGLIP_TABLE_SPLIT)  # fmt: skip


def check(model: ModelSpec, settings: LaunchSettings, version: ResolvedVersion) -> ArchitectureCheck:
    """vLLM's verdict on the model's class at `version`: these lists at the releases they were read (with their
    transformers), class_releases.py (every wheel 0.6.0 … 0.34.0) at the others."""
    custom_code = bool(model.auto_map_models)
    found = TABLE.check_class(model.architecture, version, custom_code=custom_code)
    if found.state != "not_checked":
        return found
    by_wheel = first_release_check(model.architecture, version, custom_code=custom_code)
    if by_wheel is not None or not model.architecture[:1].isupper() or TABLE.range_for(version) is not None:
        return by_wheel or found
    return found.model_copy(update={"message": _not_decided(model.architecture, version)})


def _not_decided(architecture: str, version: ResolvedVersion) -> str:
    """What kvtop read where neither the lists nor class_releases.py decide, instead of the lists' releases alone."""
    head = f"whether vLLM {version.label} registers {architecture} is not checked: "
    if version.release is None or version.release not in READ:
        wheels = f"every vLLM wheel {READ_FIRST} … {READ_LAST}"
        return head + f"kvtop read the registry of {wheels} (class_releases.py), not this release's"
    return head + (
        f"no vLLM wheel {READ_FIRST} … {READ_LAST} registers it (class_releases.py); from {FALLBACK_FIRST} its "
        "Transformers backend may serve it with the transformers installed"
    )
